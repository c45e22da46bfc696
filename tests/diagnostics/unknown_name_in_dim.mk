// An unknown name in a weight's shape.
const hidden = 64;
weight norm: bf16[hiden] = "model.norm.weight";

// CHECK:EXIT: 1
// CHECK: unknown_name_in_dim.mk:3:19: error: unknown name 'hiden'; did you mean 'hidden'? [E0108]
// CHECK:     3 | weight norm: bf16[hiden] = "model.norm.weight";
// CHECK:       |                   ^~~~~
