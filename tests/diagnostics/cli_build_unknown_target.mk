// RUN: build --target sm_75
const a = 1;

// CHECK:EXIT: 1
// CHECK: mkdsl: error: --target: unknown target architecture 'sm_75'; known: sm_90a, sm_90, sm_80, gfx942, gfx90a
// CHECK: (run `mkdsl --help` for usage)
