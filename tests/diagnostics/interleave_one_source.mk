// interleave(R) assembles several sources; one source is an error.
weight gate_up: bf16[256, 64] interleave(16) = "mlp.gate_proj.weight";
