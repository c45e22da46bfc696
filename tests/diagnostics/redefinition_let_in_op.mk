// A let in an op body that reuses the name of an earlier let.
op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  let v = load x[0 : +N];
  let v = v * 2.0;
  store y[0 : +N] = v;
}
