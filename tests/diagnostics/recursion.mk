op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// A fn that calls itself never unrolls to a finite graph.
fn deep(x: f32[8]) -> f32[8] {
  let y = deep(x);
  return y;
}

// CHECK:EXIT: 1
// CHECK: recursion.mk:9:11: error: 'deep' calls itself; the step must unroll to a finite graph [E0561]
// CHECK:     9 |   let y = deep(x);
// CHECK:       |           ^~~~
