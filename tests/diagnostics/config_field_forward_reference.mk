// A config field may refer to earlier fields only; 'hidden' is set below.
config small {
  heads = 4;
  head_dim = hidden / heads;
  hidden = 64;
}

// CHECK:EXIT: 1
// CHECK: config_field_forward_reference.mk:4:14: error: unknown name 'hidden'; it is set later in this config, and a field sees only the fields before it [E0108]
// CHECK:     4 |   head_dim = hidden / heads;
// CHECK:       |              ^~~~~~
// CHECK: config_field_forward_reference.mk:5:3: note: 'hidden' is declared here
// CHECK:     5 |   hidden = 64;
// CHECK:       |   ^~~~~~
