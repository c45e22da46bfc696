// Helper for import_cycle.mk.
import import_cycle_a;

const b = 2;
