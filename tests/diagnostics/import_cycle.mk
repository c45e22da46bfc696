// import_cycle_a imports import_cycle_b, which imports import_cycle_a again.
import import_cycle_a;

const c = 1;
