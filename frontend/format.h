// `mkdsl fmt`: the canonical layout of a .mk file.
#pragma once

#include <string>
#include <string_view>

namespace mk {

// The canonical formatting of `text`, a file that parses without errors. Only whitespace changes:
// the code and comment tokens of the result are those of `text`, in order (line comments lose
// trailing blanks, block comments have CRLF turned into LF). Formatting is idempotent. Text that
// does not lex cleanly (error tokens, malformed UTF-8) comes back unchanged.
std::string formatSource(std::string_view text);

}  // namespace mk
