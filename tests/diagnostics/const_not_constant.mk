op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// A const needs a compile-time value; 'pos' is a runtime step input.
fn run(x: f32[8], pos: i32) -> f32[8] {
  const start = pos * 2;
  let y = copy(x);
  return y;
}

// CHECK:EXIT: 1
// CHECK: const_not_constant.mk:9:17: error: constant 'start' must be a compile-time value; '*' is computed at run time [E0216]
// CHECK:     9 |   const start = pos * 2;
// CHECK:       |                 ^~~~~~~
