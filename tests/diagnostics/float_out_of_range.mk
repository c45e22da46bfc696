// A float literal beyond the range of a double.
const huge = 1e999;

// CHECK:EXIT: 1
// CHECK: float_out_of_range.mk:2:14: error: float literal '1e999' is out of range [E0007]
// CHECK:     2 | const huge = 1e999;
// CHECK:       |              ^~~~~
