// Parse tree -> AST. ANTLR's types stay in this file.
#include "frontend/parse.h"

#include <antlr4-runtime.h>

#include <cerrno>
#include <cstdlib>

#include "MkLexer.h"
#include "MkParser.h"
#include "abi/utf8.h"

namespace mk {

MK_DIAGNOSTIC(InvalidCharacter, Error, "invalid character '{0}'", std::string);
MK_DIAGNOSTIC(UnterminatedString, Error, "unterminated string literal: a string must end with '\"' on the same line");
MK_DIAGNOSTIC(UnterminatedComment, Error, "unterminated block comment: '/*' has no matching '*/'");
MK_DIAGNOSTIC(BadEscape, Error, "unknown escape sequence '\\{0}' in string; the escapes are \\\", \\\\, \\n and \\t", std::string);
MK_DIAGNOSTIC(SyntaxError, Error, "expected {0}, found {1}", std::string, std::string);
MK_DIAGNOSTIC(IntegerTooLarge, Error, "integer literal '{0}' does not fit in 64 bits", std::string);
MK_DIAGNOSTIC(FloatOutOfRange, Error, "float literal '{0}' is out of range", std::string);
MK_DIAGNOSTIC(NestingTooDeep, Error, "brackets nested deeper than {0} levels", unsigned);
MK_DIAGNOSTIC(OpeningBracket, Note, "the outermost of them opens here");
MK_DIAGNOSTIC(UnclosedBracket, Note, "this '{0}' is not closed", std::string);
MK_DIAGNOSTIC(ChainTooLong, Error, "more than {0} operators in one expression; split it with let or const", unsigned);

MK_DIAGNOSTIC(InvalidUtf8, Error, "invalid UTF-8 byte 0x{0:02X}; .mk files are UTF-8", unsigned);

namespace {

using P = MkParser;

// ANTLR's C++ runtime counts code points and throws on malformed UTF-8. This keeps a clean copy
// of the text (malformed bytes turned into spaces) and maps code point indices back to bytes.
struct CodePoints {
  std::string clean;
  std::vector<uint32_t> byteOf;  // code point index -> byte offset; one extra entry for the end
  std::vector<uint32_t> badBytes;

  explicit CodePoints(std::string_view text) : clean(text) {
    // ANTLR drops a leading byte order mark, which would shift every offset: blank it instead.
    if (clean.compare(0, 3, "\xEF\xBB\xBF") == 0) clean.replace(0, 3, "   ");
    for (uint32_t i = 0; i < clean.size();) {
      auto n = static_cast<uint32_t>(utf8Length(clean, i));
      if (n == 0) {
        badBytes.push_back(i);
        clean[i] = ' ';
        n = 1;
      }
      byteOf.push_back(i);
      i += n;
    }
    byteOf.push_back(static_cast<uint32_t>(clean.size()));
  }
  uint32_t byte(size_t cp) const { return cp < byteOf.size() ? byteOf[cp] : byteOf.back(); }
  // The byte range of a token, [start, stop] in code points.
  SourceRange range(FileId f, size_t start, size_t stop) const { return {f, byte(start), byte(stop + 1)}; }
};
constexpr unsigned kMaxNesting = 200;

// How a token is named in "expected X, found Y".
std::string describeTokenType(const antlr4::dfa::Vocabulary& vocab, size_t type) {
  if (type == antlr4::Token::EOF) return "end of file";
  switch (type) {
    case MkLexer::IDENT: return "a name";
    case MkLexer::INT: return "an integer";
    case MkLexer::FLOAT: return "a number";
    case MkLexer::STRING: return "a string";
    default: break;
  }
  std::string lit = vocab.getLiteralName(type);
  if (!lit.empty()) return lit;  // already quoted: 'foo'
  return vocab.getSymbolicName(type);
}

std::string describeFound(antlr4::Token* t) {
  if (!t || t->getType() == antlr4::Token::EOF) return "end of file";
  std::string text = t->getText();
  switch (t->getType()) {
    case MkLexer::IDENT: return "name '" + text + "'";
    case MkLexer::INT:
    case MkLexer::FLOAT: return "number '" + text + "'";
    case MkLexer::STRING: return "string " + text;
    default: return "'" + text + "'";
  }
}

bool isBadToken(size_t type) {
  return type == MkLexer::ERROR_CHAR || type == MkLexer::BAD_STRING || type == MkLexer::BAD_COMMENT;
}

void reportLexErrors(const std::vector<antlr4::Token*>& toks, FileId file, const CodePoints& cps,
                     DiagnosticEngine& diags) {
  for (auto* t : toks) {
    if (!isBadToken(t->getType())) continue;
    SourceRange r = cps.range(file, t->getStartIndex(), t->getStopIndex());
    switch (t->getType()) {
      case MkLexer::ERROR_CHAR: diags.emit(r, InvalidCharacter, t->getText()); break;
      case MkLexer::BAD_STRING: diags.emit(r, UnterminatedString); break;
      default: diags.emit({file, r.begin, r.begin + 2}, UnterminatedComment); break;
    }
  }
}

class ErrorListener : public antlr4::BaseErrorListener {
 public:
  ErrorListener(FileId file, const CodePoints& cps, DiagnosticEngine& diags)
      : file_(file), cps_(cps), diags_(diags) {}

