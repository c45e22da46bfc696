// A statement at top level is not a declaration.
const a = 1;
let b = a + 1;

// CHECK:EXIT: 1
// CHECK: junk_at_top_level.mk:3:1: error: expected a declaration (import, const, config, weight, state, group, op, fn, step), found 'let' [E0005]
// CHECK:     3 | let b = a + 1;
// CHECK:       | ^~~
