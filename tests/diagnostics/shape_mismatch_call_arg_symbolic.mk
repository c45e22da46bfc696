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
