// Parsing .mk text into the AST, and lexing it into tokens for the formatter and tools.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "frontend/ast.h"
#include "support/diagnostics.h"

namespace mk {

// Parses one file; syntax errors are reported to `diags`. The module is always returned, holding
// what could be recovered, so tools can still show the rest of a broken file.
std::unique_ptr<ast::Module> parseFile(FileId file, const SourceManager& sources,
                                       DiagnosticEngine& diags);

enum class TokenKind {
  Keyword, Ident, Int, Float, String, Punct,
  DocComment, LineComment, BlockComment, Newline, Space,
  Error,  // a character, string or comment the lexer could not make sense of
};

struct Token {
  TokenKind kind;
  std::string_view text;
  uint32_t begin = 0;  // byte offsets into the file
  uint32_t end = 0;
};

// Every token of `text`, comments and whitespace included, in order. Never fails: what cannot be
// lexed comes back as Error tokens.
std::vector<Token> lex(std::string_view text);

}  // namespace mk
