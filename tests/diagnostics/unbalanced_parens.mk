// An opening '(' with no matching ')'.
const a = (1 + 2;

// CHECK:EXIT: 1
// CHECK: unbalanced_parens.mk:2:17: error: expected ')', found ';' [E0005]
// CHECK:     2 | const a = (1 + 2;
// CHECK:       |                 ^
// CHECK: unbalanced_parens.mk:2:11: note: this '(' is not closed
// CHECK:     2 | const a = (1 + 2;
// CHECK:       |           ^
