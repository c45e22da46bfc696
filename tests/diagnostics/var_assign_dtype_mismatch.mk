// Accumulating a bf16 tile into an f32 var.
op accumulate<N, C = 16>(x: bf16[N]) -> y: f32[C]
  tasks t in 1
{
  var acc: f32[C];
  for k in 0 .. N by C {
    acc += load x[k : +C];
  }
  store y[0 : +C] = acc;
}

// CHECK:EXIT: 1
// CHECK: var_assign_dtype_mismatch.mk:7:12: error: cannot assign bf16[C] to 'acc' of type f32[C] [E0312]
// CHECK:     7 |     acc += load x[k : +C];
// CHECK:       |            ^~~~~~~~~~~~~~