  void syntaxError(antlr4::Recognizer* recognizer, antlr4::Token* offending, size_t, size_t,
                   const std::string&, std::exception_ptr) override {
    auto* parser = dynamic_cast<antlr4::Parser*>(recognizer);
    if (!parser || !offending) return;
    SourceRange r = rangeOf(offending);
    // Bad tokens were reported by reportLexErrors; whatever the parser expected there matters less.
    if (isBadToken(offending->getType())) return;
    antlr4::misc::IntervalSet expected = parser->getExpectedTokens();
    std::vector<std::string> names;
    for (size_t t : expected.toList()) {
      std::string n = describeTokenType(parser->getVocabulary(), t);
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    }
    std::string want;
    if (names.empty()) {
      want = "something else";
    } else if (names.size() > 6) {
      want = summarize(names);
    } else {
      for (size_t i = 0; i < names.size(); ++i) {
        if (i + 1 == names.size() && i > 0) want += " or ";
        else if (i > 0) want += ", ";
        want += names[i];
      }
    }
    // Where a bracket is still open, the cause is usually its missing partner: `(1 + 2;` lacks
    // its ')', whatever the parser's state happened to expect.
    auto* open = unclosedBracket(parser, offending);
    if (open && open->getType() != MkLexer::LBRACE) want = open->getType() == MkLexer::LPAREN ? "')'" : "']'";
    auto diag = diags_.emit(r, SyntaxError, want, describeFound(offending));
    if (open) diag.note(rangeOf(open), UnclosedBracket, open->getText());
  }

  // The innermost bracket opened before `at` and not closed by then, if any.
  static antlr4::Token* unclosedBracket(antlr4::Parser* parser, antlr4::Token* at) {
    auto* stream = dynamic_cast<antlr4::BufferedTokenStream*>(parser->getTokenStream());
    if (!stream) return nullptr;
    std::vector<antlr4::Token*> stack;
    for (size_t i = 0; i < at->getTokenIndex() && i < stream->size(); ++i) {
      antlr4::Token* t = stream->get(i);
      switch (t->getType()) {
        case MkLexer::LPAREN: case MkLexer::LBRACK: case MkLexer::LBRACE: stack.push_back(t); break;
        case MkLexer::RPAREN: case MkLexer::RBRACK: case MkLexer::RBRACE:
          if (!stack.empty()) stack.pop_back();
          break;
        default: break;
      }
    }
    if (stack.empty()) return nullptr;
    // Only worth a note when the parser gave up at a place a closing bracket could stand.
    size_t ty = at->getType();
    bool closer = ty == antlr4::Token::EOF || ty == MkLexer::SEMI || ty == MkLexer::RBRACE || ty == MkLexer::RPAREN ||
                  ty == MkLexer::RBRACK;
    return closer ? stack.back() : nullptr;
  }

  SourceRange rangeOf(antlr4::Token* t) const {
    if (t->getType() == antlr4::Token::EOF) {
      uint32_t at = cps_.byte(t->getStartIndex());
      return {file_, at, at};
    }
    return cps_.range(file_, t->getStartIndex(), t->getStopIndex());
  }

 private:
  // Long expectation lists read better by category than in full.
  static std::string summarize(const std::vector<std::string>& names) {
    auto has = [&](const char* n) { return std::find(names.begin(), names.end(), n) != names.end(); };
    if (has("'op'") && has("'fn'")) return "a declaration (import, const, config, weight, state, group, op, fn, step)";
    if (has("'let'") && has("'store'")) return has("'}'") ? "a statement or '}'" : "a statement";
    if (has("a name") && has("an integer")) return "an expression";
    std::string s;
    for (size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + names[i];
    return s;
  }

  FileId file_;
  const CodePoints& cps_;
  DiagnosticEngine& diags_;
};

class Builder {
 public:
  Builder(FileId file, const CodePoints& cps, antlr4::BufferedTokenStream& tokens, DiagnosticEngine& diags)
      : file_(file), cps_(cps), tokens_(tokens), diags_(diags) {}

  std::unique_ptr<ast::Module> build(P::FileContext* ctx) {
    auto mod = std::make_unique<ast::Module>();
    mod->file = file_;
    for (auto* d : ctx->topDecl())
      if (auto decl = topDecl(d)) mod->decls.push_back(std::move(decl));
    return mod;
  }

