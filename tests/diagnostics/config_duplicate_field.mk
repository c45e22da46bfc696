// One config sets the same field twice.
config small {
  hidden = 64;
  layers = 2;
  hidden = 128;
}

// CHECK:EXIT: 1
// CHECK: config_duplicate_field.mk:5:3: error: config field 'hidden' is set twice [E0208]
// CHECK:     5 |   hidden = 128;
// CHECK:       |   ^~~~~~
// CHECK: config_duplicate_field.mk:3:3: note: previous definition is here
// CHECK:     3 |   hidden = 64;
// CHECK:       |   ^~~~~~
