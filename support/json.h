// Minimal JSON writing shared by the tools' machine-readable outputs.
#pragma once

#include <string>
#include <string_view>

namespace mk {

// `s` as a JSON string literal, quotes included; bytes that are not valid UTF-8 become U+FFFD.
std::string jsonQuote(std::string_view s);

}  // namespace mk
