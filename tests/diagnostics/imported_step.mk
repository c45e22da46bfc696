// An imported module may not declare a step.
import imported_step_mod;

const c = 1;
