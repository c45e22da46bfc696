op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

step decode(x: f32[8]) -> (y: f32[8]) {
  let y = copy(x);
  return y;
}

// Each step is an entry of the kernel: two of one name would be one entry twice.
step decode(x: f32[8]) -> (y: f32[8]) {
  let y = copy(x);
  return y;
}

// CHECK:EXIT: 1
// CHECK: duplicate_step.mk:13:6: error: 'decode' is already defined [E0107]
// CHECK:    13 | step decode(x: f32[8]) -> (y: f32[8]) {
// CHECK:       |      ^~~~~~
// CHECK: duplicate_step.mk:7:6: note: previous definition is here
// CHECK:     7 | step decode(x: f32[8]) -> (y: f32[8]) {
// CHECK:       |      ^~~~~~
