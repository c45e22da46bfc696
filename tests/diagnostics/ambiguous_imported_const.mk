// Two imported modules both define const 'width'.
import ambiguous_imported_const_a;
import ambiguous_imported_const_b;

const doubled = width * 2;

// CHECK:EXIT: 1
// CHECK: ambiguous_imported_const.mk:5:17: error: 'width' is ambiguous: both 'ambiguous_imported_const_a' and 'ambiguous_imported_const_b' define it [E0109]
// CHECK:     5 | const doubled = width * 2;
// CHECK:       |                 ^~~~~
// CHECK: modules/ambiguous_imported_const_a.mk:2:7: note: one definition is here
// CHECK:     2 | const width = 64;
// CHECK:       |       ^~~~~
// CHECK: modules/ambiguous_imported_const_b.mk:2:7: note: one definition is here
// CHECK:     2 | const width = 128;
// CHECK:       |       ^~~~~
