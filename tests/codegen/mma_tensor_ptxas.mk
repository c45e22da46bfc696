// ptxas assembles the kernels of tests/codegen/mma_tensor.mk (mma.sync m16n8k16) for sm_90a and
// sm_80 without spilling.
// REQUIRES: ptxas
// RUN: %mkdsl build %S/mma_tensor.mk --emit=ptx --target sm_90a --stdlib %stdlib -v 2>&1 >/dev/null | %FileCheck %s
// RUN: %mkdsl build %S/mma_tensor.mk --emit=ptx --target sm_80 --stdlib %stdlib -v 2>&1 >/dev/null | %FileCheck %s

// CHECK: 0 bytes spill stores, 0 bytes spill loads
