// A task grid extent must be compile-time; 'n' is a runtime scalar parameter.
op fill<N>(x: f32[N], n: i32) -> y: f32[N]
  tasks t in n
{
  store y[t] = load x[t];
}

// CHECK:EXIT: 1
// CHECK: task_extent_runtime.mk:3:14: error: task grid extent of 't' must be a positive compile-time integer; this is a runtime value [E0521]
// CHECK:     3 |   tasks t in n
// CHECK:       |              ^
