// import_cycle_a imports import_cycle_b, which imports import_cycle_a again.
import import_cycle_a;

const c = 1;

// CHECK:EXIT: 1
// CHECK: modules/import_cycle_b.mk:2:1: error: import cycle: modules/import_cycle_a.mk -> modules/import_cycle_b.mk -> modules/import_cycle_a.mk [E0102]
// CHECK:     2 | import import_cycle_a;
// CHECK:       | ^~~~~~~~~~~~~~~~~~~~~~
