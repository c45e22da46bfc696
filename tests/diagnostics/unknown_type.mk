// A misspelled dtype in a weight type.
weight w: bf61[8] = "w";
