// The registries: every diagnostic has a stable, unique code (notes have none); every builtin
// form is listed once, and its readers agree.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <utility>

#include "ir/builtins.h"
#include "lsp/language.h"
#include "support/diagnostics.h"

namespace {
constexpr mk::DiagKind kAll[] = {
#define MK_DIAG_KIND(Name, Code) mk::DiagKind::Name,
#include "support/diagnostic_kinds.def"
#undef MK_DIAG_KIND
};
}  // namespace

TEST_CASE("diagnostic codes are unique and well-formed") {
  std::set<std::string> codes;
  std::set<std::string> names;
  for (mk::DiagKind k : kAll) {
    std::string code(mk::diagCode(k));
    std::string name(mk::diagName(k));
    CHECK_MESSAGE(names.insert(name).second, "kind listed twice: " << name);
    if (code.empty()) continue;  // a note
    CHECK_MESSAGE(codes.insert(code).second, "code used twice: " << code << " (" << name << ")");
    CHECK_MESSAGE(code.size() == 5, name << ": " << code);
    CHECK_MESSAGE(code[0] == 'E', name << ": " << code);
    CHECK_MESSAGE(code.find_first_not_of("0123456789", 1) == std::string::npos, name << ": " << code);
  }
  CHECK(codes.size() > 100);
}

// The builtin registry (support/builtins.def), as the IR and the language server read it.
TEST_CASE("every builtin form is listed once and spells back from its IR") {
  std::set<std::pair<std::string, size_t>> forms;
  for (const mk::ir::BuiltinIr& b : mk::ir::builtinIrs()) {
    CHECK_MESSAGE(forms.insert({b.name, b.arity}).second, "form listed twice: " << b.name << "/" << b.arity);
    CHECK(mk::ir::findBuiltinIr(b.name, b.arity) == &b);
    mk::ir::Expr e;
    e.kind = b.kind;
    e.unary = b.unary;
    e.binary = b.binary;
    e.reduce = b.reduce;
    const char* spelled = mk::ir::builtinName(e);
    REQUIRE(spelled);
    CHECK(std::string(spelled) == b.name);
  }
  const auto& lsp = mk::lsp::builtins();
  REQUIRE(lsp.size() == mk::ir::builtinIrs().size());
  for (size_t i = 0; i < lsp.size(); ++i) {
    CHECK(lsp[i].name == mk::ir::builtinIrs()[i].name);
    CHECK(lsp[i].params.size() == mk::ir::builtinIrs()[i].arity);
    size_t at = 0;
    for (const std::string& p : lsp[i].params) {  // in order, inside the signature
      at = lsp[i].signature.find(p, at);
      CHECK_MESSAGE(at != std::string::npos, lsp[i].signature << ": " << p);
    }
  }
}
