// Weights cannot have dtype bool.
weight mask: bool[64] = "model.mask";

// CHECK:EXIT: 1
// CHECK: bool_weight.mk:2:14: error: weight 'mask' cannot have dtype bool [E0414]
// CHECK:     2 | weight mask: bool[64] = "model.mask";
// CHECK:       |              ^~~~
