// A statement at top level is not a declaration.
const a = 1;
let b = a + 1;
