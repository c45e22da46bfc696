// An import of a module that exists nowhere names the places it looked.
import no_such_module;

const c = 1;
