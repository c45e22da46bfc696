// Both operands of mma_nt have one float dtype: an f32 activation is cast to bf16 first.
op proj<T, D, N>(x: f32[T, D], w: bf16[N, D]) -> y: f32[T, N]
  tasks t in 1
{
  store y[0 : +T, 0 : +N] = mma_nt(load x[0 : +T, 0 : +D], load w[0 : +N, 0 : +D]);
}

// CHECK:EXIT: 1
// CHECK: mma_dtype_mismatch.mk:5:29: error: dtype mismatch in 'mma_nt': f32[T, D] and bf16[N, D]; convert one side with `as` [E0304]
// CHECK:     5 |   store y[0 : +T, 0 : +N] = mma_nt(load x[0 : +T, 0 : +D], load w[0 : +N, 0 : +D]);
// CHECK:       |                             ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
