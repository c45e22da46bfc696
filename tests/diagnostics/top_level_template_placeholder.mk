// A weight outside a group has no index to substitute into {l}.
weight norm: bf16[64] = "model.layers.{l}.norm.weight";

// CHECK:EXIT: 1
// CHECK: top_level_template_placeholder.mk:2:25: error: weight name template uses {l} outside a group [E0412]
// CHECK:     2 | weight norm: bf16[64] = "model.layers.{l}.norm.weight";
// CHECK:       |                         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
