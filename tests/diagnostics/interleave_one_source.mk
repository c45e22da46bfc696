// interleave(R) assembles several sources; one source is an error.
weight gate_up: bf16[256, 64] interleave(16) = "mlp.gate_proj.weight";

// CHECK:EXIT: 1
// CHECK: interleave_one_source.mk:2:31: error: weight 'gate_up' has layout interleave(16) but 1 source; interleave needs at least 2 [E0410]
// CHECK:     2 | weight gate_up: bf16[256, 64] interleave(16) = "mlp.gate_proj.weight";
// CHECK:       |                               ^~~~~~~~~~~~~~
