// Helper for import_after_declaration.mk.
const m = 1;
