// ptxas assembles the `--mma=warpgroup` kernels (wgmma) for sm_90a without spilling: the goldens
// mma_warpgroup.mk and mma_nmajor.mk (b N-major, the transpose flag) and Llama-3.2-1B, whose
// prefill entries put gate/up, q/k/v, o, down and attention on the warpgroup instruction. (The GPU
// check's tests/gpu/mma_group_decode.mk is assembled too; it spills a little, a correctness test
// under the 96 registers of a decode step.)
// REQUIRES: ptxas
// RUN: %mkdsl build %S/mma_warpgroup.mk --emit=ptx --target sm_90a --mma=warpgroup --stdlib %stdlib -v 2>&1 >/dev/null | %FileCheck %s
// RUN: %mkdsl build %S/mma_nmajor.mk --emit=ptx --target sm_90a --stdlib %stdlib -v 2>&1 >/dev/null | %FileCheck %s
// RUN: %mkdsl build %root/tests/gpu/mma_group_decode.mk --emit=ptx --target sm_90a --mma=warpgroup --stdlib %stdlib -v 2>&1 >/dev/null | %FileCheck %s --check-prefix=ASSEMBLED
// RUN: %mkdsl build %root/examples/llama.mk --config llama_3_2_1b --emit=ptx --target sm_90a --mma=warpgroup --stdlib %stdlib -v 2>&1 >/dev/null | %FileCheck %s

// CHECK-NOT: {{[1-9][0-9]*}} bytes spill
// CHECK: 0 bytes spill stores, 0 bytes spill loads
// CHECK-NOT: {{[1-9][0-9]*}} bytes spill
// ASSEMBLED: ptxas -arch=sm_90a: mk_step: {{[0-9]+}} registers
