op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// Every step result needs a name.
step decode(x: f32[8]) -> (y: f32[8], f32[8]) {
  let a = copy(x);
  let b = copy(x);
  return (a, b);
}

// CHECK:EXIT: 1
// CHECK: step_unnamed_result.mk:8:39: error: step result 2 needs a name: `-> (name: type, ...)` [E0704]
// CHECK:     8 | step decode(x: f32[8]) -> (y: f32[8], f32[8]) {
// CHECK:       |                                       ^~~~~~
