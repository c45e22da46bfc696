op widen<N>(x: bf16[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N] as f32;
}

// Step inputs are i32 scalars or i32/f32 tensors; bf16 is not one.
step decode(x: bf16[8]) -> (y: f32[8]) {
  let y = widen(x);
  return y;
}

// CHECK:EXIT: 1
// CHECK: step_input_bf16.mk:8:16: error: step input 'x' must be i32 or a tensor of i32 or f32, found bf16[8] [E0702]
// CHECK:     8 | step decode(x: bf16[8]) -> (y: f32[8]) {
// CHECK:       |                ^~~~~~~
