// An op and a fn with the same name.
op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

fn copy(x: f32[8]) -> f32[8] {
  return x;
}
