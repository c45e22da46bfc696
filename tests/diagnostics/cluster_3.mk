// A cluster size must be a power of two from 1 to 8.
@cluster(3)
op fill(x: f32[6]) -> y: f32[6]
  tasks t in 6
{
  store y[t] = load x[t];
}

// CHECK:EXIT: 1
// CHECK: cluster_3.mk:2:10: error: '@cluster' needs one compile-time integer: a power of two from 1 to 8; found 3 [E0606]
// CHECK:     2 | @cluster(3)
// CHECK:       |          ^
