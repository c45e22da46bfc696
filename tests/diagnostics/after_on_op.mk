// @after belongs on a call in a fn or step, not on an op declaration.
@after(x)
op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// CHECK:EXIT: 1
// CHECK: after_on_op.mk:2:1: error: '@after' applies to a call in a fn or step, not to an op declaration [E0602]
// CHECK:     2 | @after(x)
// CHECK:       | ^~~~~~~~~
