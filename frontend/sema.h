// Name resolution, constant evaluation and type/shape/layout checking of a .mk program.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/ast.h"
#include "frontend/index.h"
#include "frontend/types.h"
#include "support/diagnostics.h"

namespace mk {

struct CheckOptions {
  std::vector<std::string> includeDirs;  // -I
  std::string stdlibDir;                 // where `import std.x` looks; empty: the installed one
  std::optional<std::string> configName; // --config; the first config of the root file otherwise
  // --set NAME=VALUE: replace fields of the selected config (e.g. layers=1), formulas following.
  std::vector<std::pair<std::string, std::string>> overrides;
  // Without configName: check under every config of the root file, not just the first, reporting
  // what only a later config breaks with a note naming that config.
  bool allConfigs = false;
  // Record every declaration and every use of a name in Program::index (for the language server).
  bool buildIndex = false;
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
  // The root file's steps in program order: each is an entry of the kernel, over the same weights
  // and state (a decode step and a prefill step); the first is the default entry.
  std::vector<const ast::StepDecl*> steps;
  // With CheckOptions::buildIndex: the names of every loaded module, resolved, with their types
  // under the selected config (the first one by default).
  std::unique_ptr<SemanticIndex> index;
};

// The types the checker gave an op's body at one set of generic values, keyed by AST node
// (expressions, parameters, results, vars, task dims), for lowering it to the tile IR.
struct OpInstance {
  const ast::OpDecl* op = nullptr;
  std::map<std::string, Ty> bindings;
  std::string key;  // "matvec<K=2048, N=2048, R=16>"
  std::map<const void*, Ty> types;
};

// Receives the step while the checker walks it with every value concrete: fns inlined, layer
// loops unrolled. lowering/ builds the graph IR from these calls.
class GraphSink {
 public:
  virtual ~GraphSink() = default;
  std::string config;  // set by elaborateSteps: the config the step is elaborated for
  std::map<std::string, Ty> configValues;  // set by elaborateSteps: that config's fields, evaluated
  // A weight or state tensor, the first time it is used; a group member once per index.
  virtual int storageTensor(const ast::Decl& decl, const Ty& ty, std::optional<int64_t> groupIndex) = 0;
  // A tensor step input (scalars need no tensor).
  virtual int inputTensor(const ast::Param& param, const Ty& ty) = 0;
  struct OpCall {
    const OpInstance* instance = nullptr;
    std::vector<Ty> args;      // per op parameter
    std::vector<Ty> results;   // per op result, types only
    std::vector<int> after;    // tensors named by @after on the statement
    bool gridSync = false;     // a `sync grid;` came before it
    SourceRange call;
  };
  // An op call; returns the ids of the tensors its results become.
  virtual std::vector<int> opCall(const OpCall& call) = 0;
  virtual void stepInputs(const std::vector<std::pair<std::string, Ty>>& inputs) = 0;
  virtual void stepOutputs(const std::vector<std::pair<std::string, Ty>>& outputs) = 0;
};

// Checks the program, then (when it is clean) walks each of its steps once more, in program
// order, with the sink `sinkFor` gives for it attached. Returns false when the program has errors.
bool elaborateSteps(SourceManager& sources, DiagnosticEngine& diags, FileId root, const CheckOptions& options,
                    const std::function<GraphSink&(const ast::StepDecl&)>& sinkFor);

// Loads `root` and everything it imports, then checks the whole program. Diagnostics go to
// `diags`; the program is returned in any case with whatever could be resolved (for the selected
// config, or the first one).
std::unique_ptr<Program> checkProgram(SourceManager& sources, DiagnosticEngine& diags, FileId root,
                                      const CheckOptions& options);

}  // namespace mk
