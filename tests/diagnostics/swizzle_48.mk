// swizzle(B) takes 32, 64 or 128 bytes.
weight w: bf16[64, 64] swizzle(48) = "w";
