// A static_assert condition that is an int, not a bool.
const heads = 32;
static_assert(heads % 4, "heads must be a multiple of 4");
