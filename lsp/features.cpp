// The language features, each a handler over the document's analysis (lsp/analysis.h).
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "frontend/format.h"
#include "frontend/parse.h"
#include "lsp/describe.h"
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
      "keyword",  "type",      "struct",    "typeParameter", "parameter", "variable", "property",
      "enumMember", "function", "decorator", "namespace", "number",    "string",   "comment"};
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

// ---- shared by completion and signature help ------------------------------------------------

namespace mk::lsp {

namespace {

bool isModuleLevel(SymbolKind k) { return !isLocalSymbol(k) && k != SymbolKind::ConfigField; }

// The files of the modules the document imports directly (their names are in scope).
std::vector<FileId> importedFiles(const Analysis& a) {
  std::vector<FileId> out;
  if (const Module* root = a.rootModule())
    for (const Module* m : root->imports)
      if (m && m->ast) out.push_back(m->ast->file);
  return out;
}

// The declaration of the document whose range holds `offset`.
const ast::Decl* enclosingDecl(const Analysis& a, uint32_t offset) {
  const Module* m = a.rootModule();
  if (!m || !m->ast) return nullptr;
  for (const auto& d : m->ast->decls)
    if (d->range.begin <= offset && offset <= d->range.end) return d.get();
  return nullptr;
}

// Every name visible at `offset` of the document, each once, innermost first: the locals whose
// scope holds the offset and that are declared before it, the document's declarations, those of
// the modules it imports (not their configs or steps), and the selected config's fields.
std::vector<const Symbol*> visibleSymbols(const Analysis& a, uint32_t offset) {
  std::vector<const Symbol*> out;
  std::set<std::string> seen;
  const SemanticIndex& index = a.index();
  auto add = [&](const Symbol& s) {
    if (seen.insert(s.name).second) out.push_back(&s);
  };
  // A let, var or const is usable after its statement; parameters and the like in their whole body.
  auto declared = [&](const Symbol& s) {
    bool statement = s.kind == SymbolKind::Let || s.kind == SymbolKind::Var || s.kind == SymbolKind::LocalConst;
    return statement ? s.range.end <= offset : s.nameRange.begin < offset;
  };
  for (const Symbol& s : index.symbols)
    if (isLocalSymbol(s.kind) && s.nameRange.file == a.root && s.scope.file == a.root && s.scope.begin <= offset &&
        offset <= s.scope.end && declared(s))
      add(s);
  for (const Symbol& s : index.symbols)
    if (isModuleLevel(s.kind) && s.nameRange.file == a.root && !(s.owner && s.owner->kind == ast::DeclKind::Group)) add(s);
  std::vector<FileId> imported = importedFiles(a);
  for (const Symbol& s : index.symbols)
    if (isModuleLevel(s.kind) && std::find(imported.begin(), imported.end(), s.nameRange.file) != imported.end() &&
        s.kind != SymbolKind::Config && s.kind != SymbolKind::Step && !(s.owner && s.owner->kind == ast::DeclKind::Group))
      add(s);
  const ast::ConfigDecl* selected = a.program ? a.program->config : nullptr;
  for (const Symbol& s : index.symbols)
    if (s.kind == SymbolKind::ConfigField && s.nameRange.file == a.root && (!selected || s.owner == selected)) add(s);
  return out;
}

}  // namespace

// ---- completion -----------------------------------------------------------------------------

const std::vector<StdlibEntry>& Server::Impl::stdlibEntries() {
  if (stdlib) return *stdlib;
  stdlib.emplace();
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> files;
  for (fs::recursive_directory_iterator it(analysisOptions.stdlibDir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".mk") files.push_back(it->path());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    // Parsed only (not checked): its declarations are all the catalogue needs.
    SourceManager sm;
    DiagnosticEngine diags(sm);
    FileId id = sm.add(f.string(), text);
    auto mod = parseFile(id, sm, diags);
    fs::path rel = f.lexically_relative(analysisOptions.stdlibDir).replace_extension();
    std::string module = "std";
    for (const auto& part : rel) module += "." + part.string();
    for (const auto& d : mod->decls) {
      if ((d->kind != ast::DeclKind::Op && d->kind != ast::DeclKind::Fn) || d->name.name.empty()) continue;
      std::string sig = callSignature(text, d.get()).label;
      stdlib->push_back({module, d->name.name, d->kind == ast::DeclKind::Op,
                         (d->kind == ast::DeclKind::Op ? "op " : "fn ") + sig, d->doc});
    }
  }
  return *stdlib;
}

namespace {
// LSP CompletionItemKind values.
constexpr int kText = 1, kFunction = 3, kField = 5, kVariable = 6, kModule = 9, kProperty = 10, kKeyword = 14,
              kEnumMember = 20, kConstant = 21, kStruct = 22, kTypeParameter = 25;

int completionKind(const Symbol& s) {
  switch (s.kind) {
    case SymbolKind::Op:
    case SymbolKind::Fn:
    case SymbolKind::Step: return kFunction;
    case SymbolKind::Config:
    case SymbolKind::Group: return kStruct;
    case SymbolKind::ConfigField: return kProperty;
    case SymbolKind::Const:
    case SymbolKind::LocalConst: return kConstant;
    case SymbolKind::Generic: return kTypeParameter;
    default: return kVariable;
  }
}

Json item(const std::string& label, int kind, const std::string& detail, const std::string& doc, const std::string& sort) {
  Json it = jobj();
  set(it, "label", jstr(label));
  set(it, "kind", jint(kind));
  if (!detail.empty()) set(it, "detail", jstr(detail));
  if (!doc.empty()) {
    Json d = jobj();
    set(d, "kind", jstr("markdown"));
    set(d, "value", jstr(doc));
    set(it, "documentation", d);
  }
  set(it, "sortText", jstr(sort + label));
  return it;
}
}  // namespace

Json Server::Impl::completion(const Json& params) {
  auto [doc, a, pos, offset] = requireAt(params);
  const std::string& text = doc.doc.text();
  uint32_t start = offset;  // of the word being typed
  while (start > 0 && isIdentChar(text[start - 1])) --start;
  uint32_t lineStart = doc.doc.offset({pos.line, 0}, enc);
  std::string before(text.substr(lineStart, start - lineStart));
  std::string trimmed = before;
  while (!trimmed.empty() && (trimmed.back() == ' ' || trimmed.back() == '\t')) trimmed.pop_back();
  Json items = jarr();
  Json list = jobj();
  set(list, "isIncomplete", jbool(false));

  // `import std.li|`: module names, replacing the whole dotted path typed so far.
  size_t firstWord = before.find_first_not_of(" \t");
  if (firstWord != std::string::npos && before.compare(firstWord, 7, "import ") == 0) {
    uint32_t pathStart = start;
    while (pathStart > lineStart && (isIdentChar(text[pathStart - 1]) || text[pathStart - 1] == '.')) --pathStart;
    Json editRange = jobj();
    set(editRange, "start", position(doc.doc.position(pathStart, enc)));
    set(editRange, "end", position(pos));
    std::set<std::string> names;
    for (const StdlibEntry& e : stdlibEntries()) names.insert(e.module);
    namespace fs = std::filesystem;
    std::vector<std::string> dirs;
    if (doc.path.size() && doc.path[0] == '/') dirs.push_back(fs::path(doc.path).parent_path().string());
    dirs.insert(dirs.end(), analysisOptions.includeDirs.begin(), analysisOptions.includeDirs.end());
    for (const std::string& dir : dirs) {
      std::error_code ec;
      for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (it.depth() > 2) it.disable_recursion_pending();
        if (it->path().extension() != ".mk" || it->path() == fs::path(doc.path)) continue;
        std::string dotted;
        bool ok = true;
        fs::path rel = it->path().lexically_relative(dir);
        rel.replace_extension();
        for (const auto& part : rel) {
          ok = ok && isIdentifier(part.string());
          dotted += (dotted.empty() ? "" : ".") + part.string();
        }
        if (ok) names.insert(dotted);
      }
    }
    for (const std::string& n : names) {
      Json it = item(n, kModule, n.rfind("std.", 0) == 0 ? "stdlib module" : "module", "", "");
      Json edit = jobj();
      set(edit, "range", editRange);
      set(edit, "newText", jstr(n));
      set(it, "textEdit", edit);
      push(items, it);
    }
    set(list, "items", items);
    return list;
  }

