op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

step decode(x: f32[8]) -> (y: f32[8]) {
  let y = copy(x);
  return y;
}

// A program has exactly one step.
step prefill(x: f32[8]) -> (y: f32[8]) {
  let y = copy(x);
  return y;
}

// CHECK:EXIT: 1
// CHECK: two_steps.mk:13:6: error: a program has exactly one step; 'prefill' is a second one [E0701]
// CHECK:    13 | step prefill(x: f32[8]) -> (y: f32[8]) {
// CHECK:       |      ^~~~~~~
// CHECK: two_steps.mk:7:6: note: previous definition is here
// CHECK:     7 | step decode(x: f32[8]) -> (y: f32[8]) {
// CHECK:       |      ^~~~~~
