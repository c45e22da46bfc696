// A byte that is not UTF-8 (Latin-1 0xE9) in an identifier.
const café = 1;