  // `@|`: annotations.
  if (start > 0 && text[start - 1] == '@') {
    push(items, item("after", kKeyword, "@after(tensors...)", "The call also waits for every task that wrote these tensors.", "0"));
    push(items, item("cluster", kKeyword, "@cluster(n)", "The op's tasks run in thread-block clusters of `n` (1, 2, 4 or 8).", "0"));
    set(list, "items", items);
    return list;
  }

  // `w.|`, `layer[l].|`: the members of a group element.
  if (start > 0 && text[start - 1] == '.') {
    uint32_t e = start - 1;
    if (e > 0 && text[e - 1] == ']') {  // skip an index
      int depth = 0;
      while (e > 0) {
        char c = text[--e];
        if (c == ']') ++depth;
        else if (c == '[' && --depth == 0) break;
      }
    }
    uint32_t b = e;
    while (b > 0 && isIdentChar(text[b - 1])) --b;
    std::string base = text.substr(b, e - b);
    const ast::GroupDecl* group = nullptr;
    for (const Symbol* s : visibleSymbols(a, offset)) {
      if (s->name != base) continue;
      if (s->kind == SymbolKind::Group) group = ast::as<ast::GroupDecl>(s->decl);
      else if (s->ty && (s->ty->kind == TyKind::GroupElem || s->ty->kind == TyKind::GroupArray)) group = s->ty->group;
      break;
    }
    if (group)
      for (const auto& m : group->members) {
        if (m->name.name.empty()) continue;
        auto* w = ast::as<ast::WeightDecl>(m.get());
        auto* st = ast::as<ast::StateDecl>(m.get());
        const ast::TypeRef& t = w ? w->type : st->type;
        push(items, item(m->name.name, kField, std::string(w ? "weight " : "state ") + collapse(a.source(t.range)), m->doc, "0"));
      }
    set(list, "items", items);
    return list;
  }

