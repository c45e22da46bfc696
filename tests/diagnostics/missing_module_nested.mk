// A module found on the path imports a module that does not exist.
import missing_module_nested_mod;

const c = 1;

// CHECK:EXIT: 1
// CHECK: modules/missing_module_nested_mod.mk:2:1: error: cannot find module 'missing_module_nested_gone' (looked for modules/missing_module_nested_gone.mk) [E0101]
// CHECK:     2 | import missing_module_nested_gone;
// CHECK:       | ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
