// Name resolution, constant evaluation and type/shape/layout checking of a .mk program.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/ast.h"
#include "frontend/types.h"
#include "support/diagnostics.h"

namespace mk {

struct CheckOptions {
  std::vector<std::string> includeDirs;  // -I
  std::string stdlibDir;                 // where `import std.x` looks; empty: the installed one
  std::optional<std::string> configName; // --config; the first config of the root file otherwise
  // Without configName: check under every config of the root file, not just the first, reporting
  // what only a later config breaks with a note naming that config.
  bool allConfigs = false;
};

// The installed stdlib folder: $MKDSL_STDLIB when set, else the one the build knows.
std::string defaultStdlibDir();

// A loaded module: the root file or one of its imports.
struct Module {
  std::string name;  // the import path (std.nn) or the root file's path
  std::unique_ptr<ast::Module> ast;
  bool isRoot = false;
  SourceRange importedAt;  // the first import that loaded it
  std::vector<Module*> imports;
};

// What checking learnt, for the phases after it and for tools.
struct Program {
  std::vector<std::unique_ptr<Module>> modules;  // the root first
  Module* root() const { return modules.empty() ? nullptr : modules.front().get(); }
  const ast::ConfigDecl* config = nullptr;        // the selected config, if any
  std::map<std::string, Ty> configValues;         // its fields, evaluated
  const ast::StepDecl* step = nullptr;
};

// Loads `root` and everything it imports, then checks the whole program. Diagnostics go to
// `diags`; the program is returned in any case with whatever could be resolved (for the selected
// config, or the first one).
std::unique_ptr<Program> checkProgram(SourceManager& sources, DiagnosticEngine& diags, FileId root,
                                      const CheckOptions& options);

}  // namespace mk
