// tiled(R, C): R must divide dim 0.
weight w: bf16[100, 64] tiled(16, 64) = "w";

// CHECK:EXIT: 1
// CHECK: tiled_not_dividing.mk:2:25: error: layout tiled(16, 64) does not fit shape [100, 64]: 100 is not a multiple of 16 [E0405]
// CHECK:     2 | weight w: bf16[100, 64] tiled(16, 64) = "w";
// CHECK:       |                         ^~~~~~~~~~~~~
// CHECK: tiled_not_dividing.mk:2:16: note: shape [100, 64] comes from here
// CHECK:     2 | weight w: bf16[100, 64] tiled(16, 64) = "w";
// CHECK:       |                ^~~
