// `mkdsl fmt`: a token-stream formatter driven by mk::lex().
//
// The formatter only decides the whitespace between tokens; it never reorders, adds or drops a
// code or comment token, and it checks this by lexing its own result (if the check ever failed the
// input would come back unchanged). The canonical style:
//
//   * Indentation: 4 spaces per `{` level. One statement (declaration, config field) per line:
//     a line ends after `{` and after `;`, and `}` starts its own line. An empty block is `{}`.
//     `} else {` and `} else if c {` stay on one line.
//   * Spacing: one space around binary operators (+ - * / % == != < <= > >= && || = += -= *= /=
//     -> ..) and keywords, after `,`; none inside `()` `[]`, before `,` `;` `.` `:`, after `.`
//     `@` or a unary `-` / `!` (a `-` is binary when the token before it ends an operand: a name,
//     number, string, `true`/`false`, `)` or `]`). No space before `(` after a name or
//     `static_assert` (`matvec(w, x)`, `tiled(R, K)`) nor before `[` after a name, `)` or `]`.
//     Declaration colons are `x: bf16[N]`; a colon inside `[]` is a slice, `t * 16 : +16` (no
//     space after the `+` that marks the length); `config B : A` keeps spaces on both sides.
//     Generic brackets right after `op NAME` / `fn NAME` are tight: `op f<N, K, R = 16>(`.
//   * An op's `tasks` clause goes on a continuation line, with the `{` at its end:
//
//         op matvec<N, K, R = 16>(w: bf16[N, K] tiled(R, K), x: bf16[K]) -> y: bf16[N]
//             tasks t in N / R {
//             var acc: f32[R] = 0;
//         }
//
//   * Line breaks inside a statement are never invented. Those the input had are kept (one,
//     however many there were) only inside an open `(`, `[` or generic `<`, right before `->`
//     (a signature's results) and right after `=` (a long initializer); the others are joined
//     (`a +\n b` becomes `a + b`, `tasks ...\n{` becomes `tasks ... {`). A continuation line is
//     indented one level (4 spaces) past the statement, plus one more for each further enclosing
//     bracket that has a break; a line starting with a closing bracket is indented like the line
//     that opened it. So a long op header may read
//
//         op attention<QD, S, Dh>(q: bf16[QD], k_cache: bf16[S, Dh],
//             v_cache: bf16[S, Dh], pos: i32)
//             -> o: bf16[QD]
//             tasks h in QD / Dh {
//             ...
//         }
//
//   * Annotations: at top level (`@cluster(2)` before an op) an annotation is on its own line;
//     inside a body (`@after(x) let y = f(x);`) the input's choice of same line / own line is kept.
//   * Blank lines: at most one between statements, declarations or own-line comments, kept only
//     where the input had at least one; none after `{`, before `}`, after an annotation, inside a
//     statement, or at the start of the file. No trailing whitespace; the file ends with exactly
//     one newline (an empty file stays empty).
//   * Comments: a comment that started a line stays on its own line, indented like the code
//     there (continuation comments like continuation lines). A comment that followed code on the
//     same line stays there after one space; a line comment ends the line. Multi-line block
//     comments are kept verbatim (only their first line is re-indented, and CRLF becomes LF).
#include "frontend/format.h"

#include <cstddef>
#include <vector>

#include "frontend/parse.h"

namespace mk {
namespace {

bool isComment(TokenKind k) {
  return k == TokenKind::DocComment || k == TokenKind::LineComment || k == TokenKind::BlockComment;
}
bool isLineComment(TokenKind k) { return k == TokenKind::DocComment || k == TokenKind::LineComment; }

// A comment's text as the formatter writes it.
std::string commentText(const Token& t) {
  std::string s(t.text);
  if (isLineComment(t.kind)) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\f')) s.pop_back();
    return s;
  }
  std::string r;
  r.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') continue;
    r += s[i];
  }
  return r;
}

// A code or comment token, with the number of line breaks between it and the previous one.
struct Item {
  Token tok;
  int newlinesBefore = 0;
  // Filled for code tokens:
  bool genericOpen = false;   // `<` right after `op NAME` / `fn NAME`
  bool genericClose = false;  // its matching `>`
  bool annotationEnd = false; // last token of an `@name(...)` annotation
  bool configColon = false;   // `:` in `config B : A`
};

// The significant tokens of `text`, or false when the text does not lex cleanly.
bool significantTokens(std::string_view text, std::vector<Item>& items) {
  std::vector<Token> toks = lex(text);
  uint32_t pos = 0;
  int newlines = 0;
  for (const Token& t : toks) {
    if (t.kind == TokenKind::Error || t.begin != pos || t.end < t.begin) return false;
    pos = t.end;
    if (t.kind == TokenKind::Newline) {
      ++newlines;
    } else if (t.kind == TokenKind::Space) {
      // Malformed UTF-8 is lexed as blanks; formatting would silently drop those bytes.
      for (char c : t.text)
        if (c != ' ' && c != '\t' && c != '\f') return false;
    } else {
      Item it;
      it.tok = t;
      it.newlinesBefore = newlines;
      items.push_back(it);
      newlines = 0;
    }
  }
  return pos == text.size();
}

