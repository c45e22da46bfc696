// A compile-time product that does not fit in 64 bits.
const big = 4_000_000_000;
const bigger = big * big;

// CHECK:EXIT: 1
// CHECK: int_overflow.mk:3:16: error: integer overflow in a compile-time expression [E0204]
// CHECK:     3 | const bigger = big * big;
// CHECK:       |                ^~~~~~~~~
