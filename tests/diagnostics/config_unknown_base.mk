// A config that derives from a config that does not exist.
config small {
  hidden = 64;
}

config big : smal {
  hidden = 4096;
}

// CHECK:EXIT: 1
// CHECK: config_unknown_base.mk:6:14: error: unknown config 'smal'; did you mean 'small'? [E0205]
// CHECK:     6 | config big : smal {
// CHECK:       |              ^~~~
