// padded(P) needs P >= dim 1.
weight w: bf16[64, 128] padded(120) = "w";
