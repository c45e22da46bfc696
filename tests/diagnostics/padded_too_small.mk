// padded(P) needs P >= dim 1.
weight w: bf16[64, 128] padded(120) = "w";

// CHECK:EXIT: 1
// CHECK: padded_too_small.mk:2:25: error: padded(120) is narrower than the rows it pads (128 elements) [E0406]
// CHECK:     2 | weight w: bf16[64, 128] padded(120) = "w";
// CHECK:       |                         ^~~~~~~~~~~
