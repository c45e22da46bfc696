// Only \" \\ \n and \t are escapes; '\q' is reported at the backslash.
weight w: bf16[8] = "model\qweight";

// CHECK:EXIT: 1
// CHECK: bad_escape_in_string.mk:2:27: error: unknown escape sequence '\q' in string; the escapes are \", \\, \n and \t [E0004]
// CHECK:     2 | weight w: bf16[8] = "model\qweight";
// CHECK:       |                           ^~
