// A static_assert condition that is an int, not a bool.
const heads = 32;
static_assert(heads % 4, "heads must be a multiple of 4");

// CHECK:EXIT: 1
// CHECK: static_assert_not_bool.mk:3:15: error: static_assert needs a compile-time bool, found compile-time int [E0212]
// CHECK:     3 | static_assert(heads % 4, "heads must be a multiple of 4");
// CHECK:       |               ^~~~~~~~~
