// A config field may refer to earlier fields only; 'hidden' is set below.
config small {
  heads = 4;
  head_dim = hidden / heads;
  hidden = 64;
}

// CHECK:EXIT: 1
// CHECK: config_field_forward_reference.mk:4:14: error: unknown name 'hidden' [E0108]
// CHECK:     4 |   head_dim = hidden / heads;
// CHECK:       |              ^~~~~~
