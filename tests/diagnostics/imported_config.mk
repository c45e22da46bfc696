// An imported module may not declare a config.
import imported_config_mod;

const c = 1;

// CHECK:EXIT: 1
// CHECK: modules/imported_config_mod.mk:2:8: error: imported module 'imported_config_mod' declares a config; only the root file may [E0105]
// CHECK:     2 | config inner {
// CHECK:       |        ^~~~~
// CHECK: imported_config.mk:2:1: note: imported here
// CHECK:     2 | import imported_config_mod;
// CHECK:       | ^~~~~~~~~~~~~~~~~~~~~~~~~~~