 private:
  SourceRange range(antlr4::ParserRuleContext* ctx) const {
    if (!ctx || !ctx->getStart()) return {file_, 0, 0};
    auto* start = ctx->getStart();
    auto* stop = ctx->getStop();
    uint32_t b = cps_.byte(start->getStartIndex());
    uint32_t e = b;
    if (stop && stop->getType() != antlr4::Token::EOF && stop->getStopIndex() + 1 >= start->getStartIndex())
      e = cps_.byte(stop->getStopIndex() + 1);
    if (start->getType() == antlr4::Token::EOF) e = b;
    return {file_, b, e};
  }
  SourceRange range(antlr4::Token* t) const {
    if (!t || t->getStartIndex() == INVALID_INDEX) return {file_, 0, 0};
    if (t->getType() == antlr4::Token::EOF) return {file_, cps_.byte(t->getStartIndex()), cps_.byte(t->getStartIndex())};
    return cps_.range(file_, t->getStartIndex(), t->getStopIndex());
  }
  SourceRange range(antlr4::tree::TerminalNode* n) const { return range(n ? n->getSymbol() : nullptr); }

  // A name token; a token the parser made up while recovering has no text worth keeping.
  ast::Ident ident(antlr4::tree::TerminalNode* n) const {
    if (!n || n->getSymbol()->getStartIndex() == INVALID_INDEX) return {"", {file_, 0, 0}};
    if (n->getSymbol()->getType() != MkLexer::IDENT) return {"", range(n)};
    return {n->getText(), range(n)};
  }

  // Whether only blanks stand between the start of t's line and t.
  bool startsLine(antlr4::Token* t) {
    for (size_t i = t->getTokenIndex(); i-- > 0;) {
      size_t ty = tokens_.get(i)->getType();
      if (ty == MkLexer::NEWLINE) return true;
      if (ty != MkLexer::WS) return false;
    }
    return true;
  }

  std::string docBefore(antlr4::ParserRuleContext* ctx) {
    if (!ctx || !ctx->getStart()) return {};
    size_t idx = ctx->getStart()->getTokenIndex();
    if (idx == INVALID_INDEX) return {};
    std::vector<antlr4::Token*> hidden = tokens_.getHiddenTokensToLeft(idx);
    // Only the doc lines directly above count: a blank line or plain comment cuts them off.
    std::vector<std::string> lines;
    int newlines = 0;
    for (auto it = hidden.rbegin(); it != hidden.rend(); ++it) {
      auto* t = *it;
      if (t->getType() == MkLexer::NEWLINE) {
        if (++newlines > 1) break;
      } else if (t->getType() == MkLexer::WS) {
      } else if (t->getType() == MkLexer::DOC_COMMENT) {
        if (!startsLine(t)) break;  // `code; /// note` documents that line, not the next one
        std::string text = t->getText().substr(3);
        if (!text.empty() && text[0] == ' ') text.erase(0, 1);
        lines.push_back(text);
        newlines = 0;
      } else {
        break;
      }
    }
    std::string doc;
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
      if (!doc.empty()) doc += '\n';
      doc += *it;
    }
    return doc;
  }

  std::optional<std::string> stringLit(antlr4::tree::TerminalNode* n) {
    if (!n || n->getSymbol()->getStartIndex() == INVALID_INDEX) return std::nullopt;
    std::string raw = n->getText();
    if (raw.size() < 2) return std::string();
    std::string out;
    SourceRange r = range(n);
    for (size_t i = 1; i + 1 < raw.size(); ++i) {
      if (raw[i] != '\\') {
        out += raw[i];
        continue;
      }
      char c = raw[++i];
      switch (c) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        default: {
          uint32_t at = r.begin + static_cast<uint32_t>(i) - 1;
          diags_.emit({file_, at, at + 2}, BadEscape, std::string(1, c));
        }
      }
    }
    return out;
  }

  template <typename T>
  std::unique_ptr<ast::Decl> withDoc(std::unique_ptr<T> d, antlr4::ParserRuleContext* ctx) {
    d->doc = docBefore(ctx);
    return d;
  }

