// An integer literal that does not fit in 64 bits.
const big = 99999999999999999999;

// CHECK:EXIT: 1
// CHECK: integer_too_large.mk:2:13: error: integer literal '99999999999999999999' does not fit in 64 bits [E0006]
// CHECK:     2 | const big = 99999999999999999999;
// CHECK:       |             ^~~~~~~~~~~~~~~~~~~~
