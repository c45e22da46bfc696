op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// The step must end with return.
step decode(x: f32[8]) -> (y: f32[8]) {
  let y = copy(x);
}

// CHECK:EXIT: 1
// CHECK: step_missing_return.mk:8:6: error: 'decode' must end with `return` [E0708]
// CHECK:     8 | step decode(x: f32[8]) -> (y: f32[8]) {
// CHECK:       |      ^~~~~~
