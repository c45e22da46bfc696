// An imported module may not declare a step.
import imported_step_mod;

const c = 1;

// CHECK:EXIT: 1
// CHECK: modules/imported_step_mod.mk:8:6: error: imported module 'imported_step_mod' declares a step; only the root file may [E0106]
// CHECK:     8 | step inner(x: f32[8]) -> (y: f32[8]) {
// CHECK:       |      ^~~~~
// CHECK: imported_step.mk:2:1: note: imported here
// CHECK:     2 | import imported_step_mod;
// CHECK:       | ^~~~~~~~~~~~~~~~~~~~~~~~~
