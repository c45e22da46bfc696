// Elementwise arithmetic on tiles of shapes [R] and [K].
op mix<N, K, R = 16>(a: f32[N], b: f32[K]) -> y: f32[N]
  tasks t in N / R
{
  let va = load a[t * R : +R];
  let vb = load b[0 : +K];
  store y[t * R : +R] = va * vb;
}

// CHECK:EXIT: 1
// CHECK: shape_mismatch_elementwise.mk:7:28: error: shape mismatch in '*': f32[R] and f32[K] [E0305]
// CHECK:     7 |   store y[t * R : +R] = va * vb;
// CHECK:       |                            ^
// CHECK: shape_mismatch_elementwise.mk:5:28: note: shape [R] comes from here
// CHECK:     5 |   let va = load a[t * R : +R];
// CHECK:       |                            ^
// CHECK: shape_mismatch_elementwise.mk:6:24: note: shape [K] comes from here
// CHECK:     6 |   let vb = load b[0 : +K];
// CHECK:       |                        ^
