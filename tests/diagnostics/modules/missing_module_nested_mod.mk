// Helper for missing_module_nested.mk: imports a module that does not exist.
import missing_module_nested_gone;

const m = 1;
