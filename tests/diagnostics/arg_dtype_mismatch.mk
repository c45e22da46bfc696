// An f32 vector passed where the op takes bf16.
op double<N>(x: bf16[N]) -> y: bf16[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N] * 2;
}

fn run(x: f32[64]) -> bf16[64] {
  let y = double(x);
  return y;
}

// CHECK:EXIT: 1
// CHECK: arg_dtype_mismatch.mk:9:18: error: argument 'x' of 'double' must be bf16[64], found f32[64] [E0557]
// CHECK:     9 |   let y = double(x);
// CHECK:       |                  ^
// CHECK: arg_dtype_mismatch.mk:2:14: note: parameter 'x' is declared here
// CHECK:     2 | op double<N>(x: bf16[N]) -> y: bf16[N]
// CHECK:       |              ^~~~~~~~~~
