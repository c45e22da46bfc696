#include "compiler/compile.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "ir/verify.h"
#include "lowering/graph.h"
#include "lowering/schedule.h"

namespace mk {

MK_DIAGNOSTIC(CannotRead, Error, "cannot read '{0}': {1}", std::string, std::string);
MK_DIAGNOSTIC(UnknownGpu, Error, "unknown GPU '{0}'; known: {1}", std::string, std::string);
MK_DIAGNOSTIC(UnsupportedArch, Error, "{0}", std::string);
MK_DIAGNOSTIC(GpuArchMismatch, Error, "{0}", std::string);

namespace {

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// Why `path` could not be loaded: SourceManager::load only says that it could not.
std::string readError(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return std::strerror(errno);
  std::fclose(f);
  return "not a regular file";
}

// Whether a GPU of architecture `gpuArch` runs code built for `arch`: an AMDGPU code object only
// its own ISA; PTX any NVIDIA GPU (the driver refuses what does not fit at load time).
bool runs(const std::string& gpuArch, const std::string& arch) {
  return backend::isAmdgpuArch(arch) ? gpuArch == arch : !backend::isAmdgpuArch(gpuArch);
}

// The GPU description the options name: --gpu, else the GPU of an AMDGPU arch, else h200.
std::string gpuName(const CompileOptions& options) {
  if (!options.gpu.empty()) return options.gpu;
  if (backend::isAmdgpuArch(options.arch))
    for (const auto& name : ir::targetNames())
      if (ir::findTarget(name)->arch == options.arch) return name;
  return "h200";
}

}  // namespace

std::optional<FileId> loadFile(SourceManager& sources, DiagnosticEngine& diags, const std::string& path) {
  auto id = sources.load(path);
  if (!id) diags.emit(SourceRange{}, CannotRead, path, readError(path));
  return id;
}

std::optional<ir::TargetDesc> resolveTarget(const CompileOptions& options, std::string& why) {
  const std::string gpu = gpuName(options);
  auto target = ir::findTarget(gpu);
  if (!target) {
    why = fmt::format(fmt::runtime(UnknownGpu.format), gpu, join(ir::targetNames()));
    return std::nullopt;
  }
  if (!options.arch.empty() && !runs(target->arch, options.arch)) {
    std::vector<std::string> fit;
    for (const auto& name : ir::targetNames())
      if (runs(ir::findTarget(name)->arch, options.arch)) fit.push_back(name);
    why = "GPU '" + gpu + "' (" + target->arch + ") cannot run " + options.arch + " code; " + options.arch +
          " code runs on " + join(fit);
    return std::nullopt;
  }
  if (options.sms) target->sms = *options.sms;
  if (options.smem) target->smemPerBlock = *options.smem;
  if (options.warp) target->warpSize = *options.warp;
  if (options.l2Ahead) target->l2AheadTiles = *options.l2Ahead;
  if (options.mmaChains) target->groupMmaChains = *options.mmaChains;
  if (!options.arch.empty()) target->arch = options.arch;
  return target;
}

std::optional<ir::TargetDesc> resolveTarget(DiagnosticEngine& diags, const CompileOptions& options) {
  std::string why;
  auto target = resolveTarget(options, why);
  if (target) return target;
  const std::string gpu = gpuName(options);
  if (!ir::findTarget(gpu)) diags.emit(SourceRange{}, UnknownGpu, gpu, join(ir::targetNames()));
  else diags.emit(SourceRange{}, GpuArchMismatch, why);
  return std::nullopt;
}

std::optional<std::string> archError(const std::string& arch) {
  if (backend::isKnownArch(arch)) return std::nullopt;
  return "unknown target architecture '" + arch + "'; known: " + join(backend::archNames());
}

std::optional<std::vector<ir::Graph>> elaborate(SourceManager& sources, DiagnosticEngine& diags, FileId root,
                                                const CompileOptions& options) {
  return lowering::buildGraphs(sources, diags, root, options.check);
}

std::optional<std::vector<ir::Megakernel>> scheduleProgram(SourceManager& sources, DiagnosticEngine& diags,
                                                           FileId root, const CompileOptions& options) {
  // The target first: an unknown GPU is reported without checking the program.
  auto target = resolveTarget(diags, options);
  if (!target) return std::nullopt;
  auto graphs = elaborate(sources, diags, root, options);
  if (!graphs) return std::nullopt;
  std::vector<ir::Megakernel> steps;
  for (ir::Graph& g : *graphs) {
    steps.push_back(lowering::schedule(std::move(g), *target));
    if (!ir::verify(steps.back(), diags)) return std::nullopt;
  }
  return steps;
}

std::optional<CompileOutput> compile(SourceManager& sources, DiagnosticEngine& diags, FileId root,
                                     const CompileOptions& options) {
  unsigned errorsBefore = diags.errorCount();
  // The architecture before the (long) front half, so a bad one fails fast.
  auto target = resolveTarget(diags, options);
  if (!target) return std::nullopt;
  if (auto why = archError(target->arch)) {
    diags.emit(SourceRange{}, UnsupportedArch, *why);
    return std::nullopt;
  }
  auto steps = scheduleProgram(sources, diags, root, options);
  if (!steps) return std::nullopt;
  backend::Options backendOptions = options.backend;
  backendOptions.arch = steps->front().target.arch;
  auto artifact = backend::generate(*steps, backendOptions, diags);
  // A backend that reports an error but still returns code is not to be trusted.
  if (!artifact || diags.errorCount() != errorsBefore) return std::nullopt;
  CompileOutput out{std::move(*steps), std::move(*artifact), {}};
  out.metadataJson = backend::metadataJson(out.steps, out.artifact.launches);
  return out;
}

std::optional<CompileOutput> compileSource(const std::string& path, const std::string& source,
                                           const CompileOptions& options, std::string* diagnosticsText) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  FileId root = sources.add(path, source);
  auto out = compile(sources, diags, root, options);
  if (diagnosticsText) {
    diagnosticsText->clear();
    for (const auto& d : diags.diagnostics()) *diagnosticsText += renderText(sources, d, false);
  }
  return out;
}

}  // namespace mk
