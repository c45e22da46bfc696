// A block comment with no closing '*/' is reported at its opening '/*'.
const a = 1;
/* this comment never ends
const b = 2;

// CHECK:EXIT: 1
// CHECK: unterminated_block_comment.mk:3:1: error: unterminated block comment: '/*' has no matching '*/' [E0003]
// CHECK:     3 | /* this comment never ends
// CHECK:       | ^~