  // After `x:`, `as` or `inout`: types. Generic parameters and consts take int, float or bool.
  bool typePosition = !trimmed.empty() && trimmed.back() == ':' && (trimmed.size() < 2 || trimmed[trimmed.size() - 2] != ':');
  auto endsWithWord = [&](const char* w) {
    size_t n = std::strlen(w);
    return trimmed.size() >= n && trimmed.compare(trimmed.size() - n, n, w) == 0 &&
           (trimmed.size() == n || !isIdentChar(trimmed[trimmed.size() - n - 1]));
  };
  bool castPosition = endsWithWord("as");
  typePosition = typePosition || castPosition || endsWithWord("inout");
  if (typePosition) {
    // An unclosed `<` before any `(` on the line: a generic parameter's type.
    int depth = 0;
    bool generic = false;
    for (size_t i = trimmed.size(); i-- > 0;) {
      char c = trimmed[i];
      if (c == ')' || c == '>' || c == ']') ++depth;
      else if (c == '(' || c == '[') {
        if (depth-- == 0) break;
      } else if (c == '<' && depth-- == 0) {
        generic = true;
        break;
      }
    }
    bool constType = firstWord != std::string::npos && before.compare(firstWord, 6, "const ") == 0;
    if (generic || constType) {
      for (const char* t : {"int", "float", "bool"}) push(items, item(t, kStruct, "compile-time type", "", "0"));
    } else {
      for (const WordInfo& d : dtypes()) push(items, item(d.name, kStruct, "dtype: " + d.detail, d.doc, "0"));
      if (!castPosition)
        for (const Symbol* s : visibleSymbols(a, offset))
          if (s->kind == SymbolKind::Group) push(items, item(s->name, kStruct, "group element", s->doc, "1"));
    }
    set(list, "items", items);
    return list;
  }

