// A weight dimension must be a positive compile-time integer.
const hidden = 64;
weight w: bf16[hidden - 64, hidden] = "w";

// CHECK:EXIT: 1
// CHECK: weight_dim_not_positive.mk:3:16: error: dimension 0 of 'w' must be a positive compile-time integer, found 0 [E0302]
// CHECK:     3 | weight w: bf16[hidden - 64, hidden] = "w";
// CHECK:       |                ^~~~~~~~~~~