  std::unique_ptr<ast::Decl> topDecl(P::TopDeclContext* c) {
    if (auto* x = c->importDecl()) {
      auto d = std::make_unique<ast::ImportDecl>(range(x));
      if (x->qualName())
        for (auto* id : x->qualName()->IDENT()) d->path.push_back(ident(id));
      return withDoc(std::move(d), c);
    }
    if (auto* x = c->constDecl()) {
      auto d = std::make_unique<ast::ConstDecl>(range(x));
      d->name = ident(x->IDENT());
      if (x->typeRef()) d->type = typeRef(x->typeRef());
      d->value = expr(x->expr());
      return withDoc(std::move(d), c);
    }
    if (auto* x = c->configDecl()) {
      auto d = std::make_unique<ast::ConfigDecl>(range(x));
      auto ids = x->IDENT();
      if (!ids.empty()) d->name = ident(ids[0]);
      if (ids.size() > 1) d->base = ident(ids[1]);
      for (auto* f : x->configField())
        d->fields.push_back({ident(f->IDENT()), expr(f->expr()), range(f), docBefore(f)});
      return withDoc(std::move(d), c);
    }
    if (auto* x = c->weightDecl()) return withDoc(weightDecl(x), c);
    if (auto* x = c->stateDecl()) return withDoc(stateDecl(x), c);
    if (auto* x = c->groupDecl()) {
      auto d = std::make_unique<ast::GroupDecl>(range(x));
      auto ids = x->IDENT();
      if (!ids.empty()) d->name = ident(ids[0]);
      if (ids.size() > 1) d->var = ident(ids[1]);
      auto es = x->expr();
      if (es.size() > 0) d->lo = expr(es[0]);
      if (es.size() > 1) d->hi = expr(es[1]);
      for (auto* m : x->groupMember()) {
        if (m->weightDecl()) d->members.push_back(withDoc(weightDecl(m->weightDecl()), m));
        else if (m->stateDecl()) d->members.push_back(withDoc(stateDecl(m->stateDecl()), m));
      }
      return withDoc(std::move(d), c);
    }
    if (auto* x = c->opDecl()) {
      auto d = std::make_unique<ast::OpDecl>(range(x));
      for (auto* a : x->annotation()) d->annotations.push_back(annotation(a));
      d->name = ident(x->IDENT());
      if (x->genericParams()) d->generics = generics(x->genericParams());
      if (x->paramList()) d->params = params(x->paramList());
      if (auto* rs = x->opResults())
        for (auto* r : rs->namedResult())
          d->results.push_back({ident(r->IDENT()), typeRef(r->typeRef()), range(r)});
      for (auto* t : x->taskDim()) d->tasks.push_back({ident(t->IDENT()), expr(t->expr()), range(t)});
      d->body = block(x->block());
      return withDoc(std::move(d), c);
    }
    if (auto* x = c->fnDecl()) {
      auto d = std::make_unique<ast::FnDecl>(range(x));
      d->name = ident(x->IDENT());
      if (x->genericParams()) d->generics = generics(x->genericParams());
      if (x->paramList()) d->params = params(x->paramList());
      if (x->fnResults()) d->results = fnResults(x->fnResults(), d->tupleResult);
      d->body = block(x->block());
      return withDoc(std::move(d), c);
    }
    if (auto* x = c->stepDecl()) {
      auto d = std::make_unique<ast::StepDecl>(range(x));
      d->name = ident(x->IDENT());
      if (x->paramList()) d->params = params(x->paramList());
      if (x->fnResults()) d->results = fnResults(x->fnResults(), d->tupleResult);
      d->body = block(x->block());
      return withDoc(std::move(d), c);
    }
    if (auto* x = c->staticAssert()) {
      auto d = std::make_unique<ast::AssertDecl>(range(x));
      d->cond = expr(x->expr());
      if (x->STRING()) d->message = stringLit(x->STRING());
      return withDoc(std::move(d), c);
    }
    return nullptr;
  }

  std::unique_ptr<ast::WeightDecl> weightDecl(P::WeightDeclContext* x) {
    auto d = std::make_unique<ast::WeightDecl>(range(x));
    d->name = ident(x->IDENT());
    d->type = typeRef(x->typeRef());
    if (auto* s = x->weightSource()) {
      d->sourceList = s->LBRACK() != nullptr;
      for (auto* str : s->STRING())
        if (auto text = stringLit(str)) d->sources.push_back({*text, range(str)});
    }
    return d;
  }
  std::unique_ptr<ast::StateDecl> stateDecl(P::StateDeclContext* x) {
    auto d = std::make_unique<ast::StateDecl>(range(x));
    d->name = ident(x->IDENT());
    d->type = typeRef(x->typeRef());
    return d;
  }

