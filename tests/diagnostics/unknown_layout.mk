// A misspelled layout name.
weight w: bf16[64, 64] row_majr = "w";
