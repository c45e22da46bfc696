// A misspelled dtype in a weight type.
weight w: bf61[8] = "w";

// CHECK:EXIT: 1
// CHECK: unknown_type.mk:2:11: error: unknown type 'bf61'; expected a dtype (bf16, f16, f32, i32, bool); did you mean 'bf16'? [E0301]
// CHECK:     2 | weight w: bf61[8] = "w";
// CHECK:       |           ^~~~
