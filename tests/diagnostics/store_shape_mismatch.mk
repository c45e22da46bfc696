// The stored tile has shape [K] but the region has shape [R].
op copy_rows<N, K, R = 16>(w: f32[N, K]) -> y: f32[N]
  tasks t in N / R
{
  let row = load w[t, 0 : +K];
  store y[t * R : +R] = row;
}
