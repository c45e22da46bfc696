// A constant defined in terms of itself.
const n = n + 1;

// CHECK:EXIT: 1
// CHECK: const_self_reference.mk:2:11: error: constant 'n' depends on itself: n -> n [E0201]
// CHECK:     2 | const n = n + 1;
// CHECK:       |           ^
// CHECK: const_self_reference.mk:2:7: note: 'n' is declared here
// CHECK:     2 | const n = n + 1;
// CHECK:       |       ^
