// A scalar parameter cannot have a layout.
op shift<N>(x: f32[N], pos: i32 row_major) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N] + (pos as f32);
}

// CHECK:EXIT: 1
// CHECK: layout_on_scalar.mk:2:33: error: a scalar has no layout [E0408]
// CHECK:     2 | op shift<N>(x: f32[N], pos: i32 row_major) -> y: f32[N]
// CHECK:       |                                 ^~~~~~~~~
