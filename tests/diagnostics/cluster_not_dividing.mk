// The cluster size must divide the number of tasks (6 tasks, clusters of 4).
@cluster(4)
op fill(x: f32[6]) -> y: f32[6]
  tasks t in 6
{
  store y[t] = load x[t];
}

// CHECK:EXIT: 1
// CHECK: cluster_not_dividing.mk:2:1: error: cluster size 4 does not divide the 6 tasks of 'fill' [E0607]
// CHECK:     2 | @cluster(4)
// CHECK:       | ^~~~~~~~~~~
