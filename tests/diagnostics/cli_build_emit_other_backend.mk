// RUN: build --target gfx942 --emit=ptx
const a = 1;

// CHECK:EXIT: 1
// CHECK: mkdsl: error: --emit=ptx is NVPTX output, but the target gfx942 is AMDGPU: use --emit=amdgcn (.s), hsaco (.hsaco) or llvm (.ll)
// CHECK: (run `mkdsl --help` for usage)
