// rowdot(A[M, K], x[K]): the vector has N elements where A has K columns.
op project<N, K, R = 16>(w: bf16[N, K] tiled(R, K), x: bf16[N]) -> y: f32[N]
  tasks t in N / R
{
  let a = load w[t * R : +R, 0 : +K];
  let v = load x[0 : +N];
  store y[t * R : +R] = rowdot(a, v);
}
