// 2 sources of 72 rows each do not split into whole 16-row blocks.
weight gate_up: bf16[144, 64] interleave(16) = ["mlp.gate_proj.weight", "mlp.up_proj.weight"];

// CHECK:EXIT: 1
// CHECK: interleave_split.mk:2:17: error: weight 'gate_up': 144 rows do not split into 2 sources of whole 16-row blocks [E0411]
// CHECK:     2 | weight gate_up: bf16[144, 64] interleave(16) = ["mlp.gate_proj.weight", "mlp.up_proj.weight"];
// CHECK:       |                 ^~~~~~~~~~~~~~~~~~~~~~~~~~~~
