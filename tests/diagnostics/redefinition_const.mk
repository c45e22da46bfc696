// Two top-level constants with the same name.
const hidden = 64;
const layers = 2;
const hidden = 128;

// CHECK:EXIT: 1
// CHECK: redefinition_const.mk:4:7: error: 'hidden' is already defined [E0107]
// CHECK:     4 | const hidden = 128;
// CHECK:       |       ^~~~~~
// CHECK: redefinition_const.mk:2:7: note: previous definition is here
// CHECK:     2 | const hidden = 64;
// CHECK:       |       ^~~~~~
