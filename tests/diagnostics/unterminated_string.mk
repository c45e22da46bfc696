// A string that does not end on its line is one bad token, reported where it starts.
weight norm: bf16[8] = "model.norm.weight;
weight gain: bf16[8] = "model.gain.weight";

// CHECK:EXIT: 1
// CHECK: unterminated_string.mk:2:24: error: unterminated string literal: a string must end with '"' on the same line [E0002]
// CHECK:     2 | weight norm: bf16[8] = "model.norm.weight;
// CHECK:       |                        ^~~~~~~~~~~~~~~~~~~
