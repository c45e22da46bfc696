// A module that imports itself is an import cycle of length one.
import import_self;

const c = 1;