  std::vector<ast::GenericParam> generics(P::GenericParamsContext* g) {
    std::vector<ast::GenericParam> out;
    for (auto* p : g->genericParam()) {
      ast::GenericParam gp;
      auto ids = p->IDENT();
      if (!ids.empty()) gp.name = ident(ids[0]);
      if (ids.size() > 1) gp.type = ident(ids[1]);
      if (p->primary()) {
        gp.defaultValue = primary(p->primary());
        if (p->MINUS())
          gp.defaultValue = std::make_unique<ast::UnaryExpr>(SourceRange::cover(range(p->MINUS()), gp.defaultValue->range),
                                                             ast::UnaryOp::Neg, std::move(gp.defaultValue), range(p->MINUS()));
      }
      gp.range = range(p);
      out.push_back(std::move(gp));
    }
    return out;
  }
  std::vector<ast::Param> params(P::ParamListContext* l) {
    std::vector<ast::Param> out;
    for (auto* p : l->param())
      out.push_back({ident(p->IDENT()), p->INOUT() != nullptr, typeRef(p->typeRef()), range(p)});
    return out;
  }
  std::vector<ast::Result> fnResults(P::FnResultsContext* r, bool& tuple) {
    std::vector<ast::Result> out;
    tuple = r->LPAREN() != nullptr;
    if (r->typeRef()) {
      out.push_back({std::nullopt, typeRef(r->typeRef()), range(r->typeRef())});
      return out;
    }
    for (auto* f : r->fnResult()) {
      ast::Result res{std::nullopt, typeRef(f->typeRef()), range(f)};
      if (f->IDENT()) res.name = ident(f->IDENT());
      out.push_back(std::move(res));
    }
    return out;
  }

  ast::TypeRef typeRef(P::TypeRefContext* t) {
    ast::TypeRef out;
    if (!t) return out;
    out.name = ident(t->IDENT());
    out.range = range(t);
    out.hasShape = t->LBRACK() != nullptr;
    for (auto* e : t->expr()) out.dims.push_back(expr(e));
    if (auto* l = t->layout()) {
      ast::Layout lay;
      lay.name = ident(l->IDENT());
      for (auto* e : l->expr()) lay.args.push_back(expr(e));
      lay.range = range(l);
      out.layout = std::move(lay);
    }
    return out;
  }

  ast::Annotation annotation(P::AnnotationContext* a) {
    ast::Annotation out;
    out.name = ident(a->IDENT());
    for (auto* e : a->expr()) out.args.push_back(expr(e));
    out.range = range(a);
    return out;
  }

  ast::Block block(P::BlockContext* b) {
    ast::Block out;
    if (!b) return out;
    out.range = range(b);
    for (auto* s : b->stmt())
      if (auto st = stmt(s)) out.stmts.push_back(std::move(st));
    return out;
  }

  ast::StmtPtr stmt(P::StmtContext* s) {
    SourceRange r = range(s);
    if (auto* x = dynamic_cast<P::LetStmtContext*>(s)) {
      auto st = std::make_unique<ast::LetStmt>(r);
      for (auto* a : x->annotation()) st->annotations.push_back(annotation(a));
      if (auto* p = x->letPattern()) {
        st->tuplePattern = p->LPAREN() != nullptr;
        for (auto* id : p->IDENT()) st->names.push_back(ident(id));
      }
      if (x->typeRef()) st->type = typeRef(x->typeRef());
      st->value = expr(x->expr());
      return st;
    }
    if (auto* x = dynamic_cast<P::VarStmtContext*>(s)) {
      auto st = std::make_unique<ast::VarStmt>(r);
      st->name = ident(x->IDENT());
      st->type = typeRef(x->typeRef());
      if (x->expr()) st->init = expr(x->expr());
      return st;
    }
    if (auto* x = dynamic_cast<P::ConstStmtContext*>(s)) {
      auto st = std::make_unique<ast::ConstStmt>(r);
      st->name = ident(x->IDENT());
      if (x->typeRef()) st->type = typeRef(x->typeRef());
      st->value = expr(x->expr());
      return st;
    }
    if (auto* x = dynamic_cast<P::AssignStmtContext*>(s)) {
      auto st = std::make_unique<ast::AssignStmt>(r);
      auto es = x->expr();
      if (es.size() > 0) st->target = expr(es[0]);
      if (es.size() > 1) st->value = expr(es[1]);
      if (auto* op = x->assignOp()) {
        st->opRange = range(op);
        st->op = op->PLUS_ASSIGN() ? ast::AssignOp::Add
                 : op->MINUS_ASSIGN() ? ast::AssignOp::Sub
                 : op->STAR_ASSIGN() ? ast::AssignOp::Mul
                 : op->SLASH_ASSIGN() ? ast::AssignOp::Div
                                      : ast::AssignOp::Set;
      }
      return st;
    }
    if (auto* x = dynamic_cast<P::StoreStmtContext*>(s)) {
      auto st = std::make_unique<ast::StoreStmt>(r);
      auto es = x->expr();
      if (es.size() > 0) st->target = expr(es[0]);
      if (es.size() > 1) st->value = expr(es[1]);
      return st;
    }
    if (auto* x = dynamic_cast<P::ForStmtContext*>(s)) {
      auto st = std::make_unique<ast::ForStmt>(r);
      st->var = ident(x->IDENT());
      auto es = x->expr();
      if (es.size() > 0) st->lo = expr(es[0]);
      if (es.size() > 1) st->hi = expr(es[1]);
      if (es.size() > 2) st->step = expr(es[2]);
      st->body = block(x->block());
      return st;
    }
    if (auto* x = dynamic_cast<P::IfStmtContext*>(s)) {
      auto st = std::make_unique<ast::IfStmt>(r);
      st->cond = expr(x->expr());
      st->then = block(x->block());
      if (x->elseBranch()) st->otherwise = elseBranch(x->elseBranch());
      return st;
    }
    if (auto* x = dynamic_cast<P::ReturnStmtContext*>(s)) {
      auto st = std::make_unique<ast::ReturnStmt>(r);
      if (x->expr()) st->value = expr(x->expr());
      return st;
    }
    if (auto* x = dynamic_cast<P::SyncStmtContext*>(s)) {
      auto st = std::make_unique<ast::SyncStmt>(r);
      st->scope = ident(x->IDENT());
      return st;
    }
    if (auto* x = dynamic_cast<P::AssertStmtContext*>(s)) {
      auto st = std::make_unique<ast::AssertStmt>(r);
      st->cond = expr(x->expr());
      if (x->STRING()) st->message = stringLit(x->STRING());
      return st;
    }
    if (auto* x = dynamic_cast<P::ExprStmtContext*>(s)) {
      auto st = std::make_unique<ast::ExprStmt>(r);
      for (auto* a : x->annotation()) st->annotations.push_back(annotation(a));
      st->expr = expr(x->expr());
      return st;
    }
    return nullptr;
  }

