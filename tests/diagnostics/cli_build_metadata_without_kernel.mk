// RUN: build --emit=schedule --metadata out.json
const a = 1;

// CHECK:EXIT: 1
// CHECK: mkdsl: error: --metadata goes with --emit=ptx, llvm or cubin
// CHECK: (run `mkdsl --help` for usage)
