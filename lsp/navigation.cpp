// Hover, go to definition, references and rename: the checker's index (frontend/index.h) says
// what each name under the cursor resolves to.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "lsp/describe.h"
#include "lsp/language.h"
#include "lsp/server_impl.h"

namespace mk::lsp {

namespace fs = std::filesystem;

namespace {

// The import declaration of the document whose module path covers `offset`.
const ast::ImportDecl* importAt(const Analysis& a, uint32_t offset) {
  const Module* m = a.rootModule();
  if (!m || !m->ast) return nullptr;
  for (const auto& d : m->ast->decls)
    if (auto* imp = ast::as<ast::ImportDecl>(d.get()); imp && !imp->path.empty()) {
      SourceRange r = SourceRange::cover(imp->path.front().range, imp->path.back().range);
      if (r.begin <= offset && offset <= r.end) return imp;
    }
  return nullptr;
}

std::optional<FileId> importedFile(const Analysis& a, const ast::ImportDecl* imp) {
  auto it = a.index().imports.find(SemanticIndex::key(imp->range));
  if (it == a.index().imports.end()) return std::nullopt;
  return it->second;
}

// The symbol's type reference as written, for the shape and layout "as written" in a hover.
const ast::TypeRef* writtenType(const Symbol& s) {
  if (auto* w = ast::as<ast::WeightDecl>(s.decl)) return &w->type;
  if (auto* st = ast::as<ast::StateDecl>(s.decl)) return &st->type;
  const std::vector<ast::Param>* ps = nullptr;
  const std::vector<ast::Result>* rs = nullptr;
  if (auto* op = ast::as<ast::OpDecl>(s.owner)) ps = &op->params, rs = &op->results;
  else if (auto* fn = ast::as<ast::FnDecl>(s.owner)) ps = &fn->params, rs = &fn->results;
  else if (auto* st = ast::as<ast::StepDecl>(s.owner)) ps = &st->params, rs = &st->results;
  if (s.kind == SymbolKind::Param && ps)
    for (const auto& p : *ps)
      if (p.name.range.begin == s.nameRange.begin) return &p.type;
  if (s.kind == SymbolKind::Result && rs)
    for (const auto& r : *rs)
      if (r.name && r.name->range.begin == s.nameRange.begin) return &r.type;
  return nullptr;
}

std::string ownerText(const Symbol& s) {
  if (!s.owner) return "";
  const char* kind = s.owner->kind == ast::DeclKind::Op       ? "op"
                     : s.owner->kind == ast::DeclKind::Fn     ? "fn"
                     : s.owner->kind == ast::DeclKind::Step   ? "step"
                     : s.owner->kind == ast::DeclKind::Config ? "config"
                     : s.owner->kind == ast::DeclKind::Group  ? "group"
                                                               : "declaration";
  return fmt::format("{} `{}`", kind, s.owner->name.name);
}

// Markdown to plain text, for clients that do not render markdown.
std::string plain(const std::string& md) {
  std::string out;
  for (size_t i = 0; i < md.size(); ++i) {
    if (md.compare(i, 3, "```") == 0) {
      size_t nl = md.find('\n', i);
      i = nl == std::string::npos ? md.size() : nl;
      continue;
    }
    if (md[i] == '`') continue;
    out += md[i];
  }
  return out;
}

}  // namespace

// ---- hover ----------------------------------------------------------------------------------

namespace {

std::string hoverSymbol(const Analysis& a, const Symbol& s, const SymbolUse* use, const std::string& configName) {
  std::string md = "```mk\n" + declarationLine(a, s) + "\n```\n";
  std::vector<std::string> facts;
  std::string what = symbolKindName(s.kind);
  if ((s.kind == SymbolKind::Weight || s.kind == SymbolKind::State) && s.owner) what += " of " + ownerText(s);
  else if (isLocalSymbol(s.kind) || s.kind == SymbolKind::ConfigField) what += s.owner ? " of " + ownerText(s) : "";
  if (s.nameRange.file != a.root) what += " from `" + moduleName(a, s.nameRange.file) + "`";
  facts.push_back(what);

  const Ty* ty = use && use->ty ? &*use->ty : s.ty ? &*s.ty : nullptr;
  bool unrolled = s.kind == SymbolKind::LoopVar && s.owner && s.owner->kind != ast::DeclKind::Op;
  if (ty && s.kind != SymbolKind::Op && s.kind != SymbolKind::Fn && s.kind != SymbolKind::Step &&
      s.kind != SymbolKind::Config && s.kind != SymbolKind::Group) {
    if (unrolled) facts.push_back("compile-time int (the loop is unrolled: one value per copy of the body)");
    else if (s.kind == SymbolKind::Generic) facts.push_back(ty->kind == TyKind::Float  ? "compile-time float"
                                                            : ty->kind == TyKind::Bool ? "compile-time bool"
                                                                                       : "compile-time int");
    else facts.push_back(describeType(*ty));
    if (ty->kind == TyKind::Tensor || ty->kind == TyKind::Tile) {
      const ast::TypeRef* t = writtenType(s);
      std::string dtype = std::string("dtype `") + dtypeName(ty->dtype) + "`";
      std::string shape;
      if (!ty->shape.empty()) {
        shape = "shape `" + shapeStr(ty->shape) + "`";
        if (t && t->hasShape) {
          std::string written = "[";
          for (size_t i = 0; i < t->dims.size(); ++i) written += (i ? ", " : "") + collapse(a.source(t->dims[i]->range));
          written += "]";
          if (written != shapeStr(ty->shape)) shape = "shape `" + written + "` = `" + shapeStr(ty->shape) + "`";
        }
      }
      std::string layout;
      if (ty->kind == TyKind::Tensor && !ty->shape.empty() && (ty->layout.kind != Layout::RowMajor || (t && t->layout))) {
        layout = "layout `" + ty->layout.str() + "`";
        if (t && t->layout) {
          std::string written = collapse(a.source(t->layout->range));
          if (written != ty->layout.str()) layout = "layout `" + written + "` = `" + ty->layout.str() + "`";
        }
      }
      std::string line = dtype;
      if (!shape.empty()) line += " · " + shape;
      if (!layout.empty()) line += " · " + layout;
      facts.push_back(line);
      // Symbolic dims: what they were at each instantiation of the op or fn.
      bool symbolic = std::any_of(ty->shape.begin(), ty->shape.end(), [](const Dim& d) { return !d.value.isConstant(); });
      if (symbolic && s.owner) {
        auto inst = a.index().instances.find(s.owner);
        if (inst != a.index().instances.end()) {
          size_t shown = 0;
          for (const auto& b : inst->second) {
            if (shown == 4) {
              facts.push_back(fmt::format("… and {} more instantiations", inst->second.size() - shown));
              break;
            }
            auto concrete = concreteShape(ty->shape, b);
            facts.push_back("with " + bindingsText(b) + (concrete ? ": `" + *concrete + "`" : ""));
            ++shown;
          }
        }
      }
    }
    // A generic parameter: its value at each instantiation.
    if (s.kind == SymbolKind::Generic && s.owner) {
      auto inst = a.index().instances.find(s.owner);
      std::vector<std::string> values;
      if (inst != a.index().instances.end())
        for (const auto& b : inst->second)
          if (auto v = b.find(s.name); v != b.end()) {
            std::string text = bindingsText({{s.name, v->second}});
            text = text.substr(text.find('=') + 2);
            if (std::find(values.begin(), values.end(), text) == values.end()) values.push_back(text);
          }
      if (!values.empty()) {
        std::string list;
        for (const auto& v : values) list += (list.empty() ? "`" : ", `") + v + "`";
        facts.push_back("instantiated with " + list);
      }
    }
    bool configDependent = s.nameRange.file == a.root && !configName.empty() && !unrolled &&
                           (s.kind == SymbolKind::Weight || s.kind == SymbolKind::State || s.kind == SymbolKind::Const ||
                            (ty->kind == TyKind::Tensor && !isLocalSymbol(s.kind)));
    if (configDependent || (use && use->range.file == a.root && s.kind == SymbolKind::ConfigField))
      facts.push_back("values under config `" + configName + "`");
  }
  if ((s.kind == SymbolKind::Op || s.kind == SymbolKind::Fn) && s.decl) {
    auto inst = a.index().instances.find(s.decl);
    if (inst != a.index().instances.end()) {
      size_t n = 0;
      for (const auto& b : inst->second) {
        if (n++ == 4) {
          facts.push_back(fmt::format("… and {} more instantiations", inst->second.size() - 4));
          break;
        }
        facts.push_back("instantiated with " + bindingsText(b));
      }
    }
  }
  for (const std::string& f : facts) md += "\n" + f + "  ";
  while (!md.empty() && md.back() == ' ') md.pop_back();
  if (!s.doc.empty()) md += "\n\n---\n\n" + s.doc;
  return md;
}

}  // namespace

Json Server::Impl::hover(const Json& params) {
  auto [doc, a, pos, offset] = requireAt(params);
  std::string md;
  SourceRange where;
  std::string configName = a.program && a.program->config ? a.program->config->name.name : "";
  if (auto hit = a.index().at(a.root, offset)) {
    md = hoverSymbol(a, a.index().symbols[hit->symbol], hit->use, configName);
    where = hit->range;
  } else if (const ast::ImportDecl* imp = importAt(a, offset)) {
    auto file = importedFile(a, imp);
    md = "```mk\nimport " + imp->dotted() + "\n```\n";
    md += file ? "\nmodule `" + imp->dotted() + "`: " + a.path(*file) : "\nmodule `" + imp->dotted() + "` (not found)";
    where = SourceRange::cover(imp->path.front().range, imp->path.back().range);
  } else {
    auto [b, e] = identifierAt(doc.doc.text(), offset);
    std::string word = doc.doc.text().substr(b, e - b);
    if (word.empty() || isKeyword(word)) return jnull();
    where = {a.root, b, e};
    if (auto bs = findBuiltin(word); !bs.empty()) {
      md = "```mk\n";
      for (const BuiltinInfo* bi : bs) md += bi->signature + "\n";
      md += "```\ntile builtin (op bodies only)\n\n---\n\n";
      for (const BuiltinInfo* bi : bs) md += bi->doc + (bi == bs.back() ? "" : "\n\n");
    } else if (const WordInfo* dt = findWord(dtypes(), word)) {
      md = "```mk\n" + dt->name + "\n```\ndtype: " + dt->detail + "\n\n---\n\n" + dt->doc;
    } else if (const WordInfo* lay = findWord(layouts(), word)) {
      md = "```mk\n" + lay->detail + "\n```\nlayout\n\n---\n\n" + lay->doc;
    } else if (word == "inf") {
      md = "```mk\ninf\n```\ncompile-time float: infinity (`-inf` is its negation)";
    } else if (word == "int" || word == "float") {
      md = "```mk\n" + word + "\n```\nthe type of compile-time " + (word == "int" ? "integers" : "floats") +
           " (constants and generic parameters)";
    } else {
      return jnull();
    }
  }
  Json contents = jobj();
  set(contents, "kind", jstr(markdownHover ? "markdown" : "plaintext"));
  set(contents, "value", jstr(markdownHover ? md : plain(md)));
  Json result = jobj();
  set(result, "contents", contents);
  set(result, "range", range(a, where));
  return result;
}

// ---- definition -----------------------------------------------------------------------------

Json Server::Impl::definition(const Json& params) {
  auto [doc, a, pos, offset] = requireAt(params);
  if (auto hit = a.index().at(a.root, offset)) return location(a, a.index().symbols[hit->symbol].nameRange);
  if (const ast::ImportDecl* imp = importAt(a, offset))
    if (auto file = importedFile(a, imp)) return location(a, SourceRange{*file, 0, 0});
  return jnull();
}

// ---- references -----------------------------------------------------------------------------

namespace {
// Where a symbol is declared, in terms that mean the same in every analysis: the file's path and
// the name's bytes.
struct SymbolKey {
  std::string path;
  uint32_t begin = 0, end = 0;
  bool operator<(const SymbolKey& o) const { return std::tie(path, begin, end) < std::tie(o.path, o.begin, o.end); }
};

// The symbols that are one name for references and rename: the symbol itself and, for a config
// field, the field of that name in every config of its file.
std::vector<size_t> sameName(const SemanticIndex& index, size_t symbol) {
  const Symbol& s = index.symbols[symbol];
  std::vector<size_t> out{symbol};
  if (s.kind != SymbolKind::ConfigField) return out;
  for (size_t i = 0; i < index.symbols.size(); ++i)
    if (i != symbol && index.symbols[i].kind == SymbolKind::ConfigField && index.symbols[i].name == s.name &&
        index.symbols[i].nameRange.file == s.nameRange.file)
      out.push_back(i);
  return out;
}
}  // namespace

std::vector<Server::Impl::Occurrence> Server::Impl::occurrences(const OpenDoc& doc, uint32_t offset, bool declarations) {
  std::vector<Occurrence> out;
  const Analysis& a = analysisFor(doc);
  auto hit = a.index().at(a.root, offset);
  if (!hit) return out;
  const Symbol& target = a.index().symbols[hit->symbol];
  SymbolKey key{a.path(target.nameRange.file), target.nameRange.begin, target.nameRange.end};
  bool local = isLocalSymbol(target.kind);
  std::set<std::tuple<std::string, uint32_t, uint32_t>> seen;
  auto collect = [&](const Analysis& an) {
    auto file = an.sources.find(key.path);
    if (!file) return;
    auto sym = an.index().symbolAt(SourceRange{*file, key.begin, key.end});
    if (!sym) return;
    std::vector<size_t> syms = sameName(an.index(), *sym);
    auto add = [&](SourceRange r, bool isDecl) {
      std::string uri = uriOf(an, r.file);
      if (!seen.insert({uri, r.begin, r.end}).second) return;
      out.push_back({uri, an.path(r.file), r, isDecl, &an});
    };
    if (declarations)
      for (size_t i : syms) add(an.index().symbols[i].nameRange, true);
    for (const SymbolUse& u : an.index().uses)
      if (std::find(syms.begin(), syms.end(), u.symbol) != syms.end()) add(u.range, false);
  };
  collect(a);
  // Locals live in one body, which this analysis saw whole; module-level names may be used by
  // every open document that reads their file.
  if (!local) {
    for (auto& [uri, other] : docs) {
      if (uri == doc.doc.uri()) continue;
      auto c = cache.find(uri);
      bool reads = other.path == key.path || (c != cache.end() && c->second.deps.count(key.path));
      if (!reads && c != cache.end() && c->second.analysis) continue;  // known not to read it
      collect(analysisFor(other));
    }
  }
  std::sort(out.begin(), out.end(), [](const Occurrence& x, const Occurrence& y) {
    return std::tie(x.uri, x.range.begin) < std::tie(y.uri, y.range.begin);
  });
  return out;
}

Json Server::Impl::references(const Json& params) {
  OpenDoc& doc = requireDoc(params);
  Position pos = requirePosition(params, doc);
  bool withDecl = asBool(at(&params, {"context", "includeDeclaration"})).value_or(true);
  Json list = jarr();
  for (const Occurrence& o : occurrences(doc, doc.doc.offset(pos, enc), withDecl)) {
    Json loc = jobj();
    set(loc, "uri", jstr(o.uri));
    set(loc, "range", range(*o.analysis, o.range));
    push(list, loc);
  }
  return list;
}

}  // namespace mk::lsp

