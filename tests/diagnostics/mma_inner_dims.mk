// mma(a[M, K], b[K, N]): b has D rows where a has K columns.
op prod<M, K, D, N>(a: bf16[M, K], b: bf16[D, N]) -> y: f32[M, N]
  tasks t in 1
{
  let x = load a[0 : +M, 0 : +K];
  let w = load b[0 : +D, 0 : +N];
  store y[0 : +M, 0 : +N] = mma(x, w);
}

// CHECK:EXIT: 1
// CHECK: mma_inner_dims.mk:7:29: error: 'mma' of bf16[M, K] and bf16[D, N]: the contracted dimensions K and D differ [E0314]
// CHECK:     7 |   store y[0 : +M, 0 : +N] = mma(x, w);
// CHECK:       |                             ^~~~~~~~~
// CHECK: mma_inner_dims.mk:5:31: note: shape [M, K] comes from here
// CHECK:     5 |   let x = load a[0 : +M, 0 : +K];
// CHECK:       |                               ^
// CHECK: mma_inner_dims.mk:6:23: note: shape [D, N] comes from here
// CHECK:     6 |   let w = load b[0 : +D, 0 : +N];
// CHECK:       |                       ^
