// RUN: build --emit=cubin
const a = 1;

// CHECK:EXIT: 1
// CHECK: mkdsl: error: --emit=cubin needs -o FILE: a cubin is binary and never goes to standard output
// CHECK: (run `mkdsl --help` for usage)
