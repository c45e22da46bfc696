// The public entry points of checking (frontend/sema.h); the checker itself is in frontend/check/.
#include "frontend/sema.h"

#include <cstdlib>
#include <filesystem>
#include <set>
#include <tuple>

#include "frontend/check/context.h"

namespace mk {

namespace fs = std::filesystem;
using check::Checker;

std::string defaultStdlibDir() {
  if (const char* env = std::getenv("MKDSL_STDLIB"); env && *env) return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path installed = exe.parent_path().parent_path() / "share" / "mkdsl" / "stdlib";
    if (fs::is_directory(installed, ec)) return installed.string();
  }
  return MK_STDLIB_DIR;
}

bool elaborateSteps(SourceManager& sources, DiagnosticEngine& diags, FileId root, const CheckOptions& options,
                    const std::function<GraphSink&(const ast::StepDecl&)>& sinkFor) {
  Program program;
  Checker checker(sources, diags, options, program);
  unsigned before = diags.errorCount();
  checker.run(root);
  if (diags.errorCount() != before) return false;
  if (program.steps.empty()) {
    diags.emit(SourceRange{program.root()->ast->file, 0, 0}, check::NoStep);
    return false;
  }
  for (const ast::StepDecl* step : program.steps) {
    GraphSink& sink = sinkFor(*step);
    sink.config = program.config ? program.config->name.name : "";
    sink.configValues = program.configValues;
    checker.elaborate(*step, sink);
  }
  return diags.errorCount() == before;
}

std::unique_ptr<Program> checkProgram(SourceManager& sources, DiagnosticEngine& diags, FileId root, const CheckOptions& options) {
  auto program = std::make_unique<Program>();
  Checker checker(sources, diags, options, *program);
  checker.run(root);
  if (!options.allConfigs || options.configName || !program->root()) return program;
  // The other configs: report only what the first one did not already show.
  std::set<std::tuple<DiagKind, FileId, uint32_t, uint32_t>> seen;
  for (const auto& d : diags.diagnostics()) seen.insert({d.kind, d.range.file, d.range.begin, d.range.end});
  bool first = true;
  for (const auto& decl : program->root()->ast->decls) {
    auto* cfg = ast::as<ast::ConfigDecl>(decl.get());
    if (!cfg || cfg->name.name.empty()) continue;
    if (first) {
      first = false;
      continue;
    }
    CheckOptions one = options;
    one.configName = cfg->name.name;
    one.buildIndex = false;
    DiagnosticEngine local(sources);
    Program scratch;
    Checker other(sources, local, one, scratch);
    other.run(root);
    for (Diagnostic d : local.diagnostics()) {
      if (!seen.insert({d.kind, d.range.file, d.range.begin, d.range.end}).second) continue;
      d.notes.push_back({cfg->name.range, fmt::format("with config '{}'", cfg->name.name)});
      diags.report(std::move(d));
    }
  }
  return program;
}

}  // namespace mk
