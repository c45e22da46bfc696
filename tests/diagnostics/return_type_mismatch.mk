op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// The fn declares an f32[16] result but returns f32[8].
fn run(x: f32[8]) -> f32[16] {
  let y = copy(x);
  return y;
}

// CHECK:EXIT: 1
// CHECK: return_type_mismatch.mk:10:10: error: result 1 of 'run' must be f32[16], found f32[8] [E0707]
// CHECK:    10 |   return y;
// CHECK:       |          ^
// CHECK: return_type_mismatch.mk:8:22: note: the result type is declared here
// CHECK:     8 | fn run(x: f32[8]) -> f32[16] {
// CHECK:       |                      ^~~~~~~
