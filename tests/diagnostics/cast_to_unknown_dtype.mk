// `as` needs a dtype; f64 is not one.
op widen<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  let v = load x[0 : +N] as f64;
  store y[0 : +N] = v;
}
