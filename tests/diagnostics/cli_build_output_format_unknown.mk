// RUN: build -o out.txt
const a = 1;

// CHECK:EXIT: 1
// CHECK: mkdsl: error: cannot tell the output format from the name 'out.txt': name it .ptx, .cubin, .s, .hsaco or .ll, or give --emit
// CHECK: (run `mkdsl --help` for usage)
