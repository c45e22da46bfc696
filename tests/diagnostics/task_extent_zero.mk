// A task grid extent must be positive.
const parts = 0;

op fill<N>(x: f32[N]) -> y: f32[N]
  tasks t in parts
{
  store y[t] = load x[t];
}

// CHECK:EXIT: 1
// CHECK: task_extent_zero.mk:5:14: error: task grid extent of 't' must be a positive compile-time integer; found 0 [E0521]
// CHECK:     5 |   tasks t in parts
// CHECK:       |              ^~~~~
