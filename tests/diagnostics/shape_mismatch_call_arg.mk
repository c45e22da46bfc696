// The vector passed as x has 512 elements; K = 256 was inferred from the weight.
op matvec<N, K, R = 16>(w: bf16[N, K] tiled(R, K), x: bf16[K]) -> y: f32[N]
  tasks t in N / R
{
  store y[t * R : +R] = rowdot(load w[t * R : +R, 0 : +K], load x[0 : +K]);
}

weight proj: bf16[128, 256] tiled(16, 256) = "proj.weight";

fn apply(x: bf16[512]) -> f32[128] {
  let y = matvec(proj, x);
  return y;
}

// CHECK:EXIT: 1
// CHECK: shape_mismatch_call_arg.mk:11:24: error: shape mismatch for argument 'x' of 'matvec': expected [256], found [512] [E0558]
// CHECK:    11 |   let y = matvec(proj, x);
// CHECK:       |                        ^
// CHECK: shape_mismatch_call_arg.mk:2:52: note: parameter 'x' is declared here
// CHECK:     2 | op matvec<N, K, R = 16>(w: bf16[N, K] tiled(R, K), x: bf16[K]) -> y: f32[N]
// CHECK:       |                                                    ^~~~~~~~~~
// CHECK: shape_mismatch_call_arg.mk:11:18: note: 'K' = 256 was inferred from this argument
// CHECK:    11 |   let y = matvec(proj, x);
// CHECK:       |                  ^~~~
// CHECK: shape_mismatch_call_arg.mk:10:18: note: shape [512] comes from here
// CHECK:    10 | fn apply(x: bf16[512]) -> f32[128] {
// CHECK:       |                  ^~~
