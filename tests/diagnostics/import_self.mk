// A module that imports itself is an import cycle of length one.
import import_self;

const c = 1;

// CHECK:EXIT: 1
// CHECK: import_self.mk:2:1: error: import cycle: import_self.mk -> import_self.mk [E0102]
// CHECK:     2 | import import_self;
// CHECK:       | ^~~~~~~~~~~~~~~~~~~