  // Anywhere else: the names in scope, the stdlib's ops and fns, builtins in op bodies, keywords,
  // dtypes and layouts.
  std::set<std::string> labels;
  for (const Symbol* s : visibleSymbols(a, offset)) {
    if (s->kind == SymbolKind::Step) continue;
    labels.insert(s->name);
    std::string detail;
    if (s->kind == SymbolKind::Op || s->kind == SymbolKind::Fn) {
      detail = (s->kind == SymbolKind::Op ? "op " : "fn ") + callSignature(a, s->decl).label;
      if (s->nameRange.file != a.root) detail += "  (" + moduleName(a, s->nameRange.file) + ")";
    } else if (s->ty && !s->ty->isError()) {
      detail = std::string(symbolKindName(s->kind)) + ": " + describeType(*s->ty);
      detail.erase(std::remove(detail.begin(), detail.end(), '`'), detail.end());
    } else {
      detail = symbolKindName(s->kind);
    }
    const char* sort = isLocalSymbol(s->kind) ? "0" : s->kind == SymbolKind::ConfigField ? "2" : s->nameRange.file == a.root ? "1" : "3";
    push(items, item(s->name, completionKind(*s), detail, s->doc, sort));
  }
  // Stdlib ops and fns not imported yet: the import comes with them.
  const Module* root = a.rootModule();
  uint32_t importAt = 0;  // where a new import line goes: after the last import, else on top
  if (root && root->ast)
    for (const auto& d : root->ast->decls)
      if (d->kind == ast::DeclKind::Import) importAt = std::max(importAt, static_cast<uint32_t>(d->range.end));
  Position importPos = importAt ? Position{doc.doc.position(importAt, enc).line + 1, 0} : Position{0, 0};
  for (const StdlibEntry& e : stdlibEntries()) {
    if (labels.count(e.name)) continue;
    labels.insert(e.name);
    Json it = item(e.name, kFunction, e.signature + "  (" + e.module + ")", e.doc, "4");
    Json edit = jobj();
    Json r = jobj();
    set(r, "start", position(importPos));
    set(r, "end", position(importPos));
    set(edit, "range", r);
    set(edit, "newText", jstr("import " + e.module + ";\n"));
    set(it, "additionalTextEdits", jarr({edit}));
    push(items, it);
  }
  const ast::Decl* in = enclosingDecl(a, offset);
  if (in && in->kind == ast::DeclKind::Op)
    for (const BuiltinInfo& b : builtins())
      if (labels.insert(b.name).second) push(items, item(b.name, kFunction, b.signature, b.doc, "5"));
  for (const std::string& k : keywords()) push(items, item(k, kKeyword, "", "", "6"));
  for (const WordInfo& d : dtypes()) push(items, item(d.name, kStruct, "dtype: " + d.detail, d.doc, "7"));
  for (const WordInfo& l : layouts()) push(items, item(l.name, kEnumMember, "layout " + l.detail, l.doc, "7"));
  if (labels.insert("inf").second) push(items, item("inf", kConstant, "compile-time float: infinity", "", "7"));
  (void)kText;
  set(list, "items", items);
  return list;
}

// ---- signatureHelp --------------------------------------------------------------------------

