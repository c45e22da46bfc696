// Helper for ambiguous_imported_const.mk.
const width = 64;
