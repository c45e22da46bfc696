// A block comment with no closing '*/' is reported at its opening '/*'.
const a = 1;
/* this comment never ends
const b = 2;
