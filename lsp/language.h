// What the server knows of the language beyond the checker's index: keywords, the tile builtins
// with their signatures, dtypes and layouts with their documentation (docs/language.md), and
// small text helpers shared by the features.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mk::lsp {

const std::vector<std::string>& keywords();
bool isKeyword(std::string_view word);

struct BuiltinInfo {
  std::string name;
  std::string signature;            // max(a, b) -> elementwise maximum
  std::vector<std::string> params;  // substrings of the signature, in order
  std::string doc;
};
// The tile builtins (op bodies only), one per form of support/builtins.def: `max` and `min` have
// two forms, both listed.
const std::vector<BuiltinInfo>& builtins();
std::vector<const BuiltinInfo*> findBuiltin(std::string_view name);

struct WordInfo {
  std::string name;
  std::string detail;  // `tiled(R, C)`, `bfloat16`
  std::string doc;
};
const std::vector<WordInfo>& dtypes();
const std::vector<WordInfo>& layouts();
const WordInfo* findWord(const std::vector<WordInfo>& list, std::string_view name);

bool isIdentChar(char c);
bool isIdentifier(std::string_view s);  // [A-Za-z_][A-Za-z0-9_]*
// The identifier that covers `offset` (or ends there), as [begin, end); begin == end if none.
std::pair<uint32_t, uint32_t> identifierAt(std::string_view text, uint32_t offset);

// `text` on one line: runs of blanks become one space, `//` comments go, no blank just inside
// brackets.
std::string collapse(std::string_view text);
// `text` cut to at most `max` bytes (at a character boundary), with "…" when cut.
std::string shorten(const std::string& text, size_t max);

}  // namespace mk::lsp
