// RUN: build -o missing/out.ptx
const a = 1;

// CHECK:EXIT: 1
// CHECK: mkdsl: error: cannot write 'missing/out.ptx': the directory 'missing' does not exist [E0902]
