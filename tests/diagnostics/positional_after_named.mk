op scale<N, s: float = 1.0>(x: f32[N], b: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N] * s + load b[0 : +N];
}

// A positional argument after a named one.
fn run(x: f32[8], b: f32[8]) -> f32[8] {
  let y = scale(x, s = 2.0, b);
  return y;
}

// CHECK:EXIT: 1
// CHECK: positional_after_named.mk:9:29: error: positional argument after a named one [E0554]
// CHECK:     9 |   let y = scale(x, s = 2.0, b);
// CHECK:       |                             ^
