// UTF-8 validation shared by the lexer front, JSON output and diagnostics.
#pragma once

#include <cstddef>
#include <string_view>

namespace mk {

// The length of the well-formed UTF-8 sequence starting at s[i], or 0 when the bytes there are
// not one (stray continuation bytes, truncated sequences, overlong forms, surrogates, > U+10FFFF).
size_t utf8Length(std::string_view s, size_t i);

}  // namespace mk
