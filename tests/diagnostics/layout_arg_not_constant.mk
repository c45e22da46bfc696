// Layout arguments must be positive compile-time integers.
weight w: bf16[64, 64] tiled(16, 0) = "w";
