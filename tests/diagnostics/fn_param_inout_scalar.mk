// inout on a scalar fn parameter.
fn run(pos: inout i32) {
}

// CHECK:EXIT: 1
// CHECK: fn_param_inout_scalar.mk:2:8: error: inout applies to tensors; 'pos' is a scalar [E0529]
// CHECK:     2 | fn run(pos: inout i32) {
// CHECK:       |        ^~~~~~~~~~~~~~