Json Server::Impl::signatureHelp(const Json& params) {
  auto [doc, a, pos, offset] = requireAt(params);
  const std::string& text = doc.doc.text();
  // The innermost call whose argument list holds the cursor: walk back over balanced brackets.
  int depth = 0;
  int commas = 0;
  uint32_t argStart = offset;  // after the nearest comma or the open parenthesis
  bool sawComma = false;
  std::string callee;
  uint32_t open = 0;
  for (uint32_t i = offset; i-- > 0;) {
    char c = text[i];
    if (c == ')' || c == ']') {
      ++depth;
    } else if (c == '(' || c == '[') {
      if (depth > 0) {
        --depth;
        continue;
      }
      uint32_t e = i;
      while (e > 0 && (text[e - 1] == ' ' || text[e - 1] == '\t')) --e;
      uint32_t b = e;
      while (b > 0 && isIdentChar(text[b - 1])) --b;
      std::string name = text.substr(b, e - b);
      if (c == '(' && isIdentifier(name) && !isKeyword(name)) {
        callee = name;
        open = i;
        break;
      }
      // An index or a parenthesised expression: the call, if any, is further out.
      commas = 0;
      sawComma = false;
      argStart = i + 1;
    } else if (c == ',' && depth == 0) {
      if (!sawComma) argStart = i + 1;
      sawComma = true;
      ++commas;
    } else if ((c == ';' || c == '{' || c == '}') && depth == 0) {
      return jnull();
    }
  }
  if (callee.empty()) return jnull();
  if (!sawComma) argStart = open + 1;
  // The argument being typed: `R = 1|` names a generic parameter.
  std::string arg = text.substr(argStart, offset - argStart);
  std::string named;
  {
    size_t b = arg.find_first_not_of(" \t\r\n");
    size_t e = b;
    while (e != std::string::npos && e < arg.size() && isIdentChar(arg[e])) ++e;
    size_t eq = e == std::string::npos ? std::string::npos : arg.find_first_not_of(" \t", e);
    if (b != std::string::npos && e > b && eq != std::string::npos && arg[eq] == '=' &&
        (eq + 1 >= arg.size() || arg[eq + 1] != '='))
      named = arg.substr(b, e - b);
  }
  auto toUnits = [&](const std::string& s, uint32_t bytes) { return unitLength(std::string_view(s).substr(0, bytes), enc); };
  Json signatures = jarr();
  int64_t active = commas;
  int64_t activeSignature = 0;
  const Symbol* target = nullptr;
  for (const Symbol* s : visibleSymbols(a, offset))
    if (s->name == callee) {
      target = s;
      break;
    }
  if (target && (target->kind == SymbolKind::Op || target->kind == SymbolKind::Fn) && target->decl) {
    CallSignature sig = callSignature(a, target->decl);
    Json si = jobj();
    set(si, "label", jstr(sig.label));
    if (!target->doc.empty()) {
      Json d = jobj();
      set(d, "kind", jstr("markdown"));
      set(d, "value", jstr(target->doc));
      set(si, "documentation", d);
    }
    Json ps = jarr();
    for (auto [b, e] : sig.params) {
      Json p = jobj();
      set(p, "label", jarr({jint(toUnits(sig.label, b)), jint(toUnits(sig.label, e))}));
      push(ps, p);
    }
    set(si, "parameters", ps);
    push(signatures, si);
    if (!named.empty()) {
      auto it = std::find(sig.paramNames.begin() + static_cast<long>(sig.positional), sig.paramNames.end(), named);
      active = it == sig.paramNames.end() ? static_cast<int64_t>(sig.params.size()) : it - sig.paramNames.begin();
    }
  } else if (auto bs = findBuiltin(callee); !bs.empty() && !target) {
    for (size_t k = 0; k < bs.size(); ++k) {
      const BuiltinInfo* b = bs[k];
      Json si = jobj();
      set(si, "label", jstr(b->signature));
      Json d = jobj();
      set(d, "kind", jstr("markdown"));
      set(d, "value", jstr(b->doc));
      set(si, "documentation", d);
      Json ps = jarr();
      size_t from = b->name.size() + 1;
      for (const std::string& p : b->params) {
        size_t at = b->signature.find(p, from);
        if (at == std::string::npos) continue;
        Json pj = jobj();
        set(pj, "label", jarr({jint(toUnits(b->signature, static_cast<uint32_t>(at))),
                               jint(toUnits(b->signature, static_cast<uint32_t>(at + p.size())))}));
        push(ps, pj);
        from = at + p.size();
      }
      set(si, "parameters", ps);
      push(signatures, si);
      // max/min: the two-operand form once a comma is typed.
      if (commas + 1 == static_cast<int>(b->params.size()) || (commas > 0 && b->params.size() > 1)) activeSignature = static_cast<int64_t>(k);
    }
  } else {
    return jnull();
  }
  Json help = jobj();
  set(help, "signatures", signatures);
  set(help, "activeSignature", jint(activeSignature));
  set(help, "activeParameter", jint(active));
  return help;
}

// ---- semanticTokens/full --------------------------------------------------------------------

namespace {
enum TokenType { tKeyword, tType, tStruct, tTypeParameter, tParameter, tVariable, tProperty, tEnumMember, tFunction,
                 tDecorator, tNamespace, tNumber, tString, tComment };
enum TokenModifier { mDeclaration = 1, mReadonly = 2, mDefaultLibrary = 4, mDocumentation = 8 };

std::pair<int, int> classify(const Symbol& s) {
  bool member = s.owner && s.owner->kind == ast::DeclKind::Group;
  switch (s.kind) {
    case SymbolKind::Const:
    case SymbolKind::LocalConst:
    case SymbolKind::Let:
    case SymbolKind::TaskVar:
    case SymbolKind::LoopVar: return {tVariable, mReadonly};
    case SymbolKind::Config:
    case SymbolKind::Group: return {tStruct, 0};
    case SymbolKind::ConfigField: return {tProperty, mReadonly};
    case SymbolKind::Weight: return {member ? tProperty : tVariable, mReadonly};
    case SymbolKind::State: return {member ? tProperty : tVariable, 0};
    case SymbolKind::Op:
    case SymbolKind::Fn:
    case SymbolKind::Step: return {tFunction, 0};
    case SymbolKind::Generic: return {tTypeParameter, mReadonly};
    case SymbolKind::Param:
    case SymbolKind::Result: return {tParameter, 0};
    case SymbolKind::Var: return {tVariable, 0};
  }
  return {tVariable, 0};
}
}  // namespace

