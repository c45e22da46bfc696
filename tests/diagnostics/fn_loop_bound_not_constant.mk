op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// Loops in fns are unrolled: the bound must be compile-time.
fn run(x: f32[8], n: i32) -> f32[8] {
  var y: f32[8] = copy(x);
  for l in 0 .. n {
    y = copy(y);
  }
  return y;
}

// CHECK:EXIT: 1
// CHECK: fn_loop_bound_not_constant.mk:10:17: error: loops in fns and the step are unrolled at compile time; this bound is a runtime value [E0712]
// CHECK:    10 |   for l in 0 .. n {
// CHECK:       |                 ^
