// N / R must divide exactly: with N = 100 and R = 16 it does not.
op matvec<N, K, R = 16>(w: bf16[N, K], x: bf16[K]) -> y: f32[N]
  tasks t in N / R
{
  store y[t * R : +R] = rowdot(load w[t * R : +R, 0 : +K], load x[0 : +K]);
}

weight proj: bf16[100, 64] = "proj.weight";

fn apply(x: bf16[64]) -> f32[100] {
  let y = matvec(proj, x);
  return y;
}

// CHECK:EXIT: 1
// CHECK: task_grid_inexact.mk:3:14: error: task grid N / R = 100 / 16 is not exact: 100 is not a multiple of 16 [E0523]
// CHECK:     3 |   tasks t in N / R
// CHECK:       |              ^~~~~
// CHECK: task_grid_inexact.mk:11:11: note: in 'matvec' with K = 64, N = 100, R = 16, called from here
// CHECK:    11 |   let y = matvec(proj, x);
// CHECK:       |           ^~~~~~~~~~~~~~~