bool is(const Token& t, std::string_view s) {
  return (t.kind == TokenKind::Punct || t.kind == TokenKind::Keyword) && t.text == s;
}

// Marks generic brackets, annotation ends and config colons, looking only at code tokens.
void markContexts(std::vector<Item>& items) {
  std::vector<size_t> code;
  for (size_t i = 0; i < items.size(); ++i)
    if (!isComment(items[i].tok.kind)) code.push_back(i);
  auto tok = [&](size_t k) -> const Token& { return items[code[k]].tok; };
  for (size_t k = 0; k < code.size(); ++k) {
    const Token& t = tok(k);
    if (is(t, "<") && k >= 2 && tok(k - 1).kind == TokenKind::Ident &&
        (is(tok(k - 2), "op") || is(tok(k - 2), "fn"))) {
      int depth = 0;
      for (size_t m = k + 1; m < code.size(); ++m) {
        const Token& u = tok(m);
        if (is(u, "(") || is(u, "[")) {
          ++depth;
        } else if (is(u, ")") || is(u, "]")) {
          if (--depth < 0) break;
        } else if (is(u, "{") || is(u, "}") || is(u, ";")) {
          break;
        } else if (is(u, ">") && depth == 0) {
          items[code[k]].genericOpen = true;
          items[code[m]].genericClose = true;
          break;
        }
      }
    } else if (is(t, "@") && k + 1 < code.size() && tok(k + 1).kind == TokenKind::Ident) {
      size_t end = k + 1;
      if (k + 2 < code.size() && is(tok(k + 2), "(")) {
        int depth = 0;
        for (size_t m = k + 2; m < code.size(); ++m) {
          const Token& u = tok(m);
          if (is(u, "(")) ++depth;
          else if (is(u, ")") && --depth == 0) { end = m; break; }
          else if (is(u, "{") || is(u, "}") || is(u, ";")) break;
        }
      }
      items[code[end]].annotationEnd = true;
    } else if (is(t, ":") && k >= 2 && tok(k - 1).kind == TokenKind::Ident && is(tok(k - 2), "config")) {
      items[code[k]].configColon = true;
    }
  }
}

class Formatter {
 public:
  explicit Formatter(const std::vector<Item>& items) : items_(items) {}

  std::string run() {
    for (const Item& it : items_) {
      if (isComment(it.tok.kind)) comment(it);
      else code(it);
    }
    if (!out_.empty()) out_ += '\n';
    return std::move(out_);
  }

 private:
  struct Open {
    char kind;            // '(', '[' or '<' (generic parameters)
    bool broken = false;  // a line break happened inside it
  };

  // Ends the current line and indents the next one.
  void lineBreak(int indent, bool blank) {
    while (!out_.empty() && (out_.back() == ' ' || out_.back() == '\t')) out_.pop_back();
    out_ += blank ? "\n\n" : "\n";
    out_.append(static_cast<size_t>(indent), ' ');
  }

  int statementIndent() const { return depth_ * 4; }

  // The indentation of a line that continues a statement. The break is inside the innermost open
  // bracket; `closer` says the line starts with that bracket's closing token.
  int continuationIndent(bool closer) {
    if (open_.empty()) return statementIndent() + 4;
    open_.back().broken = true;
    int broken = 0;
    for (size_t i = 0; i + (closer ? 1 : 0) < open_.size(); ++i) broken += open_[i].broken ? 1 : 0;
    return statementIndent() + 4 * broken;
  }

  bool blankAllowed(const Item& it) const {
    return atBoundary_ && it.newlinesBefore >= 2 && !afterOpenBrace_ && !afterAnnotation_ &&
           !out_.empty();
  }

  void comment(const Item& it) {
    bool ownLine = out_.empty() || it.newlinesBefore > 0;
    if (ownLine) {
      if (!out_.empty()) {
        bool blank = blankAllowed(it);
        lineBreak(atBoundary_ ? statementIndent() : continuationIndent(false), blank);
      }
      needBreak_ = false;
      afterOpenBrace_ = false;
      afterAnnotation_ = false;
    } else {
      bool tight = lastKind_ == Last::Code && (is(last_, "(") || is(last_, "["));
      if (!tight) out_ += ' ';
    }
    out_ += commentText(it.tok);
    if (isLineComment(it.tok.kind)) needBreak_ = true;
    lastKind_ = Last::Comment;
  }

  static bool endsOperand(const Token& t) {
    switch (t.kind) {
      case TokenKind::Ident: case TokenKind::Int: case TokenKind::Float: case TokenKind::String:
        return true;
      default:
        return is(t, ")") || is(t, "]") || is(t, "true") || is(t, "false");
    }
  }

