// A misspelled stdlib module.
import std.linaer;

const c = 1;

// CHECK:EXIT: 1
// CHECK: missing_std_module.mk:2:1: error: cannot find module 'std.linaer' (looked for <stdlib>/linaer.mk); did you mean 'std.linear'? [E0101]
// CHECK:     2 | import std.linaer;
// CHECK:       | ^~~~~~~~~~~~~~~~~~
