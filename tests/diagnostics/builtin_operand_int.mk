// exp needs a float operand, not an i32 tile.
op bad_exp<N>(x: i32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = exp(load x[0 : +N]);
}

// CHECK:EXIT: 1
// CHECK: builtin_operand_int.mk:5:25: error: 'exp' needs a float scalar or tile, found i32[N] [E0519]
// CHECK:     5 |   store y[0 : +N] = exp(load x[0 : +N]);
// CHECK:       |                         ^~~~~~~~~~~~~~
