// A byte that is not UTF-8 (Latin-1 0xE9) in an identifier.
const café = 1;

// CHECK:EXIT: 1
// CHECK: invalid_utf8_byte.mk:2:10: error: invalid UTF-8 byte 0xE9; .mk files are UTF-8 [E0009]
// CHECK:     2 | const cafï¿½ = 1;
// CHECK:       |          ^
