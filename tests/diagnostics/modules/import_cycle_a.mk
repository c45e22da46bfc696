// Helper for import_cycle.mk.
import import_cycle_b;

const a = 1;
