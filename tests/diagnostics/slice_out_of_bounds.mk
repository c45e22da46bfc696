// A static slice past the end of the tensor.
op tail(x: f32[64]) -> y: f32[32]
  tasks t in 1
{
  store y[0 : +32] = load x[48 : +32];
}

// CHECK:EXIT: 1
// CHECK: slice_out_of_bounds.mk:5:29: error: region [48 : +32] is out of bounds for dimension 0 of 'x' (size 64) [E0504]
// CHECK:     5 |   store y[0 : +32] = load x[48 : +32];
// CHECK:       |                             ^~~~~~~~
// CHECK: slice_out_of_bounds.mk:2:16: note: shape [64] comes from here
// CHECK:     2 | op tail(x: f32[64]) -> y: f32[32]
// CHECK:       |                ^~
