op scale<N, s: float = 1.0>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N] * s;
}

// The generic 's' is given twice.
fn run(x: f32[8]) -> f32[8] {
  let y = scale(x, s = 2.0, s = 3.0);
  return y;
}

// CHECK:EXIT: 1
// CHECK: call_duplicate_named_generic.mk:9:29: error: generic parameter 's' is given twice [E0553]
// CHECK:     9 |   let y = scale(x, s = 2.0, s = 3.0);
// CHECK:       |                             ^
// CHECK: call_duplicate_named_generic.mk:9:24: note: previous definition is here
// CHECK:     9 |   let y = scale(x, s = 2.0, s = 3.0);
// CHECK:       |                        ^~~
