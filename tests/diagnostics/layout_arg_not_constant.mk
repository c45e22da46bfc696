// Layout arguments must be positive compile-time integers.
weight w: bf16[64, 64] tiled(16, 0) = "w";

// CHECK:EXIT: 1
// CHECK: layout_arg_not_constant.mk:2:34: error: argument 2 of layout 'tiled' must be a positive compile-time integer, found 0 [E0404]
// CHECK:     2 | weight w: bf16[64, 64] tiled(16, 0) = "w";
// CHECK:       |                                  ^
