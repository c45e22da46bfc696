// Two configs that derive from each other.
config a : b {
  hidden = 64;
}

config b : a {
  hidden = 128;
}

// CHECK:EXIT: 1
// CHECK: config_base_cycle.mk:2:8: error: config 'a' derives from itself [E0206]
// CHECK:     2 | config a : b {
// CHECK:       |        ^
