// A misspelled layout name.
weight w: bf16[64, 64] row_majr = "w";

// CHECK:EXIT: 1
// CHECK: unknown_layout.mk:2:24: error: unknown layout 'row_majr'; expected row_major, col_major, tiled(rows, cols), interleave(rows), padded(pitch) or swizzle(bytes); did you mean 'row_major'? [E0401]
// CHECK:     2 | weight w: bf16[64, 64] row_majr = "w";
// CHECK:       |                        ^~~~~~~~
