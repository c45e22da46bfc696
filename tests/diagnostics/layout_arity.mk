// tiled takes two arguments.
weight w: bf16[64, 64] tiled(16) = "w";
