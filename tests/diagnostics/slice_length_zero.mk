// A slice length must be positive.
op head<N>(x: f32[N]) -> y: f32
  tasks t in 1
{
  store y = sum(load x[0 : +0]);
}

// CHECK:EXIT: 1
// CHECK: slice_length_zero.mk:5:29: error: slice length must be positive, found 0 [E0503]
// CHECK:     5 |   store y = sum(load x[0 : +0]);
// CHECK:       |                             ^
