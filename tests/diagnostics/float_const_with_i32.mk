// A compile-time float cannot be combined with an i32 tile.
op halve<N>(x: i32[N]) -> y: i32[N]
  tasks t in 1
{
  let v = load x[0 : +N];
  store y[0 : +N] = v * 0.5;
}
