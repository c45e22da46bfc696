#include "lsp/describe.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "lsp/language.h"

namespace mk::lsp {

namespace {
std::string text(const Analysis& a, SourceRange r) { return collapse(a.source(r)); }
std::string text(std::string_view file, SourceRange r) {
  uint32_t b = std::min<uint32_t>(r.begin, static_cast<uint32_t>(file.size()));
  uint32_t e = std::min<uint32_t>(std::max(r.begin, r.end), static_cast<uint32_t>(file.size()));
  return collapse(file.substr(b, e - b));
}

std::string resultsText(std::string_view a, const ast::Decl* d) {
  const std::vector<ast::Result>* rs = nullptr;
  bool tuple = false;
  if (auto* op = ast::as<ast::OpDecl>(d)) {
    rs = &op->results;
    tuple = op->results.size() != 1;
  } else if (auto* fn = ast::as<ast::FnDecl>(d)) {
    rs = &fn->results;
    tuple = fn->tupleResult;
    if (rs->empty()) return "";
  } else if (auto* st = ast::as<ast::StepDecl>(d)) {
    rs = &st->results;
    tuple = st->tupleResult;
  }
  if (!rs) return "";
  std::string out = " -> ";
  if (tuple) out += "(";
  for (size_t i = 0; i < rs->size(); ++i) {
    if (i) out += ", ";
    out += text(a, (*rs)[i].range);
  }
  if (tuple) out += ")";
  return out;
}
}  // namespace

CallSignature callSignature(std::string_view a, const ast::Decl* d) {
  CallSignature s;
  const std::vector<ast::GenericParam>* gs = nullptr;
  const std::vector<ast::Param>* ps = nullptr;
  if (auto* op = ast::as<ast::OpDecl>(d)) gs = &op->generics, ps = &op->params;
  else if (auto* fn = ast::as<ast::FnDecl>(d)) gs = &fn->generics, ps = &fn->params;
  else if (auto* st = ast::as<ast::StepDecl>(d)) ps = &st->params;
  s.label = d->name.name;
  std::vector<std::pair<uint32_t, uint32_t>> generic;
  std::vector<std::string> genericNames;
  if (gs && !gs->empty()) {
    s.label += "<";
    for (size_t i = 0; i < gs->size(); ++i) {
      if (i) s.label += ", ";
      auto b = static_cast<uint32_t>(s.label.size());
      s.label += text(a, (*gs)[i].range);
      generic.push_back({b, static_cast<uint32_t>(s.label.size())});
      genericNames.push_back((*gs)[i].name.name);
    }
    s.label += ">";
  }
  s.label += "(";
  if (ps)
    for (size_t i = 0; i < ps->size(); ++i) {
      if (i) s.label += ", ";
      auto b = static_cast<uint32_t>(s.label.size());
      s.label += text(a, (*ps)[i].range);
      s.params.push_back({b, static_cast<uint32_t>(s.label.size())});
      s.paramNames.push_back((*ps)[i].name.name);
    }
  s.label += ")";
  s.label += resultsText(a, d);
  s.positional = s.params.size();
  s.params.insert(s.params.end(), generic.begin(), generic.end());
  s.paramNames.insert(s.paramNames.end(), genericNames.begin(), genericNames.end());
  return s;
}

namespace {
// The statement text of a local, up to `stop` (a body's start) and without its `;`.
std::string statement(const Analysis& a, SourceRange r, uint32_t stop = UINT32_MAX) {
  if (stop < r.end && stop > r.begin) r.end = stop;
  std::string t = text(a, r);
  while (!t.empty() && (t.back() == ';' || t.back() == ' ' || t.back() == '{')) t.pop_back();
  return shorten(t, 160);
}

const ast::Block* bodyOf(const ast::Decl* d) {
  if (auto* op = ast::as<ast::OpDecl>(d)) return &op->body;
  if (auto* fn = ast::as<ast::FnDecl>(d)) return &fn->body;
  if (auto* st = ast::as<ast::StepDecl>(d)) return &st->body;
  return nullptr;
}

// The for statement that declares loop variable `name` at `at`, searched in a block.
const ast::ForStmt* findFor(const ast::Block& b, SourceRange at) {
  for (const auto& s : b.stmts) {
    if (auto* f = ast::as<ast::ForStmt>(s.get())) {
      if (f->var.range.begin == at.begin && f->var.range.file == at.file) return f;
      if (auto* inner = findFor(f->body, at)) return inner;
    } else if (auto* i = ast::as<ast::IfStmt>(s.get())) {
      if (auto* inner = findFor(i->then, at)) return inner;
      if (i->otherwise)
        if (auto* inner = findFor(*i->otherwise, at)) return inner;
    }
  }
  return nullptr;
}
}  // namespace

std::string declarationLine(const Analysis& a, const Symbol& s) {
  const ast::Decl* d = s.decl;
  switch (s.kind) {
    case SymbolKind::Op:
    case SymbolKind::Fn:
    case SymbolKind::Step: {
      std::string line = std::string(s.kind == SymbolKind::Op ? "op " : s.kind == SymbolKind::Fn ? "fn " : "step ") +
                         callSignature(a, d).label;
      if (auto* op = ast::as<ast::OpDecl>(d)) {
        for (auto it = op->annotations.rbegin(); it != op->annotations.rend(); ++it) line = text(a, it->range) + " " + line;
        if (!op->tasks.empty()) {
          line += "\n    tasks ";
          for (size_t i = 0; i < op->tasks.size(); ++i) line += (i ? ", " : "") + text(a, op->tasks[i].range);
        }
      }
      return line;
    }
    case SymbolKind::Const: return statement(a, d ? d->range : s.range);
    case SymbolKind::Config: {
      auto* c = ast::as<ast::ConfigDecl>(d);
      return "config " + s.name + (c && c->base ? " : " + c->base->name : "");
    }
    case SymbolKind::ConfigField: return statement(a, s.range);
    case SymbolKind::Weight:
    case SymbolKind::State: {
      auto* w = ast::as<ast::WeightDecl>(d);
      auto* st = ast::as<ast::StateDecl>(d);
      const ast::TypeRef* t = w ? &w->type : st ? &st->type : nullptr;
      std::string line = std::string(w ? "weight " : "state ") + s.name + (t ? ": " + text(a, t->range) : "");
      if (w && !w->sources.empty()) {
        line += " = ";
        if (w->sourceList) line += "[";
        for (size_t i = 0; i < w->sources.size(); ++i) line += (i ? ", " : "") + text(a, w->sources[i].range);
        if (w->sourceList) line += "]";
      }
      return line;
    }
    case SymbolKind::Group: {
      auto* g = ast::as<ast::GroupDecl>(d);
      if (!g) return "group " + s.name;
      return "group " + s.name + "[" + g->var.name + " in " + (g->lo ? text(a, g->lo->range) : "") + " .. " +
             (g->hi ? text(a, g->hi->range) : "") + "]";
    }
    case SymbolKind::Generic: return "generic " + text(a, s.range);
    case SymbolKind::Param:
    case SymbolKind::Result: return text(a, s.range);
    case SymbolKind::TaskVar: return "tasks " + text(a, s.range);
    case SymbolKind::LoopVar: {
      const ast::Block* body = s.owner ? bodyOf(s.owner) : nullptr;
      const ast::ForStmt* f = body ? findFor(*body, s.nameRange) : nullptr;
      return statement(a, s.range, f ? f->body.range.begin : UINT32_MAX);
    }
    case SymbolKind::Let:
    case SymbolKind::Var:
    case SymbolKind::LocalConst: return statement(a, s.range);
  }
  return s.name;
}

std::string describeType(const Ty& t) {
  auto value = [&]() -> std::string {
    if (t.kind == TyKind::Int && t.intValue) return " `" + t.intValue->str() + "`";
    if (t.kind == TyKind::Float && t.floatValue) return fmt::format(" `{}`", *t.floatValue);
    if (t.kind == TyKind::Bool && t.boolValue) return *t.boolValue ? " `true`" : " `false`";
    return "";
  };
  switch (t.kind) {
    case TyKind::Error: return "type unknown (the checker reported an error here)";
    case TyKind::Int: return "compile-time int" + value();
    case TyKind::Float: return "compile-time float" + value();
    case TyKind::Bool: return "compile-time bool" + value();
    case TyKind::Scalar: return std::string("runtime scalar `") + dtypeName(t.dtype) + "`";
    case TyKind::Tile: return "tile `" + tyStr(t) + "`";
    case TyKind::Tensor:
      if (t.shape.empty()) return std::string("scalar `") + dtypeName(t.dtype) + "`";
      return "tensor `" + tyStr(t) + "`" + (t.writable && t.storage != Storage::State ? " (writable)" : "");
    case TyKind::GroupArray:
    case TyKind::GroupElem: {
      std::string g = t.group ? t.group->name.name : "";
      if (t.kind == TyKind::GroupArray) return "group `" + g + "`";
      return "element of group `" + g + "`" + (t.groupIndex ? fmt::format(" (index {})", *t.groupIndex) : "");
    }
    case TyKind::Tuple: return "results `" + tyStr(t) + "`";
    case TyKind::Void: return "no value";
  }
  return tyStr(t);
}

std::string bindingsText(const std::map<std::string, Ty>& bindings) {
  std::string out;
  for (const auto& [n, v] : bindings) {
    std::string value = v.kind == TyKind::Int && v.intValue ? v.intValue->str()
                        : v.kind == TyKind::Float && v.floatValue ? fmt::format("{}", *v.floatValue)
                        : v.kind == TyKind::Bool && v.boolValue ? (*v.boolValue ? "true" : "false")
                                                                : "?";
    out += (out.empty() ? "" : ", ") + n + " = " + value;
  }
  return out;
}

std::optional<std::string> concreteShape(const Shape& shape, const std::map<std::string, Ty>& bindings) {
  std::map<std::string, Poly> env;
  for (const auto& [n, v] : bindings)
    if (v.kind == TyKind::Int && v.intValue) env[n] = *v.intValue;
  bool changed = false;
  Shape out;
  for (const Dim& d : shape) {
    if (d.value.isConstant()) {
      out.push_back(d);
      continue;
    }
    auto p = d.value.substitute(env);
    if (!p || !p->isConstant()) return std::nullopt;
    out.push_back({*p, d.origin});
    changed = true;
  }
  if (!changed) return std::nullopt;
  return shapeStr(out);
}

std::string moduleName(const Analysis& a, FileId file) {
  if (const Module* m = a.module(file)) {
    if (!m->isRoot) return m->name;
  }
  return std::filesystem::path(a.path(file)).filename().string();
}

}  // namespace mk::lsp
