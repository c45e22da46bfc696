// swizzle(B) takes 32, 64 or 128 bytes.
weight w: bf16[64, 64] swizzle(48) = "w";

// CHECK:EXIT: 1
// CHECK: swizzle_48.mk:2:32: error: swizzle(48): the swizzle width must be 32, 64 or 128 bytes [E0407]
// CHECK:     2 | weight w: bf16[64, 64] swizzle(48) = "w";
// CHECK:       |                                ^~
