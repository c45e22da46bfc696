// A row-major weight passed where the op expects tiled(R, K).
op matvec<N, K, R = 16>(w: bf16[N, K] tiled(R, K), x: bf16[K]) -> y: f32[N]
  tasks t in N / R
{
  store y[t * R : +R] = rowdot(load w[t * R : +R, 0 : +K], load x[0 : +K]);
}

weight proj: bf16[128, 256] = "proj.weight";

fn apply(x: bf16[256]) -> f32[128] {
  let y = matvec(proj, x);
  return y;
}
