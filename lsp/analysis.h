// One check of a document: the frontend's parse and check of its in-memory text (the same
// checker `mkdsl check` runs, under every config), with imports resolved among the open
// documents first and on disk after, and the checker's index of names and types.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/sema.h"
#include "lsp/document.h"
#include "support/diagnostics.h"

namespace mk::lsp {

struct AnalysisOptions {
  std::vector<std::string> includeDirs;  // absolute
  std::string stdlibDir;                 // absolute
  unsigned maxErrors = 100;
};

class Analysis {
 public:
  // Checks `text` as the file `path`. `open` lists the other open documents (path, text): an
  // import of one of them reads its text rather than the file on disk.
  Analysis(const std::string& path, const std::string& text,
           const std::vector<std::pair<std::string, const std::string*>>& open, const AnalysisOptions& options);
  Analysis(const Analysis&) = delete;
  Analysis& operator=(const Analysis&) = delete;

  SourceManager sources;
  DiagnosticEngine diags{sources};
  FileId root = kNoFile;
  std::unique_ptr<Program> program;

  const SemanticIndex& index() const { return *program->index; }
  // No lexical or syntax errors in the document itself (what `mkdsl fmt` requires).
  bool parsedCleanly() const { return parsedCleanly_; }
  // The paths of the modules the program loaded besides the document.
  const std::vector<std::string>& dependencies() const { return deps_; }

  const Module* module(FileId file) const;
  const Module* rootModule() const { return program ? program->root() : nullptr; }
  const std::string& path(FileId file) const { return sources.file(file).path(); }
  std::string_view text(FileId file) const { return sources.file(file).text(); }
  // The text of a range; empty when the range is invalid.
  std::string_view source(SourceRange r) const;
  // LSP line starts of a file, computed once.
  const LineIndex& lines(FileId file) const;

 private:
  bool parsedCleanly_ = true;
  std::vector<std::string> deps_;
  mutable std::map<FileId, LineIndex> lines_;
};

}  // namespace mk::lsp
