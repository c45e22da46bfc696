// RUN: build --emit=schedule --metadata out.json
const a = 1;

// CHECK:EXIT: 1
// CHECK: mkdsl: error: --metadata goes with --emit=ptx, cubin, amdgcn, hsaco or llvm
// CHECK: (run `mkdsl --help` for usage)
