#include "lsp/analysis.h"

#include <algorithm>

namespace mk::lsp {

Analysis::Analysis(const std::string& path, const std::string& text,
                   const std::vector<std::pair<std::string, const std::string*>>& open, const AnalysisOptions& options) {
  root = sources.add(path, text);
  for (const auto& [p, t] : open)
    if (p != path) sources.add(p, *t);
  diags.setErrorLimit(options.maxErrors);
  CheckOptions check;
  check.includeDirs = options.includeDirs;
  check.stdlibDir = options.stdlibDir;
  check.allConfigs = true;
  check.buildIndex = true;
  program = checkProgram(sources, diags, root, check);
  if (!program->index) program->index = std::make_unique<SemanticIndex>();
  for (const Diagnostic& d : diags.diagnostics()) {
    std::string_view code = diagCode(d.kind);
    // E0001-E0099: lexical and syntax errors.
    if (d.range.file == root && code.size() == 5 && code.substr(0, 3) == "E00" && code != "E0000") parsedCleanly_ = false;
  }
  for (const auto& m : program->modules)
    if (m->ast && m->ast->file != root) deps_.push_back(sources.file(m->ast->file).path());
}

const Module* Analysis::module(FileId file) const {
  for (const auto& m : program->modules)
    if (m->ast && m->ast->file == file) return m.get();
  return nullptr;
}

std::string_view Analysis::source(SourceRange r) const {
  if (!r.valid()) return {};
  std::string_view t = text(r.file);
  uint32_t b = std::min<uint32_t>(r.begin, static_cast<uint32_t>(t.size()));
  uint32_t e = std::min<uint32_t>(std::max(r.begin, r.end), static_cast<uint32_t>(t.size()));
  return t.substr(b, e - b);
}

const LineIndex& Analysis::lines(FileId file) const {
  auto it = lines_.find(file);
  if (it == lines_.end()) it = lines_.emplace(file, LineIndex(sources.file(file).text())).first;
  return it->second;
}

}  // namespace mk::lsp
