// RUN: build --gpu h200 --target gfx942
const a = 1;

// CHECK:EXIT: 1
// CHECK: mkdsl: error: GPU 'h200' (sm_90a) cannot run gfx942 code; gfx942 code runs on mi300x
// CHECK: (run `mkdsl --help` for usage)
