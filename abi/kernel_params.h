// The kernel's parameters, in order: what the backend declares, the metadata lists ("params")
// and the runtime passes at launch.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace mk::abi {

enum class ParamKind {
  GlobalPointer,  // a device buffer (never aliasing another parameter)
  U32,
  U64,
};

struct KernelParam {
  const char* name;
  ParamKind kind;
  bool traceOnly;  // present only in a kernel built with --trace
};

// Indices into kKernelParams.
enum ParamIndex { ParamWeights, ParamState, ParamActivations, ParamSync, ParamError, ParamInputs, ParamEpoch, ParamTimeout,
                  ParamTrace, ParamCount };

//   weights, state, activations: base pointers of the three arenas (ir::MemoryPlan offsets)
//   sync:    u32[syncCounters], zeroed once before the first step
//   error:   u32[errorWords], zeroed once; word 0 != 0 after a failed step (records.h ErrorWord)
//   inputs:  u32[inputs] the step's scalar inputs in declaration order (f32 inputs as their bits)
//   epoch:   u32, 1 for the first step, +1 per step (counters are never reset)
//   timeout: u64, nanoseconds a wait may spin before the kernel records an error and exits
//   trace:   (only when traced) u64[traceRecords * TraceWords], records.h TraceWord
inline constexpr KernelParam kKernelParams[ParamCount] = {
    {"weights", ParamKind::GlobalPointer, false}, {"state", ParamKind::GlobalPointer, false},
    {"activations", ParamKind::GlobalPointer, false}, {"sync", ParamKind::GlobalPointer, false},
    {"error", ParamKind::GlobalPointer, false},  {"inputs", ParamKind::GlobalPointer, false},
    {"epoch", ParamKind::U32, false},            {"timeout", ParamKind::U64, false},
    {"trace", ParamKind::GlobalPointer, true},
};

// The parameter names of a kernel built with or without --trace, in order.
inline std::vector<std::string> kernelParamNames(bool traced) {
  std::vector<std::string> names;
  for (const KernelParam& p : kKernelParams)
    if (traced || !p.traceOnly) names.push_back(p.name);
  return names;
}

}  // namespace mk::abi
