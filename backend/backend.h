// The backends: megakernel IR -> LLVM IR -> target code. The only part of mkdsl that includes
// LLVM; everything it needs from the program comes from the megakernel IR.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "abi/metadata.h"
#include "ir/megakernel.h"
#include "support/diagnostics.h"

namespace mk::backend {

// The code architectures the backends can emit (`--target`), from the target registry
// (ir/target.h): NVPTX ones give PTX, AMDGPU ones an ELF object, linked into a code object by the
// compiler library.
std::vector<std::string> archNames();
bool isKnownArch(const std::string& arch);
bool isAmdgpuArch(const std::string& arch);

// How the host launches the kernel and what it must allocate (abi::Launch, which the sidecar
// carries to the runtime), and how many trace records a traced kernel writes. The kernel's
// parameters are abi/kernel_params.h's, its error and trace records abi/records.h's.
struct LaunchInfo : abi::Launch {
  int64_t traceRecords = 0;  // one per queue entry when traced, else 0 (no trace parameter)
};

// What a diagnostic build leaves out: WeightCopies, the loader's copies (the ring's slots are
// handed over unfilled, so the compute side runs at its own speed); WeightMath, the streamed
// matvec loops' arithmetic (the compute side only takes and frees slots, so the loader sets the
// pace). The kernel's results are meaningless; its timing says which side bounds a step.
enum class Ablation { None, WeightCopies, WeightMath };

struct Options {
  std::string arch = "sm_90a";
  // Test-only fault injection: task `dropSignalOfTask` signals nothing, so its consumers time out.
  std::optional<int> dropSignalOfTask;
  // Record when each task starts, is ready and ends, and how its tiles streamed (abi::TraceWord). Off:
  // no trace code at all.
  bool trace = false;
  // Diagnostic only (wrong results, real timing): leave one side of weight streaming out.
  Ablation ablation = Ablation::None;
  // Products whose rows come in 64s on the warpgroup matrix instruction (`--mma=warp|warpgroup`).
  // Unset: wherever the arch has one (ir::ArchDesc::warpgroupMma); false: every product on the
  // per-warp one; true on an arch without it is an error.
  std::optional<bool> warpgroupMma;
};

// One module with an entry per step of the program (the first step's is `mk_step`, each further
// step's `mk_step_NAME`), all over the same weights and state arenas.
struct Artifact {
  std::string llvmIR;    // textual LLVM IR of the module, after the LLVM verifier
  std::string assembly;  // the target's assembly: PTX (NVPTX) or AMDGCN (AMDGPU)
  std::string object;    // AMDGPU: the relocatable ELF object to link into a code object; else empty
  std::vector<LaunchInfo> launches;  // per step, in the steps' order
  const LaunchInfo& launch() const { return launches.front(); }  // the first step's
};

// Generates the kernel of the program's steps (the scheduled steps of one program, in program
// order: they share the weights and state, ir::Graph::tensors). Problems (a program the backend
// cannot lower, LLVM failures) are reported as diagnostics and give nullopt.
std::optional<Artifact> generate(const std::vector<ir::Megakernel>& steps, const Options& options, DiagnosticEngine& diags);

// The metadata sidecar: launch info, buffers (arena, offset, bytes, dtype, shape, layout),
// weights with their safetensors sources, step inputs and outputs; the first step at the top,
// the others under "steps" (abi/metadata.h). `launches` are generate's, per step. Stable key order.
std::string metadataJson(const std::vector<ir::Megakernel>& steps, const std::vector<LaunchInfo>& launches);

}  // namespace mk::backend
