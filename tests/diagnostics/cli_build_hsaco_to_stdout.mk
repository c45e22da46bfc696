// RUN: build --target gfx90a --emit=hsaco
const a = 1;

// CHECK:EXIT: 1
// CHECK: mkdsl: error: --emit=hsaco needs -o FILE: a code object is binary and never goes to standard output
// CHECK: (run `mkdsl --help` for usage)
