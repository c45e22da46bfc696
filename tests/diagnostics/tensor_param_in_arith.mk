// A tensor parameter is memory; arithmetic needs a loaded tile.
op double<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = x * 2.0;
}

// CHECK:EXIT: 1
// CHECK: tensor_param_in_arith.mk:5:21: error: 'x' is a tensor in memory; load a region of it first [E0513]
// CHECK:     5 |   store y[0 : +N] = x * 2.0;
// CHECK:       |                     ^