Json Server::Impl::semanticTokens(const Json& params) {
  OpenDoc& doc = requireDoc(params);
  const Analysis& a = analysisFor(doc);
  const std::string& text = doc.doc.text();
  std::vector<Token> tokens = lex(text);
  // Import paths are namespaces.
  std::vector<std::pair<uint32_t, uint32_t>> imports;
  if (const Module* m = a.rootModule(); m && m->ast)
    for (const auto& d : m->ast->decls)
      if (d->kind == ast::DeclKind::Import) imports.push_back({d->range.begin, d->range.end});
  auto inImport = [&](uint32_t at) {
    return std::any_of(imports.begin(), imports.end(), [&](auto r) { return r.first <= at && at < r.second; });
  };
  Json data = jarr();
  data.items.reserve(tokens.size() * 5);
  Position last{0, 0};
  auto emit = [&](uint32_t begin, uint32_t end, int type, int mods) {
    // One token per line: clients need not support multi-line tokens.
    while (begin < end) {
      Position p = doc.doc.position(begin, enc);
      auto [lb, le] = doc.doc.lines().lineBytes(text, p.line);
      uint32_t stop = std::min(end, le);
      uint32_t length = unitLength(std::string_view(text).substr(begin, stop - begin), enc);
      if (length > 0) {
        push(data, jint(p.line - last.line));
        push(data, jint(p.line == last.line ? p.character - last.character : p.character));
        push(data, jint(length));
        push(data, jint(type));
        push(data, jint(mods));
        last = p;
      }
      if (stop >= end || p.line + 1 >= doc.doc.lines().lineCount()) break;
      begin = doc.doc.offset({p.line + 1, 0}, enc);
      (void)lb;
    }
  };
  for (size_t i = 0; i < tokens.size(); ++i) {
    const Token& t = tokens[i];
    switch (t.kind) {
      case TokenKind::Keyword: emit(t.begin, t.end, tKeyword, 0); break;
      case TokenKind::Int:
      case TokenKind::Float: emit(t.begin, t.end, tNumber, 0); break;
      case TokenKind::String: emit(t.begin, t.end, tString, 0); break;
      case TokenKind::DocComment: emit(t.begin, t.end, tComment, mDocumentation); break;
      case TokenKind::LineComment:
      case TokenKind::BlockComment: emit(t.begin, t.end, tComment, 0); break;
      case TokenKind::Punct:
        if (t.text == "@") emit(t.begin, t.end, tDecorator, 0);
        break;
      case TokenKind::Ident: {
        if (inImport(t.begin)) {
          emit(t.begin, t.end, tNamespace, 0);
          break;
        }
        // The previous significant token: `@name` is an annotation.
        size_t p = i;
        while (p > 0 && (tokens[p - 1].kind == TokenKind::Space || tokens[p - 1].kind == TokenKind::Newline)) --p;
        if (p > 0 && tokens[p - 1].text == "@") {
          emit(t.begin, t.end, tDecorator, 0);
          break;
        }
        auto hit = a.index().at(a.root, t.begin);
        if (hit && hit->range.begin == t.begin && hit->range.end == t.end) {
          const Symbol& s = a.index().symbols[hit->symbol];
          auto [type, mods] = classify(s);
          if (!hit->use) mods |= mDeclaration;
          if (inStdlib(a.path(s.nameRange.file))) mods |= mDefaultLibrary;
          emit(t.begin, t.end, type, mods);
          break;
        }
        std::string_view w = t.text;
        if (findWord(dtypes(), w) || w == "int" || w == "float") emit(t.begin, t.end, tType, mDefaultLibrary);
        else if (findWord(layouts(), w)) emit(t.begin, t.end, tEnumMember, mDefaultLibrary);
        else if (!findBuiltin(w).empty()) emit(t.begin, t.end, tFunction, mDefaultLibrary);
        else if (w == "inf") emit(t.begin, t.end, tVariable, mReadonly | mDefaultLibrary);
        break;
      }
      default: break;
    }
  }
  Json result = jobj();
  set(result, "data", data);
  return result;
}

}  // namespace mk::lsp
