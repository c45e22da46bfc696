// An op must declare its task grid after its results.
op copy<N>(x: f32[N]) -> y: f32[N]
{
  store y[0 : +N] = load x[0 : +N];
}

// CHECK:EXIT: 1
// CHECK: missing_op_tasks.mk:3:1: error: expected 'tasks', found '{' [E0005]
// CHECK:     3 | {
// CHECK:       | ^
