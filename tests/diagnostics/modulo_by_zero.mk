// Integer remainder by a compile-time zero in a static_assert.
const tile = 0;
static_assert(64 % tile == 0, "tile must divide 64");

// CHECK:EXIT: 1
// CHECK: modulo_by_zero.mk:3:15: error: division by zero in a compile-time expression [E0203]
// CHECK:     3 | static_assert(64 % tile == 0, "tile must divide 64");
// CHECK:       |               ^~~~~~~~~
