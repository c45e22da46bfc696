// Only \" \\ \n and \t are escapes; '\q' is reported at the backslash.
weight w: bf16[8] = "model\qweight";
