// The diagnostic registry: every error has a stable, unique code; notes have none.
#include <doctest/doctest.h>

#include <set>
#include <string>

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
