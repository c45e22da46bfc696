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

// CHECK:EXIT: 1
// CHECK: layout_mismatch_at_call.mk:11:18: error: layout mismatch for argument 'w' of 'matvec': expected tiled(16, 256), found row_major [E0559]
// CHECK:    11 |   let y = matvec(proj, x);
// CHECK:       |                  ^~~~
// CHECK: layout_mismatch_at_call.mk:2:25: note: parameter 'w' is declared here
// CHECK:     2 | op matvec<N, K, R = 16>(w: bf16[N, K] tiled(R, K), x: bf16[K]) -> y: f32[N]
// CHECK:       |                         ^~~~~~~~~~~~~~~~~~~~~~~~~
// CHECK: layout_mismatch_at_call.mk:8:8: note: the layout of 'proj' is declared here
// CHECK:     8 | weight proj: bf16[128, 256] = "proj.weight";
// CHECK:       |        ^~~~
