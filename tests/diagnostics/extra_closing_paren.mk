// A ')' with no matching '('.
const a = 1 + 2);

// CHECK:EXIT: 1
// CHECK: extra_closing_paren.mk:2:16: error: expected ';', found ')' [E0005]
// CHECK:     2 | const a = 1 + 2);
// CHECK:       |                ^
