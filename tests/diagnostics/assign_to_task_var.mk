// A task variable cannot be assigned.
op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  t = 0;
  store y[0 : +N] = load x[0 : +N];
}

// CHECK:EXIT: 1
// CHECK: assign_to_task_var.mk:5:3: error: cannot assign to 't': it is a task index [E0520]
// CHECK:     5 |   t = 0;
// CHECK:       |   ^
// CHECK: assign_to_task_var.mk:3:9: note: 't' is declared here
// CHECK:     3 |   tasks t in 1
// CHECK:       |         ^
