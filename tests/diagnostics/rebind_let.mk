op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// A let cannot be rebound; declare it with var.
fn run(x: f32[8]) -> f32[8] {
  let y = copy(x);
  y = copy(y);
  return y;
}

// CHECK:EXIT: 1
// CHECK: rebind_let.mk:10:3: error: cannot assign to 'y': it is a let binding; declare it with var to rebind it [E0520]
// CHECK:    10 |   y = copy(y);
// CHECK:       |   ^
// CHECK: rebind_let.mk:9:7: note: 'y' is declared here
// CHECK:     9 |   let y = copy(x);
// CHECK:       |       ^
