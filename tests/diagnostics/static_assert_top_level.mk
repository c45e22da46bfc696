// A failing top-level static_assert reports its message.
const heads = 32;
const kv_heads = 6;
static_assert(heads % kv_heads == 0, "heads must be a multiple of kv_heads");

// CHECK:EXIT: 1
// CHECK: static_assert_top_level.mk:4:1: error: static assertion failed: heads must be a multiple of kv_heads [E0211]
// CHECK:     4 | static_assert(heads % kv_heads == 0, "heads must be a multiple of kv_heads");
// CHECK:       | ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
