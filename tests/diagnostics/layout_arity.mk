// tiled takes two arguments.
weight w: bf16[64, 64] tiled(16) = "w";

// CHECK:EXIT: 1
// CHECK: layout_arity.mk:2:24: error: layout 'tiled' takes 2 arguments, found 1 [E0402]
// CHECK:     2 | weight w: bf16[64, 64] tiled(16) = "w";
// CHECK:       |                        ^~~~~~~~~
