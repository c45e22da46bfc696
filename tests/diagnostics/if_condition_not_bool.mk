// An `if` condition in an op must be a bool, not an f32.
op clamp<N>(x: f32[N], limit: f32) -> y: f32
  tasks t in 1
{
  let s = sum(load x[0 : +N]);
  if s - limit {
    store y = limit;
  } else {
    store y = s;
  }
}
