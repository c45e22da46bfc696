// Two parameters of one op with the same name.
op add<N>(x: f32[N], x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}
