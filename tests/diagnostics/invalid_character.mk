// An invalid character inside an expression is reported at its own column.
const a = 1 $ 2;

// CHECK:EXIT: 1
// CHECK: invalid_character.mk:2:13: error: invalid character '$' [E0001]
// CHECK:     2 | const a = 1 $ 2;
// CHECK:       |             ^
