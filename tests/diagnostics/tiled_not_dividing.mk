// tiled(R, C): R must divide dim 0.
weight w: bf16[100, 64] tiled(16, 64) = "w";
