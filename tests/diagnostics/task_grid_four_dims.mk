// A task grid has at most 3 dimensions.
op fill4(x: f32[2, 2, 2, 2]) -> y: f32[2, 2, 2, 2]
  tasks a in 2, b in 2, c in 2, d in 2
{
  store y[a, b, c, d] = load x[a, b, c, d];
}

// CHECK:EXIT: 1
// CHECK: task_grid_four_dims.mk:3:33: error: a task grid has at most 3 dimensions, found 4 [E0522]
// CHECK:     3 |   tasks a in 2, b in 2, c in 2, d in 2
// CHECK:       |                                 ^~~~~~
