// A runtime loop's step must be a positive compile-time integer.
op strided_sum<N>(x: f32[N], stride: i32) -> y: f32
  tasks t in 1
{
  var acc: f32;
  for k in 0 .. N by stride {
    acc += load x[k];
  }
  store y = acc;
}

// CHECK:EXIT: 1
// CHECK: op_loop_step_not_constant.mk:6:22: error: loop step must be a positive compile-time integer; this is a runtime value [E0525]
// CHECK:     6 |   for k in 0 .. N by stride {
// CHECK:       |                      ^~~~~~
