// An unknown name inside an op body, close to a parameter name.
op scale<N>(x: f32[N], factor: f32) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N] * facter;
}