// ---- rename ---------------------------------------------------------------------------------

namespace mk::lsp {

namespace {
// The symbol under the cursor, if rename may touch it; throws RequestFailed when it may not.
std::optional<SemanticIndex::Hit> renameTarget(const Analysis& a, uint32_t offset, const Server::Impl& server) {
  auto hit = a.index().at(a.root, offset);
  if (!hit) return std::nullopt;
  const Symbol& s = a.index().symbols[hit->symbol];
  if (server.inStdlib(a.path(s.nameRange.file)))
    throw RpcError{errc::RequestFailed, "'" + s.name + "' is declared in the stdlib (" + moduleName(a, s.nameRange.file) +
                                            "), which rename leaves alone"};
  return hit;
}
}  // namespace

Json Server::Impl::prepareRenameRequest(const Json& params) {
  auto [doc, a, pos, offset] = requireAt(params);
  auto hit = renameTarget(a, offset, *this);
  if (!hit) return jnull();
  Json r = jobj();
  set(r, "range", range(a, hit->range));
  set(r, "placeholder", jstr(a.index().symbols[hit->symbol].name));
  return r;
}

Json Server::Impl::rename(const Json& params) {
  OpenDoc& doc = requireDoc(params);
  Position pos = requirePosition(params, doc);
  auto newName = asString(params.get("newName"));
  if (!newName) throw RpcError{errc::InvalidParams, "missing newName"};
  if (!isIdentifier(*newName) || isKeyword(*newName))
    throw RpcError{errc::InvalidParams, "'" + *newName + "' is not a valid name (letters, digits and _, not a keyword)"};
  const Analysis& a = analysisFor(doc);
  uint32_t offset = doc.doc.offset(pos, enc);
  auto hit = renameTarget(a, offset, *this);
  if (!hit) throw RpcError{errc::RequestFailed, "there is no name to rename here"};
  const Symbol& s = a.index().symbols[hit->symbol];
  // A name that would clash: another declaration of it where the symbol lives.
  if (*newName != s.name)
    for (const Symbol& other : a.index().symbols) {
      if (other.name != *newName || other.nameRange.file != s.nameRange.file) continue;
      bool clash = isLocalSymbol(s.kind) ? (isLocalSymbol(other.kind) && other.owner == s.owner)
                                         : (!isLocalSymbol(other.kind) && other.kind != SymbolKind::ConfigField &&
                                            !(other.owner && other.owner->kind == ast::DeclKind::Group)) ||
                                               (s.kind == SymbolKind::ConfigField && other.kind == SymbolKind::ConfigField);
      if (s.owner && s.owner->kind == ast::DeclKind::Group)
        clash = other.owner == s.owner;  // group members: within their group
      if (clash)
        throw RpcError{errc::RequestFailed, "'" + *newName + "' is already declared here (" +
                                                moduleName(a, other.nameRange.file) + ")"};
    }
  std::map<std::string, Json> changes;  // ordered by URI
  for (const Occurrence& o : occurrences(doc, offset, true)) {
    if (inStdlib(o.path)) continue;
    Json edit = jobj();
    set(edit, "range", range(*o.analysis, o.range));
    set(edit, "newText", jstr(*newName));
    auto [it, _] = changes.emplace(o.uri, jarr());
    push(it->second, edit);
  }
  Json byUri = jobj();
  for (auto& [uri, edits] : changes) set(byUri, uri, std::move(edits));
  Json result = jobj();
  set(result, "changes", byUri);
  return result;
}

}  // namespace mk::lsp
