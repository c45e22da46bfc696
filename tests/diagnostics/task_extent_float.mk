// A task grid extent must be an integer.
op fill<N>(x: f32[N]) -> y: f32[N]
  tasks t in 2.5
{
  store y[t] = load x[t];
}

// CHECK:EXIT: 1
// CHECK: task_extent_float.mk:3:14: error: task grid extent of 't' must be a positive compile-time integer; found compile-time float [E0521]
// CHECK:     3 |   tasks t in 2.5
// CHECK:       |              ^~~
