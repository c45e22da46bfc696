// The registries: every diagnostic has a stable, unique code (notes have none); every builtin
// form is listed once, and its readers agree (the editors' syntax files included).
#include <doctest/doctest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "abi/json.h"
#include "ir/builtins.h"
#include "ir/target.h"
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

// The editors' syntax files name the builtins by hand (they are static grammars): each must name
// exactly the builtins of support/builtins.def.
namespace {
std::string readSource(const std::string& path) {
  std::ifstream in(std::string(MK_SOURCE_DIR) + "/" + path, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot read " << path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void checkSameBuiltins(const std::string& file, const std::set<std::string>& named) {
  std::set<std::string> registry;
  for (const mk::ir::BuiltinIr& b : mk::ir::builtinIrs()) registry.insert(b.name);
  for (const std::string& n : registry) CHECK_MESSAGE(named.count(n), file << " does not highlight builtin " << n);
  for (const std::string& n : named)
    CHECK_MESSAGE(registry.count(n), file << " highlights " << n << ", which support/builtins.def does not declare");
}
}  // namespace

TEST_CASE("the editors' syntax files name every builtin and nothing else") {
  {  // Vim / Neovim: the words of the `syn keyword mkBuiltin` lines
    const std::string file = "editors/nvim/syntax/mk.vim";
    std::istringstream lines(readSource(file));
    std::set<std::string> named;
    for (std::string line; std::getline(lines, line);) {
      std::istringstream words(line);
      std::string syn, keyword, group;
      if (!(words >> syn >> keyword >> group) || syn != "syn" || keyword != "keyword" || group != "mkBuiltin") continue;
      for (std::string w; words >> w;) named.insert(w);
    }
    checkSameBuiltins(file, named);
  }
  {  // VS Code: the alternatives of the pattern whose capture is support.function.builtin.mkdsl
    const std::string file = "editors/vscode/syntaxes/mkdsl.tmLanguage.json";
    const mk::abi::JsonValue grammar = mk::abi::parseJson(readSource(file));
    std::set<std::string> named;
    int patterns = 0;
    for (const mk::abi::JsonMember& rule : grammar.get("repository")->members) {
      const mk::abi::JsonValue* ps = rule.second.get("patterns");
      for (const mk::abi::JsonValue& p : ps ? ps->items : std::vector<mk::abi::JsonValue>{}) {
        const mk::abi::JsonValue* captures = p.get("captures");
        const mk::abi::JsonValue* first = captures ? captures->get("1") : nullptr;
        const mk::abi::JsonValue* scope = first ? first->get("name") : nullptr;
        if (!scope || scope->text != "support.function.builtin.mkdsl") continue;
        ++patterns;
        const std::string& match = p.get("match")->text;  // \b(exp|log|...)\s*(?=\()
        const size_t open = match.find('('), close = match.find(')', open);
        REQUIRE_MESSAGE((open != std::string::npos && close != std::string::npos), file << ": " << match);
        std::istringstream alternatives(match.substr(open + 1, close - open - 1));
        for (std::string w; std::getline(alternatives, w, '|');) named.insert(w);
      }
    }
    CHECK(patterns == 1);
    checkSameBuiltins(file, named);
  }
}

// The matrix-instruction granularity of each architecture (ArchDesc::mma), and why a tile
// product does not fit it.
TEST_CASE("every architecture has a matrix-instruction shape, and mmaMisfit says what does not divide") {
  for (const mk::ir::ArchDesc& a : mk::ir::archs()) {
    CAPTURE(a.name);
    CHECK(a.mma.m > 0);
    CHECK(a.mma.n > 0);
    CHECK(a.mma.k > 0);
  }
  const mk::ir::ArchDesc* sm80 = mk::ir::findArch("sm_80");
  const mk::ir::ArchDesc* sm90a = mk::ir::findArch("sm_90a");
  const mk::ir::ArchDesc* gfx942 = mk::ir::findArch("gfx942");
  const mk::ir::ArchDesc* gfx90a = mk::ir::findArch("gfx90a");
  REQUIRE(sm80);
  REQUIRE(sm90a);
  REQUIRE(gfx942);
  REQUIRE(gfx90a);
  // mma.sync m16n8k16: N a multiple of 8 fits NVPTX but not MFMA's 16.
  CHECK(!mk::ir::mmaMisfit(*sm80, 16, 8, 16));
  CHECK(!mk::ir::mmaMisfit(*sm90a, 64, 24, 2048));
  CHECK(!mk::ir::mmaMisfit(*gfx942, 32, 64, 64));
  CHECK(mk::ir::mmaMisfit(*gfx90a, 16, 8, 16) == "N = 8 is not a multiple of 16 (gfx90a's MFMA 16x16x16)");
  CHECK(mk::ir::mmaMisfit(*sm80, 3, 8, 40) ==
        "M = 3 is not a multiple of 16, K = 40 is not a multiple of 16 (sm_80's mma.sync m16n8k16)");
  CHECK(mk::ir::mmaMisfit(*sm90a, 0, 8, 16) == "M = 0 is not a multiple of 16 (sm_90a's mma.sync m16n8k16)");
}
