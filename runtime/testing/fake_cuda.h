// The fake CUDA driver's test hooks (fake_cuda.cpp), for tests that dlsym them.
#pragma once

#include <cstdint>

extern "C" {

// What the fake driver has seen since it was loaded.
struct FakeCudaStats {
  int launches;         // cuLaunchKernel calls that ran
  int badAccesses;      // copies, memsets and "kernel" accesses outside any allocation
  int liveAllocations;  // cuMemAlloc minus cuMemFree
  unsigned grid, block, smem;  // of the last launch
  uint32_t epoch;              // of the last launch
  uint64_t timeout;            // of the last launch
};
using FakeCudaStatsFn = FakeCudaStats (*)();
// The pointer parameters of the last launch (weights, state, activations, sync, error, inputs):
// host addresses, so a test can inspect the "device" memory directly.
using FakeCudaLastParamsFn = void (*)(uint64_t out[6]);

}  // extern "C"
