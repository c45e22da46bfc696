// The compiler as a library: .mk source -> checked program -> graph IR -> verified megakernel IR
// -> LLVM IR and PTX or an AMDGPU object (backend/), plus the metadata sidecar. `mkdsl` is a thin
// client of this; a host program can do the same in-process.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "frontend/sema.h"
#include "ir/graph.h"
#include "ir/megakernel.h"
#include "support/diagnostics.h"
#include "support/source.h"

namespace mk {

struct CompileOptions {
  CheckOptions check;
  // An ir::findTarget name. Empty: for an AMDGPU `arch` the GPU of that ISA (gfx942: mi300x,
  // gfx90a: mi250x), else h200.
  std::string gpu;
  std::optional<int> sms, smem, warp;  // override the target's SM count, smem per block, warp size
  std::optional<int> l2Ahead;          // ... and its loader's L2 look-ahead in tiles
  std::optional<int> mmaChains;        // ... and its warpgroup tiles' accumulator sets
  // The code architecture (sm_90a, ...); empty: the target's TargetDesc::arch. It also replaces
  // the arch in the scheduled kernel's TargetDesc, so the schedule printout shows what is built.
  std::string arch;
  // backend.arch is ignored: compile() sets it from `arch` (or the target's).
  backend::Options backend;
};

struct CompileOutput {
  std::vector<ir::Megakernel> steps;  // per step of the program, in program order
  backend::Artifact artifact;         // one module, an entry per step
  std::string metadataJson;           // backend::metadataJson(steps, artifact.launches)
  const ir::Megakernel& kernel() const { return steps.front(); }  // the first step's
};

// Reads a file into `sources`; reports E0901 (cannot read) and gives nullopt when it cannot.
std::optional<FileId> loadFile(SourceManager& sources, DiagnosticEngine& diags, const std::string& path);

// The target the options describe (gpu, overrides and arch), or nullopt with `why` set: an
// unknown gpu, or a gpu that cannot run code of `arch` (an AMDGPU code object runs only on its own
// ISA; PTX only on NVIDIA GPUs).
std::optional<ir::TargetDesc> resolveTarget(const CompileOptions& options, std::string& why);
// The same, reporting the problem as a diagnostic.
std::optional<ir::TargetDesc> resolveTarget(DiagnosticEngine& diags, const CompileOptions& options);

// Why no code can be generated for `arch` (an unknown name), naming the architectures that work;
// nullopt when it can.
std::optional<std::string> archError(const std::string& arch);

// Check and elaborate: the graph of each of the program's steps, in program order, over the same
// weights and state (the config from options.check).
std::optional<std::vector<ir::Graph>> elaborate(SourceManager& sources, DiagnosticEngine& diags, FileId root,
                                                const CompileOptions& options);

// ... then schedule each for the target and verify: a megakernel per step, or nullopt with
// diagnostics.
std::optional<std::vector<ir::Megakernel>> scheduleProgram(SourceManager& sources, DiagnosticEngine& diags,
                                                           FileId root, const CompileOptions& options);

// ... then generate code and the metadata sidecar.
std::optional<CompileOutput> compile(SourceManager& sources, DiagnosticEngine& diags, FileId root,
                                     const CompileOptions& options);

// compile() on source text (`path` names it in diagnostics and anchors its relative imports).
// When diagnosticsText is given it receives every diagnostic rendered as text, without colour.
std::optional<CompileOutput> compileSource(const std::string& path, const std::string& source,
                                           const CompileOptions& options, std::string* diagnosticsText = nullptr);

}  // namespace mk
