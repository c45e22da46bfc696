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