  // Whether a space separates the previous code token from `cur` on one line.
  bool spaceBefore(const Item& cur) const {
    const Token& c = cur.tok;
    if (lastKind_ == Last::None) return false;
    if (is(c, ",") || is(c, ";") || is(c, ")") || is(c, "]") || is(c, ".")) return false;
    if (lastKind_ == Last::Comment) return true;
    const Token& p = last_;
    if (is(p, "(") || is(p, "[") || is(p, ".") || is(p, "@")) return false;
    if (lastUnary_ || lastSlicePlus_ || lastGenericOpen_) return false;
    if (cur.genericOpen || cur.genericClose) return false;
    if (is(c, "(")) return !(p.kind == TokenKind::Ident || is(p, "static_assert") || lastGenericClose_);
    if (is(c, "[")) return !(p.kind == TokenKind::Ident || is(p, ")") || is(p, "]"));
    if (is(c, ":")) return cur.configColon || (!open_.empty() && open_.back().kind == '[');
    return true;
  }

  void code(const Item& it) {
    const Token& t = it.tok;
    bool closeBrace = is(t, "}");
    bool closer = is(t, ")") || is(t, "]") || it.genericClose;

    if (closeBrace) {
      if (depth_ > 0) --depth_;
      clearOpen();
      if (lastKind_ == Last::Code && is(last_, "{")) {
        // `{}`
      } else if (!out_.empty()) {
        lineBreak(statementIndent(), false);
      }
    } else if (!out_.empty()) {
      bool brk = false;
      bool elseAfterBrace = is(t, "else") && lastKind_ == Last::Code && is(last_, "}");
      if (elseAfterBrace) brk = false;
      else if (needBreak_) brk = true;
      else if (is(t, "tasks")) brk = true;
      else if (atBoundary_ && it.newlinesBefore > 0) brk = true;
      else if (!open_.empty() && it.newlinesBefore > 0) brk = true;
      else if (it.newlinesBefore > 0 && (is(t, "->") || (lastKind_ == Last::Code && is(last_, "="))))
        brk = true;  // a declaration's results, or a long initializer, on a continuation line
      if (brk) {
        bool blank = blankAllowed(it);
        lineBreak(atBoundary_ ? statementIndent() : continuationIndent(closer), blank);
      } else if (spaceBefore(it)) {
        out_ += ' ';
      }
    }

    // Flags describing this token for the next one.
    bool sliceColon = is(t, ":") && !open_.empty() && open_.back().kind == '[';
    bool unary = (is(t, "-") && !(lastKind_ != Last::None && endsOperand(last_))) || is(t, "!");
    bool slicePlus = is(t, "+") && lastSliceColon_;

    out_ += t.text;

    needBreak_ = false;
    atBoundary_ = false;
    afterOpenBrace_ = false;
    afterAnnotation_ = false;
    if (is(t, "{")) {
      ++depth_;
      clearOpen();
      needBreak_ = atBoundary_ = afterOpenBrace_ = true;
    } else if (closeBrace) {
      needBreak_ = atBoundary_ = true;
    } else if (is(t, ";")) {
      clearOpen();
      needBreak_ = atBoundary_ = true;
    } else if (is(t, "(") || is(t, "[") || it.genericOpen) {
      open_.push_back({is(t, "(") ? '(' : is(t, "[") ? '[' : '<'});
    } else if (closer) {
      if (!open_.empty()) open_.pop_back();
    }
    if (it.annotationEnd) {
      atBoundary_ = afterAnnotation_ = true;
      if (depth_ == 0) needBreak_ = true;
    }

    last_ = t;
    lastKind_ = Last::Code;
    lastUnary_ = unary;
    lastSliceColon_ = sliceColon;
    lastSlicePlus_ = slicePlus;
    lastGenericOpen_ = it.genericOpen;
    lastGenericClose_ = it.genericClose;
  }

  void clearOpen() { open_.clear(); }

  enum class Last { None, Code, Comment };

  const std::vector<Item>& items_;
  std::string out_;
  int depth_ = 0;
  std::vector<Open> open_;
  bool atBoundary_ = true;  // no code of the current statement written yet
  bool needBreak_ = false;  // the next code token starts a line
  bool afterOpenBrace_ = false;
  bool afterAnnotation_ = false;
  Last lastKind_ = Last::None;
  Token last_{};  // the last code token written (comments aside); valid unless lastKind_ == None
  bool lastUnary_ = false, lastSliceColon_ = false, lastSlicePlus_ = false;
  bool lastGenericOpen_ = false, lastGenericClose_ = false;
};

// The code and comment tokens of `text` as the formatter must preserve them.
bool sameTokens(const std::vector<Item>& a, const std::vector<Item>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].tok.kind != b[i].tok.kind) return false;
    if (isComment(a[i].tok.kind)) {
      if (commentText(a[i].tok) != commentText(b[i].tok)) return false;
    } else if (a[i].tok.text != b[i].tok.text) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string formatSource(std::string_view text) {
  std::vector<Item> items;
  if (!significantTokens(text, items)) return std::string(text);
  markContexts(items);
  std::string out = Formatter(items).run();
  // Never change what the file means: the result must lex to the same tokens.
  std::vector<Item> check;
  if (!significantTokens(out, check) || !sameTokens(items, check)) return std::string(text);
  return out;
}

}  // namespace mk
