// Elementwise arithmetic on tiles of shapes [R] and [K].
op mix<N, K, R = 16>(a: f32[N], b: f32[K]) -> y: f32[N]
  tasks t in N / R
{
  let va = load a[t * R : +R];
  let vb = load b[0 : +K];
  store y[t * R : +R] = va * vb;
}
