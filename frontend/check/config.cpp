// Configs (with bases and --set overrides), compile-time constants and static assertions.
#include "frontend/check/context.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <functional>
#include <set>

namespace mk::check {

void Checker::checkConfigs(Module* root) {
  std::vector<const ConfigDecl*> configs;
  for (const auto& d : root->ast->decls)
    if (auto* c = as<ConfigDecl>(d.get())) configs.push_back(c);
  std::map<std::string, const ConfigDecl*> byName;
  for (auto* c : configs) byName.emplace(c->name.name, c);
  std::vector<std::string> names;
  for (auto* c : configs) names.push_back(c->name.name);

  // A config's fields in order, each with its winning definition: a derived config keeps its
  // base's order and formulas, with its own overrides in place, so `q_dim = heads * head_dim`
  // follows an overridden `heads`.
  std::map<const ConfigDecl*, std::vector<const ConfigField*>> order;
  std::set<const ConfigDecl*> active;
  std::function<bool(const ConfigDecl*)> build = [&](const ConfigDecl* c) -> bool {
    if (order.count(c)) return true;
    if (active.count(c)) {
      diags_->emit(c->name.range, ConfigBaseCycle, c->name.name);
      return false;
    }
    active.insert(c);
    std::vector<const ConfigField*> fields;
    const ConfigDecl* base = nullptr;
    if (c->base) {
      auto it = byName.find(c->base->name);
      if (it != byName.end()) recordUse(c->base->range, it->second->name.range, nullptr);
      if (it == byName.end()) {
        diags_->emit(c->base->range, UnknownConfig, c->base->name, suggest(c->base->name, names));
      } else if (build(it->second)) {
        base = it->second;
        fields = order[base];
      }
    }
    std::set<std::string> own;
    for (const auto& f : c->fields) {
      if (f.name.name.empty()) continue;
      if (!own.insert(f.name.name).second) {
        auto first = std::find_if(c->fields.begin(), c->fields.end(), [&](const ConfigField& o) { return o.name.name == f.name.name; });
        diags_->emit(f.name.range, DuplicateField, f.name.name).note(first->name.range, PreviousDefinition);
        continue;
      }
      auto slot = std::find_if(fields.begin(), fields.end(), [&](const ConfigField* o) { return o->name.name == f.name.name; });
      if (slot != fields.end()) {
        *slot = &f;
      } else if (base) {
        std::vector<std::string> baseNames;
        for (auto* bf : order[base]) baseNames.push_back(bf->name.name);
        diags_->emit(f.name.range, ConfigNewField, c->name.name, f.name.name, base->name.name, suggest(f.name.name, baseNames))
            .note(base->name.range, DeclaredHere, base->name.name);
      } else {
        fields.push_back(&f);
      }
    }
    active.erase(c);
    order[c] = std::move(fields);
    return true;
  };
  const ConfigDecl* selected = configs.empty() ? nullptr : configs.front();
  if (options_.configName) {
    auto it = byName.find(*options_.configName);
    if (it == byName.end()) {
      std::string hint = suggest(*options_.configName, names);
      if (names.empty()) hint = " (it declares none)";
      else if (hint.empty()) {
        hint = "; it has ";
        for (size_t i = 0; i < names.size(); ++i) hint += (i ? ", " : "") + names[i];
      }
      diags_->emit(SourceRange{}, NoSuchConfigOption, *options_.configName, hint);
      selected = nullptr;
    } else {
      selected = it->second;
    }
  }
  // --set NAME=VALUE: literal values that replace fields of the selected config; formulas that
  // use them follow.
  std::map<std::string, Ty> overrides;
  for (const auto& [name, text] : options_.overrides) {
    Ty v;
    char* end = nullptr;
    errno = 0;
    long long iv = std::strtoll(text.c_str(), &end, 10);
    bool decimal = !text.empty() && text.find_first_not_of("0123456789+-.eE") == std::string::npos;
    if (!text.empty() && *end == '\0' && errno == 0) {
      v = Ty::intConst(Poly::constant(iv));
    } else if (text == "true" || text == "false") {
      v = Ty::boolConst(text == "true");
    } else {
      errno = 0;
      double dv = decimal ? std::strtod(text.c_str(), &end) : 0;
      // Only plain decimal numbers: no hex floats, no inf or nan, nothing out of range.
      if (!decimal || *end != '\0' || errno != 0 || !std::isfinite(dv) ||
          text.find_first_of(".eE") == std::string::npos) {
        diags_->emit(SourceRange{}, BadOverride, name, text);
        continue;
      }
      v = Ty::floatConst(dv);
    }
    overrides[name] = v;
  }
  std::map<const ConfigDecl*, std::map<std::string, std::pair<Ty, SourceRange>>> values;
  auto eval = [&](const ConfigDecl* c) {
    if (!build(c)) return;
    Ctx ctx;
    ctx.mod = root;
    ctx.kind = BodyKind::Config;
    ctx.decl = c;
    ctx.scopes.emplace_back();
    configOrder_ = &order[c];
    auto& out = values[c];
    for (const ConfigField* f : order[c]) {
      Ty v = evalConst(f->value.get(), ctx, fmt::format("config field '{}'", f->name.name));
      if (auto forced = c == selected ? overrides.find(f->name.name) : overrides.end(); forced != overrides.end()) {
        // The override must be of the field's kind (an integer may stand for a float).
        const Ty& o = forced->second;
        bool fits = v.isError() || o.kind == v.kind || (v.kind == TyKind::Float && o.kind == TyKind::Int);
        if (!fits) {
          diags_->emit(SourceRange{}, OverrideKind, f->name.name, tyStr(v), tyStr(o));
        } else if (v.kind == TyKind::Float && o.kind == TyKind::Int) {
          v = Ty::floatConst(static_cast<double>(o.intValue->value()));
        } else {
          v = o;
        }
      }
      out[f->name.name] = {v, f->name.range};
      ctx.scopes.back().names[f->name.name] = Local{Local::Const, v, f->name.range};
      if (recording())
        if (auto i = index_->symbolAt(f->name.range); i && !index_->symbols[*i].ty) index_->symbols[*i].ty = v;
    }
    configOrder_ = nullptr;
  };
  for (auto* c : configs) eval(c);
  if (selected)
    for (const auto& [name, _] : overrides)
      if (!values[selected].count(name)) {
        std::vector<std::string> fields;
        for (auto& [n, __] : values[selected]) fields.push_back(n);
        diags_->emit(SourceRange{}, NoSuchOverride, name, selected->name.name, suggest(name, fields));
      }
  program_.config = selected;
  if (!selected) return;
  configFields_ = values[selected];
  auto& table = globals_[root];
  for (auto& [n, v] : configFields_) {
    program_.configValues[n] = v.first;
    if (auto it = table.find(n); it != table.end())
      diags_->emit(v.second, ConfigFieldClash, n).note(it->second.decl->name.range, PreviousDefinition);
  }
}

Ty Checker::evalConst(const Expr* e, Ctx& ctx, const std::string& what) {
  Ty t = checkExpr(e, ctx);
  if (t.isError() || t.isCompileTime()) return t;
  diags_->emit(e->range, NotConstant, what, fmt::format("this is {}", t.kind == TyKind::Tensor ? "a tensor" : "a runtime value"));
  return Ty::error();
}

std::optional<int64_t> Checker::constInt(const Expr* e, Ctx& ctx, const std::string& what) {
  Ty t = evalConst(e, ctx, what);
  if (t.isError()) return std::nullopt;
  if (t.kind != TyKind::Int) {
    diags_->emit(e->range, ExpectedInt, what, tyStr(t));
    return std::nullopt;
  }
  if (!t.intValue || !t.intValue->isConstant()) return std::nullopt;
  return t.intValue->value();
}


void Checker::checkStaticAssert(const Expr* cond, const std::optional<std::string>& msg, SourceRange range, Ctx& ctx) {
  Ty c = checkExpr(cond, ctx);
  if (c.isError()) return;
  if (c.kind != TyKind::Bool) {
    diags_->emit(cond->range, StaticAssertNotBool, tyStr(c));
    return;
  }
  // Unknown while generic parameters are symbolic: decided per instantiation.
  if (c.boolValue && !*c.boolValue) diags_->emit(range, StaticAssertFailed, msg ? ": " + *msg : std::string());
}

}  // namespace mk::check
