// RUN: build --target gfx942
const a = 1;

// CHECK:EXIT: 1
// CHECK: mkdsl: error: --target: target architecture 'gfx942' needs the AMDGPU backend, which is not available yet; the NVPTX backend emits sm_90a, sm_90, sm_80
// CHECK: (run `mkdsl --help` for usage)
