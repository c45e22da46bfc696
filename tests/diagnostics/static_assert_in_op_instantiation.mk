// A static_assert inside an op is checked per instantiation, with that call's values.
op chunked_sum<N, C = 64>(x: f32[N]) -> s: f32
  tasks t in 1
{
  static_assert(N % C == 0, "chunked_sum: C must divide N");
  var acc: f32;
  for k in 0 .. N by C {
    acc += sum(load x[k : +C]);
  }
  store s = acc;
}

step decode(x: f32[100]) -> (total: f32) {
  let s = chunked_sum(x);
  return s;
}

// CHECK:EXIT: 1
// CHECK: static_assert_in_op_instantiation.mk:5:3: error: static assertion failed: chunked_sum: C must divide N [E0211]
// CHECK:     5 |   static_assert(N % C == 0, "chunked_sum: C must divide N");
// CHECK:       |   ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// CHECK: static_assert_in_op_instantiation.mk:14:11: note: in 'chunked_sum' with C = 64, N = 100, called from here
// CHECK:    14 |   let s = chunked_sum(x);
// CHECK:       |           ^~~~~~~~~~~~~~
