// tiled(R, C) needs a rank-2 tensor.
weight norm: bf16[64] tiled(16, 64) = "norm.weight";

// CHECK:EXIT: 1
// CHECK: tiled_on_rank1.mk:2:23: error: layout 'tiled' needs a tensor of rank 2, found rank 1 [E0403]
// CHECK:     2 | weight norm: bf16[64] tiled(16, 64) = "norm.weight";
// CHECK:       |                       ^~~~~~~~~~~~~
