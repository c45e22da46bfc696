// A config field with the name of a top-level declaration.
config small {
  hidden = 64;
}

const hidden = 32;

// CHECK:EXIT: 1
// CHECK: config_field_clash.mk:3:3: error: config field 'hidden' has the name of a declaration [E0209]
// CHECK:     3 |   hidden = 64;
// CHECK:       |   ^~~~~~
// CHECK: config_field_clash.mk:6:7: note: previous definition is here
// CHECK:     6 | const hidden = 32;
// CHECK:       |       ^~~~~~
