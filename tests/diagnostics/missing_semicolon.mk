// A missing `;` is reported where the next declaration starts.
const a = 1
const b = 2;

// CHECK:EXIT: 1
// CHECK: missing_semicolon.mk:3:1: error: expected ';', found 'const' [E0005]
// CHECK:     3 | const b = 2;
// CHECK:       | ^~~~~
