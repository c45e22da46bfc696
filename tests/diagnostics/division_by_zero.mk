// Integer division by a compile-time zero.
const hidden = 64;
const heads = 0;
const head_dim = hidden / heads;

// CHECK:EXIT: 1
// CHECK: division_by_zero.mk:4:18: error: division by zero in a compile-time expression [E0203]
// CHECK:     4 | const head_dim = hidden / heads;
// CHECK:       |                  ^~~~~~~~~~~~~~
