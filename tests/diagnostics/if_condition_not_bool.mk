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

// CHECK:EXIT: 1
// CHECK: if_condition_not_bool.mk:6:6: error: an if condition must be a bool, found f32 [E0309]
// CHECK:     6 |   if s - limit {
// CHECK:       |      ^~~~~~~~~
