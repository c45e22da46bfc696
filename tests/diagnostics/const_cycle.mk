// Two constants defined in terms of each other.
const a = b + 1;
const b = a * 2;

// CHECK:EXIT: 1
// CHECK: const_cycle.mk:3:11: error: constant 'a' depends on itself: a -> b -> a [E0201]
// CHECK:     3 | const b = a * 2;
// CHECK:       |           ^
// CHECK: const_cycle.mk:2:7: note: 'a' is declared here
// CHECK:     2 | const a = b + 1;
// CHECK:       |       ^
