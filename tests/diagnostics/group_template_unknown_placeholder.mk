// Only the group's index variable may appear in {...}.
group layer[l in 0 .. 2] {
  weight norm: bf16[64] = "model.layers.{l}.norm.{x}.weight";
}

// CHECK:EXIT: 1
// CHECK: group_template_unknown_placeholder.mk:3:27: error: weight name template uses {x}; the group index is {l} [E0412]
// CHECK:     3 |   weight norm: bf16[64] = "model.layers.{l}.norm.{x}.weight";
// CHECK:       |                           ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
