// mma_nt(a[M, K], b[N, K]) contracts the last dimension of both: here 32 and 16.
op scores<T>(q: bf16[T, 32], k: bf16[T, 16]) -> s: f32[T, T]
  tasks t in 1
{
  store s[0 : +T, 0 : +T] = mma_nt(load q[0 : +T, 0 : +32], load k[0 : +T, 0 : +16]);
}

// CHECK:EXIT: 1
// CHECK: mma_nt_inner_dims.mk:5:29: error: 'mma_nt' of bf16[T, 32] and bf16[T, 16]: the contracted dimensions 32 and 16 differ [E0314]
// CHECK:     5 |   store s[0 : +T, 0 : +T] = mma_nt(load q[0 : +T, 0 : +32], load k[0 : +T, 0 : +16]);
// CHECK:       |                             ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// CHECK: mma_nt_inner_dims.mk:5:56: note: shape [T, 32] comes from here
// CHECK:     5 |   store s[0 : +T, 0 : +T] = mma_nt(load q[0 : +T, 0 : +32], load k[0 : +T, 0 : +16]);
// CHECK:       |                                                        ^~
// CHECK: mma_nt_inner_dims.mk:5:81: note: shape [T, 16] comes from here
// CHECK:     5 |   store s[0 : +T, 0 : +T] = mma_nt(load q[0 : +T, 0 : +32], load k[0 : +T, 0 : +16]);
// CHECK:       |                                                                                 ^~
