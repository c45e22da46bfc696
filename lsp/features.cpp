// The language features, each a handler over the document's analysis (lsp/analysis.h).
#include <algorithm>

#include "frontend/format.h"
#include "frontend/parse.h"
#include "lsp/language.h"
#include "lsp/server_impl.h"

namespace mk::lsp {

namespace {

std::string_view slice(std::string_view text, uint32_t begin, uint32_t end) {
  begin = std::min<uint32_t>(begin, static_cast<uint32_t>(text.size()));
  end = std::min<uint32_t>(std::max(begin, end), static_cast<uint32_t>(text.size()));
  return text.substr(begin, end - begin);
}

}  // namespace

// ---- semantic token legend ------------------------------------------------------------------

const std::vector<std::string>& semanticTokenTypes() {
  static const std::vector<std::string> kTypes = {
      "keyword", "type",     "struct",    "typeParameter", "parameter", "variable", "property", "enumMember",
      "function", "decorator", "namespace", "number",        "string",    "comment",  "operator"};
  return kTypes;
}

const std::vector<std::string>& semanticTokenModifiers() {
  static const std::vector<std::string> kModifiers = {"declaration", "readonly", "defaultLibrary", "documentation"};
  return kModifiers;
}

// ---- documentSymbol -------------------------------------------------------------------------

Json Server::Impl::documentSymbol(const Json& params) {
  OpenDoc& doc = requireDoc(params);
  const Analysis& a = analysisFor(doc);
  const Module* m = a.rootModule();
  Json list = jarr();
  if (!m || !m->ast) return list;
  auto text = [&](SourceRange r) { return a.source(r); };
  // A symbol; its selection range must lie inside its range.
  auto symbol = [&](const std::string& name, int kind, const std::string& detail, SourceRange whole,
                    SourceRange sel) {
    if (!sel.valid() || sel.begin < whole.begin || sel.end > whole.end) sel = whole;
    Json s = jobj();
    set(s, "name", jstr(name));
    if (!detail.empty()) set(s, "detail", jstr(detail));
    set(s, "kind", jint(kind));
    set(s, "range", range(a, whole));
    set(s, "selectionRange", range(a, sel));
    return s;
  };
  // Flat SymbolInformation for clients without hierarchical support.
  Json flat = jarr();
  auto addFlat = [&](const Json& s, const std::string& container) {
    Json f = jobj();
    set(f, "name", *s.get("name"));
    set(f, "kind", *s.get("kind"));
    Json loc = jobj();
    set(loc, "uri", jstr(doc.doc.uri()));
    set(loc, "range", *s.get("range"));
    set(f, "location", loc);
    if (!container.empty()) set(f, "containerName", jstr(container));
    push(flat, f);
  };
  // LSP SymbolKind values.
  constexpr int kModule = 2, kNamespace = 3, kField = 8, kFunction = 12, kVariable = 13, kConstant = 14,
                kStruct = 23, kEvent = 24;
  for (const auto& dp : m->ast->decls) {
    const ast::Decl* d = dp.get();
    const std::string& name = d->name.name;
    // What follows the name, on one line: `: bf16[N] = "w"` becomes the detail `bf16[N]`.
    auto after = [&](uint32_t from, uint32_t to) { return collapse(slice(a.text(a.root), from, to)); };
    Json s;
    std::vector<Json> children;
    switch (d->kind) {
      case ast::DeclKind::Import: {
        auto* imp = ast::as<ast::ImportDecl>(d);
        if (imp->path.empty()) continue;
        s = symbol(imp->dotted(), kModule, "", d->range, SourceRange::cover(imp->path.front().range, imp->path.back().range));
        break;
      }
      case ast::DeclKind::Const: {
        if (name.empty()) continue;
        std::string detail = after(d->name.range.end, d->range.end);
        if (!detail.empty() && detail.back() == ';') detail.pop_back();
        s = symbol(name, kConstant, collapse(detail), d->range, d->name.range);
        break;
      }
      case ast::DeclKind::Config: {
        if (name.empty()) continue;
        auto* c = ast::as<ast::ConfigDecl>(d);
        s = symbol(name, kStruct, c->base ? "config : " + c->base->name : "config", d->range, d->name.range);
        for (const auto& f : c->fields) {
          if (f.name.name.empty()) continue;
          children.push_back(symbol(f.name.name, kField, f.value ? "= " + collapse(text(f.value->range)) : "", f.range,
                                    f.name.range));
        }
        break;
      }
      case ast::DeclKind::Weight:
      case ast::DeclKind::State: {
        if (name.empty()) continue;
        auto* w = ast::as<ast::WeightDecl>(d);
        auto* st = ast::as<ast::StateDecl>(d);
        const ast::TypeRef& t = w ? w->type : st->type;
        s = symbol(name, kVariable, std::string(w ? "weight " : "state ") + collapse(text(t.range)), d->range,
                   d->name.range);
        break;
      }
      case ast::DeclKind::Group: {
        if (name.empty()) continue;
        auto* g = ast::as<ast::GroupDecl>(d);
        std::string detail = "group [" + g->var.name + " in " + (g->lo ? collapse(text(g->lo->range)) : "") + " .. " +
                             (g->hi ? collapse(text(g->hi->range)) : "") + "]";
        s = symbol(name, kNamespace, detail, d->range, d->name.range);
        for (const auto& mem : g->members) {
          if (mem->name.name.empty()) continue;
          auto* w = ast::as<ast::WeightDecl>(mem.get());
          auto* st = ast::as<ast::StateDecl>(mem.get());
          const ast::TypeRef& t = w ? w->type : st->type;
          children.push_back(symbol(mem->name.name, kField,
                                    std::string(w ? "weight " : "state ") + collapse(text(t.range)), mem->range,
                                    mem->name.range));
        }
        break;
      }
      case ast::DeclKind::Op:
      case ast::DeclKind::Fn:
      case ast::DeclKind::Step: {
        if (name.empty()) continue;
        const ast::Block* body = d->kind == ast::DeclKind::Op ? &ast::as<ast::OpDecl>(d)->body
                                 : d->kind == ast::DeclKind::Fn ? &ast::as<ast::FnDecl>(d)->body
                                                                : &ast::as<ast::StepDecl>(d)->body;
        uint32_t end = body->range.valid() && body->range.begin > d->name.range.end ? body->range.begin : d->range.end;
        // An op's signature ends at `tasks`.
        if (auto* op = ast::as<ast::OpDecl>(d); op && !op->tasks.empty()) {
          std::string_view sig = slice(a.text(a.root), d->name.range.end, op->tasks.front().range.begin);
          size_t t = sig.rfind("tasks");
          end = t == std::string_view::npos ? op->tasks.front().range.begin : d->name.range.end + static_cast<uint32_t>(t);
        }
        const char* word = d->kind == ast::DeclKind::Op ? "op " : d->kind == ast::DeclKind::Fn ? "fn " : "step ";
        s = symbol(name, d->kind == ast::DeclKind::Step ? kEvent : kFunction, word + after(d->name.range.end, end),
                   d->range, d->name.range);
        break;
      }
      case ast::DeclKind::Assert: continue;
    }
    std::string container = s.get("name")->text;
    addFlat(s, "");
    if (!children.empty()) {
      for (const Json& c : children) addFlat(c, container);
      set(s, "children", jarr(std::move(children)));
    }
    push(list, s);
  }
  return hierarchicalSymbols ? list : flat;
}

// ---- formatting -----------------------------------------------------------------------------

Json Server::Impl::formatting(const Json& params) {
  OpenDoc& doc = requireDoc(params);
  const Analysis& a = analysisFor(doc);
  // Like `mkdsl fmt`: a document with syntax errors is left alone.
  if (!a.parsedCleanly()) return jnull();
  const std::string& text = doc.doc.text();
  std::string formatted = formatSource(text);
  if (formatted == text) return jarr();
  // One edit over the lines that differ, so the editor keeps the cursor and folds elsewhere.
  auto lineEnds = [](std::string_view s) {
    std::vector<size_t> ends;
    for (size_t i = 0; i < s.size(); ++i)
      if (s[i] == '\n') ends.push_back(i + 1);
    return ends;
  };
  std::vector<size_t> oe = lineEnds(text), ne = lineEnds(formatted);
  size_t prefix = 0;  // bytes of whole common lines at the start
  for (size_t i = 0; i < oe.size() && i < ne.size() && oe[i] == ne[i]; ++i) {
    if (text.compare(prefix, oe[i] - prefix, formatted, prefix, oe[i] - prefix) != 0) break;
    prefix = oe[i];
  }
  size_t suffix = 0;  // bytes of whole common lines at the end (after a newline)
  for (size_t i = oe.size(), j = ne.size(); i-- > 0 && j-- > 0;) {
    size_t ob = oe[i], nb = ne[j];  // a line starts after each newline
    size_t olen = text.size() - ob, nlen = formatted.size() - nb;
    if (olen != nlen || ob < prefix || nb < prefix) break;
    if (text.compare(ob, olen, formatted, nb, nlen) != 0) break;
    suffix = olen;
  }
  Json edit = jobj();
  Json r = jobj();
  set(r, "start", position(doc.doc.position(static_cast<uint32_t>(prefix), enc)));
  set(r, "end", position(doc.doc.position(static_cast<uint32_t>(text.size() - suffix), enc)));
  set(edit, "range", r);
  set(edit, "newText", jstr(formatted.substr(prefix, formatted.size() - suffix - prefix)));
  return jarr({edit});
}

}  // namespace mk::lsp
