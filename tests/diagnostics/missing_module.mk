// An import of a module that exists nowhere names the places it looked.
import no_such_module;

const c = 1;

// CHECK:EXIT: 1
// CHECK: missing_module.mk:2:1: error: cannot find module 'no_such_module' (looked for no_such_module.mk, modules/no_such_module.mk) [E0101]
// CHECK:     2 | import no_such_module;
// CHECK:       | ^~~~~~~~~~~~~~~~~~~~~~
