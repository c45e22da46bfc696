// What the checker learnt about the names of a program, for tools (the language server): every
// declaration once, every use of a name with the declaration it resolves to, and the types the
// checker gave them. checkProgram fills Program::index when CheckOptions::buildIndex is set; the
// diagnostics are the same either way.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "frontend/types.h"
#include "support/source.h"

namespace mk {

namespace ast {
struct Decl;
}

enum class SymbolKind : uint8_t {
  Const,        // a top-level const
  Config,
  ConfigField,
  Weight,       // top-level, or a group member (owner: the group)
  State,        // likewise
  Group,
  Op,
  Fn,
  Step,
  Generic,      // a generic parameter of an op or fn
  Param,        // a parameter of an op, fn or the step
  Result,       // a named result of an op
  TaskVar,
  LoopVar,
  Let,
  Var,
  LocalConst,   // a const inside an op or fn body
};

// How a kind reads in hovers: "op", "generic parameter", "config field", ...
const char* symbolKindName(SymbolKind kind);
// Whether symbols of this kind live in a body (params, locals) rather than at module level.
bool isLocalSymbol(SymbolKind kind);

struct Symbol {
  SymbolKind kind = SymbolKind::Const;
  std::string name;
  SourceRange nameRange;            // the declaring identifier: what identifies the symbol
  SourceRange range;                // the whole declaration (a statement, a parameter, ...)
  SourceRange scope;                // locals: where the name is visible; invalid for globals
  const ast::Decl* decl = nullptr;  // module-level declarations and group members
  const ast::Decl* owner = nullptr; // locals: their op, fn or step; group members: the group;
                                    // config fields: the config
  std::optional<Ty> ty;             // as the checker saw it where it was declared
  std::string doc;                  // the `///` comment
};

struct SymbolUse {
  SourceRange range;  // the name as written
  size_t symbol = 0;  // into SemanticIndex::symbols
  std::optional<Ty> ty;  // the checker's type of the name there
};

class SemanticIndex {
 public:
  using Key = std::tuple<FileId, uint32_t, uint32_t>;
  static Key key(SourceRange r) { return {r.file, r.begin, r.end}; }

  // Records a declaration; one already known (same name range) is kept and its index returned.
  size_t declare(Symbol symbol);
  // Records that `use` names the symbol declared at `declName` (the first record of a place wins:
  // unrolled loops and repeated checks see the same name many times).
  void use(SourceRange use, SourceRange declName, const Ty* ty);
  // Resolves the recorded uses against the declarations and sorts everything by position; called
  // once checking is over.
  void finish();

  std::vector<Symbol> symbols;
  std::vector<SymbolUse> uses;  // after finish(): sorted by file and position
  // Each import declaration's range -> the file of the module it loaded.
  std::map<Key, FileId> imports;
  // Each generic op or fn -> every set of generic values it was instantiated with (K -> 2048).
  std::map<const ast::Decl*, std::vector<std::map<std::string, Ty>>> instances;

  // The symbol declared with this name range, if any.
  std::optional<size_t> symbolAt(SourceRange nameRange) const;
  // The use or declaring name that covers `offset` of `file` (its end counts, so a cursor right
  // after a name finds it), preferring uses.
  struct Hit {
    size_t symbol;
    SourceRange range;        // the name under the cursor
    const SymbolUse* use;     // null on a declaration
  };
  std::optional<Hit> at(FileId file, uint32_t offset) const;

 private:
  std::map<Key, size_t> byName_;
  std::map<Key, std::pair<SourceRange, std::optional<Ty>>> pending_;  // use -> (decl name, type)
};

}  // namespace mk
