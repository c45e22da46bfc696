// mma takes two 2-D tiles; a vector times a matrix is coldot (or rowdot for the transposed form).
op prod<K, N>(a: bf16[K], b: bf16[K, N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = mma(load a[0 : +K], load b[0 : +K, 0 : +N]);
}

// CHECK:EXIT: 1
// CHECK: mma_operand_rank.mk:5:25: error: 'mma' needs a 2-D float tile, found bf16[K] [E0519]
// CHECK:     5 |   store y[0 : +N] = mma(load a[0 : +K], load b[0 : +K, 0 : +N]);
// CHECK:       |                         ^~~~~~~~~~~~~~