  ast::Block elseBranch(P::ElseBranchContext* e) {
    if (e->block() && !e->IF()) return block(e->block());
    // `else if c { } else ...` is a block holding one if statement.
    ast::Block out;
    out.range = range(e);
    auto st = std::make_unique<ast::IfStmt>(range(e));
    st->cond = expr(e->expr());
    st->then = block(e->block());
    if (e->elseBranch()) st->otherwise = elseBranch(e->elseBranch());
    out.stmts.push_back(std::move(st));
    return out;
  }

  // A placeholder where recovery left no expression, so later phases never see null.
  ast::ExprPtr missing(SourceRange r) { return std::make_unique<ast::NameExpr>(r, ""); }

  ast::ExprPtr expr(P::ExprContext* e) {
    if (!e) return missing({file_, 0, 0});
    SourceRange r = range(e);
    if (auto* x = dynamic_cast<P::PrimaryExprContext*>(e)) return primary(x->primary());
    if (auto* x = dynamic_cast<P::IndexExprContext*>(e)) {
      auto out = std::make_unique<ast::IndexExpr>(r, expr(x->expr()));
      for (auto* s : x->slice()) {
        auto es = s->expr();
        ast::Slice sl;
        sl.start = es.size() > 0 ? expr(es[0]) : missing(range(s));
        if (s->COLON()) sl.length = es.size() > 1 ? expr(es[1]) : missing(range(s));
        sl.range = range(s);
        out->slices.push_back(std::move(sl));
      }
      return out;
    }
    if (auto* x = dynamic_cast<P::FieldExprContext*>(e))
      return std::make_unique<ast::FieldExpr>(r, expr(x->expr()), ident(x->IDENT()));
    if (auto* x = dynamic_cast<P::LoadExprContext*>(e))
      return std::make_unique<ast::LoadExpr>(r, expr(x->expr()));
    if (auto* x = dynamic_cast<P::CastExprContext*>(e))
      return std::make_unique<ast::CastExpr>(r, expr(x->expr()), ident(x->IDENT()));
    if (auto* x = dynamic_cast<P::UnaryExprContext*>(e)) {
      auto op = x->op && x->op->getType() == MkLexer::NOT ? ast::UnaryOp::Not : ast::UnaryOp::Neg;
      return std::make_unique<ast::UnaryExpr>(r, op, expr(x->expr()), range(x->op));
    }
    if (auto* x = dynamic_cast<P::BinaryExprContext*>(e)) {
      auto es = x->expr();
      ast::BinaryOp op = ast::BinaryOp::Add;
      switch (x->op ? x->op->getType() : 0) {
        case MkLexer::STAR: op = ast::BinaryOp::Mul; break;
        case MkLexer::SLASH: op = ast::BinaryOp::Div; break;
        case MkLexer::PERCENT: op = ast::BinaryOp::Mod; break;
        case MkLexer::PLUS: op = ast::BinaryOp::Add; break;
        case MkLexer::MINUS: op = ast::BinaryOp::Sub; break;
        case MkLexer::LT: op = ast::BinaryOp::Lt; break;
        case MkLexer::LE: op = ast::BinaryOp::Le; break;
        case MkLexer::GT: op = ast::BinaryOp::Gt; break;
        case MkLexer::GE: op = ast::BinaryOp::Ge; break;
        case MkLexer::EQ: op = ast::BinaryOp::Eq; break;
        case MkLexer::NE: op = ast::BinaryOp::Ne; break;
        case MkLexer::AND: op = ast::BinaryOp::And; break;
        case MkLexer::OR: op = ast::BinaryOp::Or; break;
        default: break;
      }
      return std::make_unique<ast::BinaryExpr>(r, op, es.size() > 0 ? expr(es[0]) : missing(r),
                                               es.size() > 1 ? expr(es[1]) : missing(r), range(x->op));
    }
    return missing(r);
  }

