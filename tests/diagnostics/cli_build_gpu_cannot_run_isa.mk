// RUN: build --gpu mi250x --target gfx942
const a = 1;

// CHECK:EXIT: 1
// CHECK: mkdsl: error: GPU 'mi250x' (gfx90a) cannot run gfx942 code; gfx942 code runs on mi300x
// CHECK: (run `mkdsl --help` for usage)
