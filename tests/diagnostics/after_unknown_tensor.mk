op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// @after names a tensor that does not exist.
fn run(x: f32[8]) -> f32[8] {
  let a = copy(x);
  @after(aa) let b = copy(a);
  return b;
}

// CHECK:EXIT: 1
// CHECK: after_unknown_tensor.mk:10:10: error: unknown name 'aa'; did you mean 'a'? [E0108]
// CHECK:    10 |   @after(aa) let b = copy(a);
// CHECK:       |          ^~
