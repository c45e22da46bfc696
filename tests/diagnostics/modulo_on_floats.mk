// `%` takes integers, not floats.
op wrap<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  let v = load x[0 : +N];
  store y[0 : +N] = v % 2.0;
}
