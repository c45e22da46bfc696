// An op must declare its task grid after its results.
op copy<N>(x: f32[N]) -> y: f32[N]
{
  store y[0 : +N] = load x[0 : +N];
}
