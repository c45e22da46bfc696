// Storing an f32 tile into a bf16 result needs `as bf16`.
op widen<N>(x: bf16[N]) -> y: bf16[N]
  tasks t in 1
{
  let v = load x[0 : +N] as f32;
  store y[0 : +N] = v * 2.0;
}
