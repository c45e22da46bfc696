// UTF-8 validation shared by the lexer front, JSON output and diagnostics.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace mk {

// The length of the well-formed UTF-8 sequence starting at s[i], or 0 when the bytes there are
// not one (stray continuation bytes, truncated sequences, overlong forms, surrogates, > U+10FFFF).
inline size_t utf8Length(std::string_view s, size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  if (n == 1) return 1;
  uint32_t cp = c & (0x7f >> n);
  for (size_t k = 1; k < n; ++k) {
    auto b = static_cast<unsigned char>(s[i + k]);
    if ((b >> 6) != 2) return 0;
    cp = (cp << 6) | (b & 0x3f);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

}  // namespace mk
