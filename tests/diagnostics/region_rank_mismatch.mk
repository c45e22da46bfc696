// 'w' has two dimensions but the region gives one.
op row<N, K>(w: f32[N, K]) -> y: f32[K]
  tasks t in 1
{
  store y[0 : +K] = load w[0 : +K];
}

// CHECK:EXIT: 1
// CHECK: region_rank_mismatch.mk:5:26: error: 'w' has 2 dimensions but the region gives 1 [E0501]
// CHECK:     5 |   store y[0 : +K] = load w[0 : +K];
// CHECK:       |                          ^~~~~~~~~
