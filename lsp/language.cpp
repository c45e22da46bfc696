#include "lsp/language.h"

#include <algorithm>

namespace mk::lsp {

const std::vector<std::string>& keywords() {
  static const std::vector<std::string> kKeywords = {
      "import", "const", "config", "weight", "state", "group", "op",    "fn",     "step",  "tasks",
      "in",     "inout", "let",    "var",    "store", "load",  "for",   "by",     "if",    "else",
      "return", "sync",  "as",     "static_assert", "true",  "false"};
  return kKeywords;
}

bool isKeyword(std::string_view word) {
  const auto& k = keywords();
  return std::find(k.begin(), k.end(), word) != k.end();
}

namespace {

// The parameters of a signature: the parts between its outer parentheses, split at the commas
// outside brackets ("A[M, K], x[K]" gives "A[M, K]" and "x[K]").
std::vector<std::string> signatureParams(std::string_view signature) {
  std::vector<std::string> params;
  size_t open = signature.find('(');
  if (open == std::string_view::npos) return params;
  int depth = 0;
  size_t start = open + 1;
  for (size_t i = start; i < signature.size(); ++i) {
    char c = signature[i];
    if (c == '(' || c == '[') ++depth;
    if ((c == ')' || c == ']') && depth > 0) {
      --depth;
      continue;
    }
    if ((c == ',' && depth == 0) || c == ')') {
      size_t first = signature.find_first_not_of(' ', start);
      params.emplace_back(signature.substr(first, i - first));
      start = i + 1;
      if (c == ')') break;
    }
  }
  return params;
}

}  // namespace

const std::vector<BuiltinInfo>& builtins() {
  static const std::vector<BuiltinInfo> kBuiltins = {
#define MK_BUILTIN(NAME, ARITY, RULE, IR, SIGNATURE, DOC) {NAME, SIGNATURE, signatureParams(SIGNATURE), DOC},
#include "support/builtins.def"
#undef MK_BUILTIN
  };
  return kBuiltins;
}

std::vector<const BuiltinInfo*> findBuiltin(std::string_view name) {
  std::vector<const BuiltinInfo*> out;
  for (const auto& b : builtins())
    if (b.name == name) out.push_back(&b);
  return out;
}

const std::vector<WordInfo>& dtypes() {
  static const std::vector<WordInfo> kDTypes = {
      {"bf16", "bfloat16", "A float dtype: bfloat16 (8 exponent bits, 7 mantissa bits)."},
      {"f16", "IEEE half", "A float dtype: IEEE 754 half precision."},
      {"f32", "IEEE single", "A float dtype: IEEE 754 single precision."},
      {"i32", "32-bit signed integer", "A numeric dtype: 32-bit signed integer."},
      {"bool", "boolean", "The boolean dtype (comparisons give it)."},
  };
  return kDTypes;
}

const std::vector<WordInfo>& layouts() {
  static const std::vector<WordInfo> kLayouts = {
      {"row_major", "row_major", "Last dim contiguous (C order); the default layout."},
      {"col_major", "col_major", "Rank 2: element (i, j) at j * dim0 + i."},
      {"tiled", "tiled(R, C)",
       "Rank 2, stored as R x C tiles, each tile one contiguous block; R divides dim 0, C divides dim 1."},
      {"interleave", "interleave(R)",
       "Weights only: rows assembled from several sources in alternating R-row blocks."},
      {"padded", "padded(P)", "Rank 2, row-major with a row pitch of P elements (P >= dim 1)."},
      {"swizzle", "swizzle(B)",
       "Rank 2, row-major with the 16-byte chunks of each B-byte span permuted by row; B is 32, 64 or 128."},
  };
  return kLayouts;
}

const WordInfo* findWord(const std::vector<WordInfo>& list, std::string_view name) {
  for (const auto& w : list)
    if (w.name == name) return &w;
  return nullptr;
}

bool isIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool isIdentifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), isIdentChar);
}

std::pair<uint32_t, uint32_t> identifierAt(std::string_view text, uint32_t offset) {
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(text.size()));
  uint32_t b = offset, e = offset;
  while (b > 0 && isIdentChar(text[b - 1])) --b;
  while (e < text.size() && isIdentChar(text[e])) ++e;
  if (b < e && text[b] >= '0' && text[b] <= '9') return {offset, offset};  // a number
  return {b, e};
}

std::string collapse(std::string_view text) {
  std::string out;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (!inString && c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n') ++i;
      c = ' ';
    }
    if (c == '"' && (i == 0 || text[i - 1] != '\\')) inString = !inString;
    if (!inString && (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f')) {
      if (!out.empty() && out.back() != ' ') out += ' ';
      continue;
    }
    if (!inString && (c == ')' || c == ']') && !out.empty() && out.back() == ' ') out.pop_back();
    if (!out.empty() && out.back() == ' ' && out.size() >= 2 && (out[out.size() - 2] == '(' || out[out.size() - 2] == '['))
      out.pop_back();
    out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string shorten(const std::string& text, size_t max) {
  if (text.size() <= max) return text;
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "…";
}

}  // namespace mk::lsp
