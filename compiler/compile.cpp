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

}  // namespace

std::optional<FileId> loadFile(SourceManager& sources, DiagnosticEngine& diags, const std::string& path) {
  auto id = sources.load(path);
  if (!id) diags.emit(SourceRange{}, CannotRead, path, readError(path));
  return id;
}

std::optional<ir::TargetDesc> resolveTarget(DiagnosticEngine& diags, const CompileOptions& options) {
  auto target = ir::findTarget(options.gpu);
  if (!target) {
    diags.emit(SourceRange{}, UnknownGpu, options.gpu, join(ir::targetNames()));
    return std::nullopt;
  }
  if (options.sms) target->sms = *options.sms;
  if (options.smem) target->smemPerBlock = *options.smem;
  if (options.warp) target->warpSize = *options.warp;
  if (!options.arch.empty()) target->arch = options.arch;
  return target;
}

std::optional<std::string> archError(const std::string& arch) {
  if (backend::isKnownArch(arch)) return std::nullopt;
  std::string known = join(backend::archNames());
  // AMD architectures are valid targets of the language, just not of this build (issue 8).
  if (arch.rfind("gfx", 0) == 0)
    return "target architecture '" + arch + "' needs the AMDGPU backend, which is not available yet; "
           "the NVPTX backend emits " + known;
  return "unknown target architecture '" + arch + "'; known: " + known;
}

std::optional<ir::Graph> elaborate(SourceManager& sources, DiagnosticEngine& diags, FileId root,
                                   const CompileOptions& options) {
  return lowering::buildGraph(sources, diags, root, options.check);
}

std::optional<ir::Megakernel> scheduleProgram(SourceManager& sources, DiagnosticEngine& diags, FileId root,
                                              const CompileOptions& options) {
  // The target first: an unknown GPU is reported without checking the program.
  auto target = resolveTarget(diags, options);
  if (!target) return std::nullopt;
  auto graph = elaborate(sources, diags, root, options);
  if (!graph) return std::nullopt;
  ir::Megakernel kernel = lowering::schedule(std::move(*graph), *target);
  if (!ir::verify(kernel, diags)) return std::nullopt;
  return kernel;
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
  auto kernel = scheduleProgram(sources, diags, root, options);
  if (!kernel) return std::nullopt;
  backend::Options backendOptions = options.backend;
  backendOptions.arch = kernel->target.arch;
  auto artifact = backend::generate(*kernel, backendOptions, diags);
  // A backend that reports an error but still returns code is not to be trusted.
  if (!artifact || diags.errorCount() != errorsBefore) return std::nullopt;
  CompileOutput out{std::move(*kernel), std::move(*artifact), {}};
  out.metadataJson = backend::metadataJson(out.kernel, out.artifact.launch);
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
