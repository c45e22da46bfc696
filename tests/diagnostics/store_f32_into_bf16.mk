// Storing an f32 tile into a bf16 result needs `as bf16`.
op widen<N>(x: bf16[N]) -> y: bf16[N]
  tasks t in 1
{
  let v = load x[0 : +N] as f32;
  store y[0 : +N] = v * 2.0;
}

// CHECK:EXIT: 1
// CHECK: store_f32_into_bf16.mk:6:21: error: storing f32[N] into bf16 tensor 'y'; convert with `as bf16` [E0511]
// CHECK:     6 |   store y[0 : +N] = v * 2.0;
// CHECK:       |                     ^~~~~~~
