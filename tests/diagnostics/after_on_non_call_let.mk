op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// @after goes on a call; this let binds a constant.
fn run(x: f32[8]) -> f32[8] {
  let a = copy(x);
  @after(a) let n = 4;
  let b = copy(a);
  return b;
}

// CHECK:EXIT: 1
// CHECK: after_on_non_call_let.mk:10:3: error: '@after' applies to an op or fn call [E0602]
// CHECK:    10 |   @after(a) let n = 4;
// CHECK:       |   ^~~~~~~~~
