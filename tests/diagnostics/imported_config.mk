// An imported module may not declare a config.
import imported_config_mod;

const c = 1;
