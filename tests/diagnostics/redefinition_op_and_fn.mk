// An op and a fn with the same name.
op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

fn copy(x: f32[8]) -> f32[8] {
  return x;
}

// CHECK:EXIT: 1
// CHECK: redefinition_op_and_fn.mk:8:4: error: 'copy' is already defined [E0107]
// CHECK:     8 | fn copy(x: f32[8]) -> f32[8] {
// CHECK:       |    ^~~~
// CHECK: redefinition_op_and_fn.mk:2:4: note: previous definition is here
// CHECK:     2 | op copy<N>(x: f32[N]) -> y: f32[N]
// CHECK:       |    ^~~~