  ast::ExprPtr primary(P::PrimaryContext* p) {
    if (!p) return missing({file_, 0, 0});
    SourceRange r = range(p);
    if (auto* x = dynamic_cast<P::IntLitContext*>(p)) {
      std::string digits;
      for (char c : x->INT()->getText())
        if (c != '_') digits += c;
      errno = 0;
      char* end = nullptr;
      unsigned long long v = std::strtoull(digits.c_str(), &end, 10);
      if (errno == ERANGE || v > static_cast<unsigned long long>(INT64_MAX)) {
        diags_.emit(r, IntegerTooLarge, x->getText());
        v = 0;
      }
      return std::make_unique<ast::IntLit>(r, static_cast<int64_t>(v));
    }
    if (auto* x = dynamic_cast<P::FloatLitContext*>(p)) {
      std::string digits;
      for (char c : x->FLOAT()->getText())
        if (c != '_') digits += c;
      errno = 0;
      double v = std::strtod(digits.c_str(), nullptr);
      if (errno == ERANGE && (v > 1.0 || v < -1.0)) {
        diags_.emit(r, FloatOutOfRange, x->getText());
        v = 0;
      }
      return std::make_unique<ast::FloatLit>(r, v);
    }
    if (auto* x = dynamic_cast<P::BoolLitContext*>(p)) return std::make_unique<ast::BoolLit>(r, x->TRUE() != nullptr);
    if (auto* x = dynamic_cast<P::NameExprContext*>(p)) return std::make_unique<ast::NameExpr>(r, ident(x->IDENT()).name);
    if (auto* x = dynamic_cast<P::CallExprContext*>(p)) {
      auto out = std::make_unique<ast::CallExpr>(r, ident(x->IDENT()));
      for (auto* a : x->arg()) {
        ast::CallArg arg;
        if (a->IDENT()) arg.name = ident(a->IDENT());
        arg.value = expr(a->expr());
        out->args.push_back(std::move(arg));
      }
      return out;
    }
    if (auto* x = dynamic_cast<P::TupleExprContext*>(p)) {
      auto out = std::make_unique<ast::TupleExpr>(r);
      for (auto* e : x->expr()) out->elems.push_back(expr(e));
      return out;
    }
    if (auto* x = dynamic_cast<P::ParenExprContext*>(p)) return expr(x->expr());
    return missing(r);
  }

