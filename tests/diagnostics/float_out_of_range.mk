// A float literal beyond the range of a double.
const huge = 1e999;
