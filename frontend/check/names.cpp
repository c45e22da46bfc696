// Names: locals in the scopes of a body, module-level declarations, config fields; and the
// "did you mean" hints for names that resolve to nothing.
#include "frontend/check/context.h"

#include <algorithm>
#include <cmath>

namespace mk::check {

namespace {

// Edit distance for "did you mean" hints.
size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::string suggest(const std::string& name, const std::vector<std::string>& candidates) {
  std::string best;
  size_t bestD = name.size() <= 3 ? 1 : 2;
  for (const auto& c : candidates) {
    if (c.empty() || c == name) continue;
    size_t d = editDistance(name, c);
    if (d <= bestD && (best.empty() || d < bestD)) best = c, bestD = d;
  }
  return best.empty() ? "" : "; did you mean '" + best + "'?";
}

std::string plural(size_t n) { return n == 1 ? "" : "s"; }

Local* Checker::findLocal(Ctx& ctx, const std::string& name) {
  for (auto it = ctx.scopes.rbegin(); it != ctx.scopes.rend(); ++it) {
    auto f = it->names.find(name);
    if (f != it->names.end()) return &f->second;
  }
  return nullptr;
}

void Checker::declareLocal(Ctx& ctx, const Ident& name, Local local, SourceRange declRange, SourceRange scope,
                           std::optional<SymbolKind> kind) {
  if (name.name.empty()) return;
  if (ctx.scopes.empty()) ctx.scopes.emplace_back();
  // Shadowing within one body is an error: one name, one meaning per body.
  for (auto& s : ctx.scopes)
    if (auto f = s.names.find(name.name); f != s.names.end()) {
      diags_->emit(name.range, Redefinition, name.name).note(f->second.range, PreviousDefinition);
      return;
    }
  local.range = name.range;
  if (recording()) {
    static constexpr SymbolKind kKinds[] = {SymbolKind::Let,     SymbolKind::Var,     SymbolKind::LocalConst,
                                            SymbolKind::Param,   SymbolKind::Generic, SymbolKind::TaskVar,
                                            SymbolKind::LoopVar};
    Symbol sym;
    sym.kind = kind ? *kind : kKinds[local.kind];
    sym.name = name.name;
    sym.nameRange = name.range;
    sym.range = declRange.valid() ? declRange : name.range;
    sym.scope = scope.valid() ? scope : block_.valid() ? block_ : ctx.decl ? ctx.decl->range : SourceRange{};
    sym.owner = ctx.decl;
    sym.ty = local.ty;
    index_->declare(std::move(sym));
  }
  ctx.scopes.back().names[name.name] = std::move(local);
}

std::vector<std::string> Checker::namesInScope(const Ctx& ctx) const {
  std::vector<std::string> out;
  for (const auto& s : ctx.scopes)
    for (const auto& [n, _] : s.names) out.push_back(n);
  if (ctx.mod && ctx.kind != BodyKind::Config) {
    if (auto it = globals_.find(ctx.mod); it != globals_.end())
      for (const auto& [n, _] : it->second) out.push_back(n);
    for (Module* imp : ctx.mod->imports)
      if (auto it = globals_.find(imp); it != globals_.end())
        for (const auto& [n, _] : it->second) out.push_back(n);
    if (ctx.mod->isRoot)
      for (const auto& [n, _] : configFields_) out.push_back(n);
  }
  if (ctx.kind == BodyKind::Op) out.insert(out.end(), builtinNames().begin(), builtinNames().end());
  out.push_back("inf");
  return out;
}

Ty Checker::nameValue(const std::string& name, SourceRange range, Ctx& ctx) {
  if (name.empty()) return Ty::error();  // the parser already reported what was missing
  if (Local* l = findLocal(ctx, name)) {
    recordUse(range, l->range, &l->ty);
    return l->ty;
  }
  if (ctx.kind == BodyKind::Config) {
    // Config fields see earlier fields only; they are bound as locals.
    if (name == "inf") return Ty::floatConst(INFINITY);
    if (configOrder_) {
      auto later = std::find_if(configOrder_->begin(), configOrder_->end(), [&](const ConfigField* f) { return f->name.name == name; });
      if (later != configOrder_->end()) {
        diags_->emit(range, UnknownName, name, "; it is set later in this config, and a field sees only the fields before it")
            .note((*later)->name.range, DeclaredHere, name);
        return Ty::error();
      }
    }
    diags_->emit(range, UnknownName, name, suggest(name, namesInScope(ctx)));
    return Ty::error();
  }
  if (auto sym = findGlobal(ctx.mod, name, range, true)) {
    if (!sym->decl) return Ty::error();
    Ty t = globalValue(*sym, range, ctx);
    recordUse(range, sym->decl->name.range, &t);
    if (elaborating() && t.kind == TyKind::Tensor && (as<WeightDecl>(sym->decl) || as<StateDecl>(sym->decl)))
      t = graphStorage(sym->decl, t, std::nullopt);
    return t;
  }
  if (ctx.mod && ctx.mod->isRoot)
    if (auto it = configFields_.find(name); it != configFields_.end()) {
      recordUse(range, it->second.second, &it->second.first);
      return it->second.first;
    }
  if (name == "inf") return Ty::floatConst(INFINITY);
  diags_->emit(range, UnknownName, name, suggest(name, namesInScope(ctx)));
  return Ty::error();
}

Ty Checker::globalValue(const GlobalSym& sym, SourceRange use, Ctx& ctx) {
  const Decl* d = sym.decl;
  if (as<OpDecl>(d) || as<FnDecl>(d) || as<StepDecl>(d) || as<ConfigDecl>(d)) {
    const char* what = as<OpDecl>(d) ? "an op" : as<FnDecl>(d) ? "a fn" : as<StepDecl>(d) ? "the step" : "a config";
    diags_->emit(use, NotConstant, fmt::format("'{}' used as a value", d->name.name), fmt::format("it is {}", what))
        .note(d->name.range, DeclaredHere, d->name.name);
    return Ty::error();
  }
  bool storage = as<WeightDecl>(d) || as<StateDecl>(d) || as<GroupDecl>(d);
  if (storage && ctx.kind == BodyKind::Op) {
    diags_->emit(use, GlobalInOp, as<WeightDecl>(d) ? "weight" : as<StateDecl>(d) ? "state" : "group", d->name.name);
    return Ty::error();
  }
  if (storage && (ctx.kind == BodyKind::TopLevel || ctx.kind == BodyKind::Config)) {
    diags_->emit(use, NotConstant, fmt::format("'{}'", d->name.name), "it is a tensor, not a constant");
    return Ty::error();
  }
  if (auto it = declTy_.find(d); it != declTy_.end()) return it->second;
  if (auto at = std::find(visiting_.begin(), visiting_.end(), d); at != visiting_.end()) {
    std::string chain;
    for (auto it = at; it != visiting_.end(); ++it) chain += (*it)->name.name + " -> ";
    diags_->emit(use, ConstCycle, d->name.name, chain + d->name.name).note(d->name.range, DeclaredHere, d->name.name);
    return declTy_[d] = Ty::error();
  }
  visiting_.push_back(d);
  ++forceRecord_;
  Ctx top;
  top.mod = sym.mod;
  top.kind = BodyKind::TopLevel;
  Ty ty = Ty::error();
  if (auto* c = as<ConstDecl>(d)) {
    ty = evalConst(c->value.get(), top, fmt::format("constant '{}'", c->name.name));
    if (c->type && !ty.isError()) {
      std::string tn = c->type->name.name;
      bool ok = (tn == "int" && ty.kind == TyKind::Int) || (tn == "float" && (ty.kind == TyKind::Float || ty.kind == TyKind::Int)) ||
                (tn == "bool" && ty.kind == TyKind::Bool);
      if (tn != "int" && tn != "float" && tn != "bool")
        diags_->emit(c->type->range, GenericType, c->name.name, tn);
      else if (!ok)
        diags_->emit(c->value->range, ConstTypeMismatch, c->name.name, tn, tyStr(ty));
      else if (tn == "float" && ty.kind == TyKind::Int && ty.intValue && ty.intValue->isConstant())
        ty = Ty::floatConst(static_cast<double>(ty.intValue->value()));
    }
  } else if (auto* w = as<WeightDecl>(d)) {
    ty = storageType(w, w->type, Storage::Weight, top);
    if (!ty.isError()) checkWeightSources(*w, ty, nullptr);
  } else if (auto* s = as<StateDecl>(d)) {
    ty = storageType(s, s->type, Storage::State, top);
  } else if (auto* g = as<GroupDecl>(d)) {
    ty = groupType(g, sym.mod);
  }
  --forceRecord_;
  visiting_.pop_back();
  declTy_[d] = ty;
  return ty;
}


}  // namespace mk::check
