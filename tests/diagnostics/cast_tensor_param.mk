// A tensor parameter is memory, not a value: load it before casting.
op widen<N>(x: bf16[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = x as f32;
}

// CHECK:EXIT: 1
// CHECK: cast_tensor_param.mk:5:21: error: cannot cast tensor 'x'; cast values, e.g. `load t[...] as f32` [E0311]
// CHECK:     5 |   store y[0 : +N] = x as f32;
// CHECK:       |                     ^
