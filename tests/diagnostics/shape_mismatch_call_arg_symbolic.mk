// Inside a generic fn the mismatch is between symbolic dims: x is [D], w expects [K] = [2 * D].
op matvec<N, K, R = 16>(w: bf16[N, K] tiled(R, K), x: bf16[K]) -> y: f32[N]
  tasks t in N / R
{
  store y[t * R : +R] = rowdot(load w[t * R : +R, 0 : +K], load x[0 : +K]);
}

fn apply<D>(w: bf16[D, 2 * D] tiled(16, 2 * D), x: bf16[D]) -> f32[D] {
  let y = matvec(w, x);
  return y;
}

// CHECK:EXIT: 1
// CHECK: shape_mismatch_call_arg_symbolic.mk:9:21: error: shape mismatch for argument 'x' of 'matvec': expected [2 * D], found [D] [E0558]
// CHECK:     9 |   let y = matvec(w, x);
// CHECK:       |                     ^
// CHECK: shape_mismatch_call_arg_symbolic.mk:2:52: note: parameter 'x' is declared here
// CHECK:     2 | op matvec<N, K, R = 16>(w: bf16[N, K] tiled(R, K), x: bf16[K]) -> y: f32[N]
// CHECK:       |                                                    ^~~~~~~~~~
// CHECK: shape_mismatch_call_arg_symbolic.mk:9:18: note: 'K' = 2 * D was inferred from this argument
// CHECK:     9 |   let y = matvec(w, x);
// CHECK:       |                  ^
// CHECK: shape_mismatch_call_arg_symbolic.mk:8:57: note: shape [D] comes from here
// CHECK:     8 | fn apply<D>(w: bf16[D, 2 * D] tiled(16, 2 * D), x: bf16[D]) -> f32[D] {
// CHECK:       |                                                         ^
