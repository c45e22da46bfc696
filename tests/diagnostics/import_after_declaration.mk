// Imports must come before every other declaration.
const c = 1;
import import_after_declaration_mod;

// CHECK:EXIT: 1
// CHECK: import_after_declaration.mk:3:1: error: imports must come before every other declaration [E0103]
// CHECK:     3 | import import_after_declaration_mod;
// CHECK:       | ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// CHECK: import_after_declaration.mk:2:1: note: the first declaration is here
// CHECK:     2 | const c = 1;
// CHECK:       | ^~~~~~~~~~~~
