// A var in an op body is a tile: it has no layout.
op copy<N>(x: f32[16, N]) -> y: f32[16, N]
  tasks t in 1
{
  var v: f32[16, N] col_major = load x[0 : +16, 0 : +N];
  store y[0 : +16, 0 : +N] = v;
}

// CHECK:EXIT: 1
// CHECK: layout_on_tile_var.mk:5:21: error: tile values have no layout; layouts describe tensors in memory [E0409]
// CHECK:     5 |   var v: f32[16, N] col_major = load x[0 : +16, 0 : +N];
// CHECK:       |                     ^~~~~~~~~