  FileId file_;
  const CodePoints& cps_;
  antlr4::BufferedTokenStream& tokens_;
  DiagnosticEngine& diags_;
};

// ANTLR's parser recurses once per nesting level; refuse absurd nesting before it can overflow
// the stack.
bool checkNesting(const std::vector<antlr4::Token*>& toks, FileId file, const CodePoints& cps, DiagnosticEngine& diags) {
  unsigned depth = 0;
  antlr4::Token* outer = nullptr;
  for (auto* t : toks) {
    switch (t->getType()) {
      case MkLexer::LPAREN: case MkLexer::LBRACK: case MkLexer::LBRACE:
        if (depth == 0) outer = t;
        if (++depth > kMaxNesting) {
          SourceRange r = cps.range(file, t->getStartIndex(), t->getStopIndex());
          SourceRange o = cps.range(file, outer->getStartIndex(), outer->getStopIndex());
          diags.emit(r, NestingTooDeep, kMaxNesting).note(o, OpeningBracket);
          return false;
        }
        break;
      case MkLexer::RPAREN: case MkLexer::RBRACK: case MkLexer::RBRACE:
        if (depth > 0) --depth;
        break;
      default: break;
    }
  }
  return true;
}

// Operators chained without brackets also nest the parser's recursion, one level per operator.
bool checkChainLength(const std::vector<antlr4::Token*>& toks, FileId file, const CodePoints& cps, DiagnosticEngine& diags) {
  unsigned run = 0;
  unsigned elseIfs = 0;  // `else if` chains nest the parser too
  size_t prev = 0;
  for (auto* t : toks) {
    size_t ty = t->getType();
    if (ty == MkLexer::NEWLINE || ty == MkLexer::WS || ty == MkLexer::LINE_COMMENT || ty == MkLexer::DOC_COMMENT ||
        ty == MkLexer::BLOCK_COMMENT)
      continue;
    if (ty == MkLexer::IF) elseIfs = prev == MkLexer::ELSE ? elseIfs + 1 : 0;
    prev = ty;
    if (elseIfs > kMaxNesting) {
      diags.emit(cps.range(file, t->getStartIndex(), t->getStopIndex()), NestingTooDeep, kMaxNesting);
      return false;
    }
    if (ty == MkLexer::SEMI || ty == MkLexer::LBRACE || ty == MkLexer::RBRACE) {
      run = 0;
      continue;
    }
    // Every operator adds a level to the expression tree, and so does each `[` of an index chain.
    bool isOp = ty == MkLexer::MINUS || ty == MkLexer::NOT || ty == MkLexer::LOAD || ty == MkLexer::PLUS ||
                ty == MkLexer::STAR || ty == MkLexer::SLASH || ty == MkLexer::PERCENT || ty == MkLexer::AS ||
                ty == MkLexer::DOT || ty == MkLexer::LT || ty == MkLexer::LE || ty == MkLexer::GT ||
                ty == MkLexer::GE || ty == MkLexer::EQ || ty == MkLexer::NE || ty == MkLexer::AND ||
                ty == MkLexer::OR || ty == MkLexer::LBRACK;
    if (isOp && ++run > 4 * kMaxNesting) {
      diags.emit(cps.range(file, t->getStartIndex(), t->getStopIndex()), ChainTooLong, 4 * kMaxNesting);
      return false;
    }
  }
  return true;
}

}  // namespace

std::unique_ptr<ast::Module> parseFile(FileId file, const SourceManager& sources, DiagnosticEngine& diags) {
  CodePoints cps(sources.file(file).text());
  for (uint32_t at : cps.badBytes)
    diags.emit({file, at, at + 1}, InvalidUtf8, static_cast<unsigned char>(sources.file(file).text()[at]));
  antlr4::ANTLRInputStream input(cps.clean);
  MkLexer lexer(&input);
  lexer.removeErrorListeners();
  antlr4::CommonTokenStream tokens(&lexer);
  tokens.fill();
  reportLexErrors(tokens.getTokens(), file, cps, diags);
  if (!checkNesting(tokens.getTokens(), file, cps, diags) || !checkChainLength(tokens.getTokens(), file, cps, diags)) {
    auto mod = std::make_unique<ast::Module>();
    mod->file = file;
    return mod;
  }
  MkParser parser(&tokens);
  parser.removeErrorListeners();
  ErrorListener listener(file, cps, diags);
  parser.addErrorListener(&listener);
  P::FileContext* tree = parser.file();
  Builder builder(file, cps, tokens, diags);
  return builder.build(tree);
}

std::vector<Token> lex(std::string_view text) {
  CodePoints cps(text);
  antlr4::ANTLRInputStream input(cps.clean);
  MkLexer lexer(&input);
  lexer.removeErrorListeners();
  std::vector<Token> out;
  for (auto t = lexer.nextToken(); t->getType() != antlr4::Token::EOF; t = lexer.nextToken()) {
    TokenKind kind;
    size_t ty = t->getType();
    switch (ty) {
      case MkLexer::IDENT: kind = TokenKind::Ident; break;
      case MkLexer::INT: kind = TokenKind::Int; break;
      case MkLexer::FLOAT: kind = TokenKind::Float; break;
      case MkLexer::STRING: kind = TokenKind::String; break;
      case MkLexer::DOC_COMMENT: kind = TokenKind::DocComment; break;
      case MkLexer::LINE_COMMENT: kind = TokenKind::LineComment; break;
      case MkLexer::BLOCK_COMMENT: kind = TokenKind::BlockComment; break;
      case MkLexer::NEWLINE: kind = TokenKind::Newline; break;
      case MkLexer::WS: kind = TokenKind::Space; break;
      case MkLexer::ERROR_CHAR: case MkLexer::BAD_STRING: case MkLexer::BAD_COMMENT: kind = TokenKind::Error; break;
      default: {
        std::string lit = lexer.getVocabulary().getLiteralName(ty);
        bool word = lit.size() > 2 && (std::isalpha(static_cast<unsigned char>(lit[1])) || lit[1] == '_');
        kind = word ? TokenKind::Keyword : TokenKind::Punct;
      }
    }
    SourceRange r = cps.range(0, t->getStartIndex(), t->getStopIndex());
    out.push_back({kind, text.substr(r.begin, r.end - r.begin), r.begin, r.end});
  }
  return out;
}

}  // namespace mk
