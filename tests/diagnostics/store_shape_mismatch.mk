// The stored tile has shape [K] but the region has shape [R].
op copy_rows<N, K, R = 16>(w: f32[N, K]) -> y: f32[N]
  tasks t in N / R
{
  let row = load w[t, 0 : +K];
  store y[t * R : +R] = row;
}

// CHECK:EXIT: 1
// CHECK: store_shape_mismatch.mk:6:25: error: storing a value of shape [K] into region [R] of 'y' [E0512]
// CHECK:     6 |   store y[t * R : +R] = row;
// CHECK:       |                         ^~~
// CHECK: store_shape_mismatch.mk:5:28: note: shape [K] comes from here
// CHECK:     5 |   let row = load w[t, 0 : +K];
// CHECK:       |                            ^
