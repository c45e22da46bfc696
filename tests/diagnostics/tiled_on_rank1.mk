// tiled(R, C) needs a rank-2 tensor.
weight norm: bf16[64] tiled(16, 64) = "norm.weight";
