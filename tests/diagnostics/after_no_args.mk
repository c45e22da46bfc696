op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// @after needs at least one tensor.
fn run(x: f32[8]) -> f32[8] {
  @after() let b = copy(x);
  return b;
}

// CHECK:EXIT: 1
// CHECK: after_no_args.mk:9:3: error: '@after' needs at least one tensor to wait for [E0604]
// CHECK:     9 |   @after() let b = copy(x);
// CHECK:       |   ^~~~~~~~
