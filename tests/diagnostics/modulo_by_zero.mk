// Integer remainder by a compile-time zero in a static_assert.
const tile = 0;
static_assert(64 % tile == 0, "tile must divide 64");
