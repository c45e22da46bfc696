// Imports must come before every other declaration.
const c = 1;
import import_after_declaration_mod;
