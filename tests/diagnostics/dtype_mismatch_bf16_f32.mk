// Adding a bf16 tile to an f32 tile needs an explicit cast.
op add<N>(a: bf16[N], b: f32[N]) -> y: f32[N]
  tasks t in 1
{
  let va = load a[0 : +N];
  let vb = load b[0 : +N];
  store y[0 : +N] = va + vb;
}

// CHECK:EXIT: 1
// CHECK: dtype_mismatch_bf16_f32.mk:7:24: error: dtype mismatch in '+': bf16[N] and f32[N]; convert one side with `as` [E0304]
// CHECK:     7 |   store y[0 : +N] = va + vb;
// CHECK:       |                        ^
