// An op body has no return; results are written with store.
op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  return load x[0 : +N];
}

// CHECK:EXIT: 1
// CHECK: return_in_op.mk:5:3: error: return (ops write their results with `store`) is not allowed inside an op body [E0527]
// CHECK:     5 |   return load x[0 : +N];
// CHECK:       |   ^~~~~~~~~~~~~~~~~~~~~~
