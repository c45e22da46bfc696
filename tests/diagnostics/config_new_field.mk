// A derived config may only override fields of its base.
config small {
  hidden = 64;
  layers = 2;
}

config big : small {
  hidden = 4096;
  heads = 32;
}

// CHECK:EXIT: 1
// CHECK: config_new_field.mk:9:3: error: config 'big' sets 'heads', which its base 'small' does not have [E0207]
// CHECK:     9 |   heads = 32;
// CHECK:       |   ^~~~~
// CHECK: config_new_field.mk:2:8: note: 'small' is declared here
// CHECK:     2 | config small {
// CHECK:       |        ^~~~~
