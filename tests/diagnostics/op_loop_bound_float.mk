// A runtime loop bound must be an integer.
op total<N>(x: f32[N]) -> s: f32
  tasks t in 1
{
  var acc: f32;
  for k in 0 .. 2.5 {
    acc += load x[k];
  }
  store s = acc;
}

// CHECK:EXIT: 1
// CHECK: op_loop_bound_float.mk:6:17: error: loop bound must be an integer, found compile-time float [E0526]
// CHECK:     6 |   for k in 0 .. 2.5 {
// CHECK:       |                 ^~~
