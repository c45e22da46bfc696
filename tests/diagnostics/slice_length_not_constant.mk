// A slice length must be a compile-time integer; 'n' is a runtime scalar.
op head<N>(x: f32[N], n: i32) -> y: f32
  tasks t in 1
{
  store y = sum(load x[0 : +n]);
}

// CHECK:EXIT: 1
// CHECK: slice_length_not_constant.mk:5:29: error: slice length must be a compile-time integer (tile shapes are static); this is a runtime value [E0502]
// CHECK:     5 |   store y = sum(load x[0 : +n]);
// CHECK:       |                             ^
