// row_sum reduces each row of a 2-D tile; a 1-D tile has no rows (sum reduces it whole).
op total<N>(x: f32[N]) -> y: f32[1]
  tasks t in 1
{
  store y[0 : +1] = row_sum(load x[0 : +N]);
}

// CHECK:EXIT: 1
// CHECK: row_reduce_rank.mk:5:29: error: 'row_sum' needs a 2-D numeric tile, found f32[N] [E0519]
// CHECK:     5 |   store y[0 : +1] = row_sum(load x[0 : +N]);
// CHECK:       |                             ^~~~~~~~~~~~~~
