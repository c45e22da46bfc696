// An op body whose closing '}' is missing: the error is at the end of the file.
op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  let v = load x[0 : +N];
  store y[0 : +N] = v;
