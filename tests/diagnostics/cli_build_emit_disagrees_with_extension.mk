// RUN: build --emit=llvm -o out.ptx
const a = 1;

// CHECK:EXIT: 1
// CHECK: mkdsl: error: -o out.ptx names a PTX file (.ptx), but --emit=llvm was given
// CHECK: (run `mkdsl --help` for usage)
