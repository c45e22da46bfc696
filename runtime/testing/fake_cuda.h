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
  int params;                  // the parameters the last launch read: 8, or 9 for a traced entry
};
using FakeCudaStatsFn = FakeCudaStats (*)();
// The pointer parameters of the last launch (weights, state, activations, sync, error, inputs):
// host addresses, so a test can inspect the "device" memory directly.
using FakeCudaLastParamsFn = void (*)(uint64_t out[6]);
// The entry name of the last launch ("mk_step").
using FakeCudaLastEntryFn = const char* (*)();
// The trace parameter of the last launch (0 when its entry declares none).
using FakeCudaLastTraceFn = uint64_t (*)();
// The size of the allocation that starts at `ptr`, or 0 when none does.
using FakeCudaAllocationBytesFn = uint64_t (*)(uint64_t ptr);

}  // extern "C"
