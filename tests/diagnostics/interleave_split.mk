// 2 sources of 72 rows each do not split into whole 16-row blocks.
weight gate_up: bf16[144, 64] interleave(16) = ["mlp.gate_proj.weight", "mlp.up_proj.weight"];
