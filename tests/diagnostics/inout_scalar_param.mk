// inout applies to tensors, not scalars.
op bump(counter: inout i32) -> y: i32
  tasks t in 1
{
  store y = counter + 1;
}

// CHECK:EXIT: 1
// CHECK: inout_scalar_param.mk:2:9: error: inout applies to tensors; 'counter' is a scalar [E0529]
// CHECK:     2 | op bump(counter: inout i32) -> y: i32
// CHECK:       |         ^~~~~~~~~~~~~~~~~~
