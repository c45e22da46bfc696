// A scalar parameter cannot have a layout.
op shift<N>(x: f32[N], pos: i32 row_major) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N] + (pos as f32);
}
