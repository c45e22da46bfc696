// Two task grid dimensions with the same variable name.
op fill<H, S>(x: f32[H, S]) -> y: f32[H, S]
  tasks t in H, t in S
{
  store y[t, t] = load x[t, t];
}

// CHECK:EXIT: 1
// CHECK: task_duplicate_var.mk:3:17: error: 't' is already defined [E0107]
// CHECK:     3 |   tasks t in H, t in S
// CHECK:       |                 ^
// CHECK: task_duplicate_var.mk:3:9: note: previous definition is here
// CHECK:     3 |   tasks t in H, t in S
// CHECK:       |         ^
