// A misspelled stdlib module.
import std.linaer;

const c = 1;
