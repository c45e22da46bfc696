// A failing top-level static_assert reports its message.
const heads = 32;
const kv_heads = 6;
static_assert(heads % kv_heads == 0, "heads must be a multiple of kv_heads");
