// A tensor parameter that is not inout is read-only.
op scale_in_place<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  let v = load x[0 : +N];
  store x[0 : +N] = v * 2.0;
  store y[0 : +N] = v;
}

// CHECK:EXIT: 1
// CHECK: store_to_parameter.mk:6:9: error: cannot store to 'x': parameters are read-only; mark it inout to write it [E0509]
// CHECK:     6 |   store x[0 : +N] = v * 2.0;
// CHECK:       |         ^~~~~~~~~
// CHECK: store_to_parameter.mk:2:22: note: 'x' is declared here
// CHECK:     2 | op scale_in_place<N>(x: f32[N]) -> y: f32[N]
// CHECK:       |                      ^
