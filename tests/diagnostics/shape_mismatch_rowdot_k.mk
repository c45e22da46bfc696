// rowdot(A[M, K], x[K]): the vector has N elements where A has K columns.
op project<N, K, R = 16>(w: bf16[N, K] tiled(R, K), x: bf16[N]) -> y: f32[N]
  tasks t in N / R
{
  let a = load w[t * R : +R, 0 : +K];
  let v = load x[0 : +N];
  store y[t * R : +R] = rowdot(a, v);
}

// CHECK:EXIT: 1
// CHECK: shape_mismatch_rowdot_k.mk:7:25: error: shape mismatch in 'rowdot': bf16[R, K] and bf16[N] [E0305]
// CHECK:     7 |   store y[t * R : +R] = rowdot(a, v);
// CHECK:       |                         ^~~~~~~~~~~~
// CHECK: shape_mismatch_rowdot_k.mk:5:35: note: shape [R, K] comes from here
// CHECK:     5 |   let a = load w[t * R : +R, 0 : +K];
// CHECK:       |                                   ^
// CHECK: shape_mismatch_rowdot_k.mk:6:23: note: shape [N] comes from here
// CHECK:     6 |   let v = load x[0 : +N];
// CHECK:       |                       ^
