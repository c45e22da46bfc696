// RUN: build --gpu mi300x
const a = 1;

// CHECK:EXIT: 1
// CHECK: mkdsl: error: --gpu mi300x: target architecture 'gfx942' needs the AMDGPU backend, which is not available yet; the NVPTX backend emits sm_90a, sm_90, sm_80; --emit=graph, tasks and schedule work without it
// CHECK: (run `mkdsl --help` for usage)
