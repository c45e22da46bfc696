// Calls of ops and fns from fns and the step: arguments, generic inference, signature checks,
// instantiation at concrete generic values, and recursion through the call graph.
#include "frontend/check/context.h"

#include <algorithm>
#include <functional>

namespace mk::check {

bool concreteValue(const Ty& t) {
  return (t.kind == TyKind::Int && t.intValue && t.intValue->isConstant()) || (t.kind == TyKind::Float && t.floatValue) ||
         (t.kind == TyKind::Bool && t.boolValue);
}
std::string valueStr(const Ty& t) {
  if (t.kind == TyKind::Int && t.intValue) return t.intValue->str();
  if (t.kind == TyKind::Float && t.floatValue) return fmt::format("{}", *t.floatValue);
  if (t.kind == TyKind::Bool && t.boolValue) return *t.boolValue ? "true" : "false";
  return tyStr(t);
}
std::string genericKind(const GenericParam& g) { return g.type ? g.type->name : "int"; }
bool genericAccepts(const GenericParam& g, const Ty& v) {
  std::string k = genericKind(g);
  if (k == "int") return v.kind == TyKind::Int;
  if (k == "float") return v.kind == TyKind::Float || v.kind == TyKind::Int;
  if (k == "bool") return v.kind == TyKind::Bool;
  return false;
}
Ty genericValue(const GenericParam& g, const Ty& v) {
  if (genericKind(g) == "float" && v.kind == TyKind::Int)
    return Ty::floatConst(v.intValue && v.intValue->isConstant() ? std::optional<double>(static_cast<double>(v.intValue->value())) : std::nullopt);
  return v;
}

Ty Checker::checkCall(const CallExpr* call, Ctx& ctx) {
  const std::string& name = call->callee.name;
  if (name.empty()) return Ty::error();
  auto sym = findGlobal(ctx.mod, name, call->callee.range, true);
  if (!sym) {
    if (std::find(builtinNames().begin(), builtinNames().end(), name) != builtinNames().end()) {
      diags_->emit(call->callee.range, StmtNotInFn, fmt::format("the tile builtin '{}'", name));
      return Ty::error();
    }
    diags_->emit(call->callee.range, UnknownName, name, suggest(name, namesInScope(ctx)));
    return Ty::error();
  }
  if (!sym->decl) return Ty::error();
  recordUse(call->callee.range, sym->decl->name.range, nullptr);
  Callable c;
  if (auto* op = as<OpDecl>(sym->decl)) c.op = op;
  else if (auto* fn = as<FnDecl>(sym->decl)) c.fn = fn;
  else {
    const Decl* d = sym->decl;
    const char* what = as<StepDecl>(d) ? "the step" : as<ConstDecl>(d) ? "a constant" : as<WeightDecl>(d) ? "a weight"
                       : as<StateDecl>(d) ? "a state tensor" : as<GroupDecl>(d) ? "a group" : as<ConfigDecl>(d) ? "a config" : "a declaration";
    diags_->emit(call->callee.range, NotCallable, name, what)
        .note(sym->decl->name.range, DeclaredHere, name);
    return Ty::error();
  }
  if (ctx.decl) {
    if (!calls_.count(ctx.decl)) callers_.push_back(ctx.decl);
    auto& edges = calls_[ctx.decl];
    if (std::none_of(edges.begin(), edges.end(), [&](auto& e) { return e.first == c.decl(); }))
      edges.push_back({c.decl(), call->callee.range});
  }
  if (std::find(callStack_.begin(), callStack_.end(), c.decl()) != callStack_.end() || c.decl() == ctx.decl) {
    diags_->emit(call->callee.range, Recursion, name);
    return Ty::error();
  }
  Module* calleeMod = sym->mod;
  const auto& gparams = c.generics();
  const auto& params = c.params();

  // Arguments: positional first, then generic parameters by name.
  std::vector<std::pair<const CallArg*, Ty>> positional;
  std::map<std::string, Ty> bindings;
  std::map<std::string, SourceRange> bindingFrom;
  bool bad = false, sawNamed = false;
  for (const auto& a : call->args) {
    Ty v = checkExpr(a.value.get(), ctx);
    if (v.isError()) bad = true;
    if (!a.name) {
      if (sawNamed) {
        diags_->emit(a.value->range, PositionalAfterNamed);
        bad = true;
      }
      positional.push_back({&a, v});
      continue;
    }
    sawNamed = true;
    auto g = std::find_if(gparams.begin(), gparams.end(), [&](const GenericParam& gp) { return gp.name.name == a.name->name; });
    if (g == gparams.end()) {
      std::vector<std::string> names;
      for (const auto& gp : gparams) names.push_back(gp.name.name);
      diags_->emit(a.name->range, UnknownGenericArg, name, a.name->name, suggest(a.name->name, names))
          .note(c.decl()->name.range, DeclaredHere, name);
      bad = true;
      continue;
    }
    recordUse(a.name->range, g->name.range, nullptr);
    if (bindings.count(a.name->name)) {
      diags_->emit(a.name->range, DuplicateGenericArg, a.name->name).note(bindingFrom[a.name->name], PreviousDefinition);
      bad = true;
      continue;
    }
    if (v.isError()) continue;
    if (runtimeValue(v) || v.kind == TyKind::Tensor) {
      diags_->emit(a.value->range, NotConstant, fmt::format("generic parameter '{}' of '{}'", a.name->name, name),
                   v.kind == TyKind::Tensor ? "this is a tensor" : "this is a runtime value");
      bad = true;
      continue;
    }
    if (!genericAccepts(*g, v)) {
      diags_->emit(a.value->range, GenericArgType, a.name->name, name, "a compile-time " + genericKind(*g), tyStr(v));
      bad = true;
      continue;
    }
    bindings[a.name->name] = genericValue(*g, v);
    bindingFrom[a.name->name] = a.value->range;
  }
  if (positional.size() != params.size()) {
    diags_->emit(call->range, ArgCount, name, static_cast<unsigned>(params.size()), plural(params.size()),
                 static_cast<unsigned>(positional.size()))
        .note(c.decl()->name.range, DeclaredHere, name);
    return Ty::error();
  }
  if (bad) return Ty::error();

  // Infer generic dims from the arguments' shapes: a dim written as a bare generic name takes the
  // argument's dim.
  auto isGeneric = [&](const std::string& n) {
    return std::any_of(gparams.begin(), gparams.end(), [&](const GenericParam& g) { return g.name.name == n; });
  };
  for (size_t i = 0; i < params.size(); ++i) {
    const Ty& arg = positional[i].second;
    const TypeRef& pt = params[i].type;
    if (arg.kind != TyKind::Tensor || pt.dims.size() != arg.shape.size()) continue;
    auto bind = [&](const Expr* written, const Poly& value) {
      auto* n = as<NameExpr>(written);
      if (!n || !isGeneric(n->name) || bindings.count(n->name)) return;
      bindings[n->name] = Ty::intConst(value);
      bindingFrom[n->name] = positional[i].first->value->range;
    };
    for (size_t d = 0; d < pt.dims.size(); ++d) bind(pt.dims[d].get(), arg.shape[d].value);
    // Layout arguments too: `w: bf16[N, K] tiled(R, K)` learns R from the argument's layout.
    if (pt.layout && arg.layout.written && pt.layout->name.name == layoutKindName(arg.layout.kind) &&
        pt.layout->args.size() == arg.layout.args.size())
      for (size_t k = 0; k < pt.layout->args.size(); ++k) bind(pt.layout->args[k].get(), arg.layout.args[k]);
  }

  // The callee's signature is evaluated in its own module, with its generics bound.
  Ctx sig;
  sig.mod = calleeMod;
  sig.kind = BodyKind::TopLevel;
  sig.scopes.emplace_back();
  bool wasSuppressed = diags_->suppressed();
  for (const auto& g : gparams) {
    if (!bindings.count(g.name.name) && g.defaultValue) {
      diags_->setSuppressed(true);  // defaults were checked with the callee
      Ty v = checkExpr(g.defaultValue.get(), sig);
      diags_->setSuppressed(wasSuppressed);
      if (!v.isError() && genericAccepts(g, v)) bindings[g.name.name] = genericValue(g, v);
    }
    if (!bindings.count(g.name.name)) {
      diags_->emit(call->range, CannotInfer, g.name.name, name).note(g.name.range, DeclaredHere, g.name.name);
      return Ty::error();
    }
    sig.scopes.back().names[g.name.name] = Local{Local::Generic, bindings[g.name.name], g.name.range};
  }
  auto resolveSig = [&](const TypeRef& t, const std::string& what, const std::string& n) {
    diags_->setSuppressed(true);  // the signature itself was checked with the callee
    Ty ty = resolveType(t, sig, what, n, true);
    diags_->setSuppressed(wasSuppressed);
    return ty;
  };
  for (size_t i = 0; i < params.size(); ++i) {
    const Param& p = params[i];
    const Ty& arg = positional[i].second;
    const Expr* argExpr = positional[i].first->value.get();
    Ty pt = resolveSig(p.type, "parameter", p.name.name);
    if (pt.isError()) return Ty::error();
    auto mismatch = [&](const std::string& want) {
      diags_->emit(argExpr->range, ArgMismatch, p.name.name, name, want, tyStr(arg)).note(p.range, ParamDeclared, p.name.name);
      return Ty::error();
    };
    if (pt.kind == TyKind::GroupElem) {
      if (arg.kind != TyKind::GroupElem || arg.group != pt.group) return mismatch(tyStr(pt));
      continue;
    }
    if (pt.shape.empty() && !p.inout) {
      // A scalar parameter takes a runtime scalar, a 0-d tensor or a constant of its dtype.
      bool ok = ((arg.kind == TyKind::Scalar || (arg.kind == TyKind::Tensor && arg.shape.empty())) && arg.dtype == pt.dtype) ||
                (arg.kind == TyKind::Int && pt.dtype != DType::Bool) || (arg.kind == TyKind::Float && isFloat(pt.dtype)) ||
                (arg.kind == TyKind::Bool && pt.dtype == DType::Bool);
      if (!ok) return mismatch(dtypeName(pt.dtype));
      continue;
    }
    if (arg.kind != TyKind::Tensor) return mismatch("a tensor " + tyStr(pt));
    if (arg.dtype != pt.dtype) return mismatch(tyStr(pt));
    if (!sameShape(arg.shape, pt.shape)) {
      auto d = diags_->emit(argExpr->range, ArgShapeMismatch, p.name.name, name, shapeStr(pt.shape), shapeStr(arg.shape));
      d.note(p.range, ParamDeclared, p.name.name);
      for (const auto& dim : p.type.dims)
        if (auto* n = as<NameExpr>(dim.get()); n && bindingFrom.count(n->name) && bindingFrom[n->name].begin != argExpr->range.begin)
          d.note(bindingFrom[n->name], InferredFrom, n->name, valueStr(bindings[n->name]));
      shapeNotes(d, arg.shape);
      return Ty::error();
    }
    if (pt.layout.written && !(pt.layout == arg.layout)) {
      diags_->emit(argExpr->range, ArgLayoutMismatch, p.name.name, name, pt.layout.str(), arg.layout.str())
          .note(p.range, ParamDeclared, p.name.name)
          .note(arg.layout.written ? arg.layout.origin : arg.declRange, LayoutFrom, arg.name);
      return Ty::error();
    }
    if (p.inout && !(arg.writable && (arg.storage == Storage::State || arg.storage == Storage::OpParam))) {
      diags_->emit(argExpr->range, InoutArg, p.name.name, name, storageName(arg.storage), arg.name)
          .note(p.range, ParamDeclared, p.name.name);
      return Ty::error();
    }
  }

  // Results, typed under the bindings.
  Ty result;
  result.kind = TyKind::Tuple;
  for (const auto& r : c.results()) {
    Ty rt = resolveSig(r.type, "result", r.name ? r.name->name : name);
    if (rt.isError()) return Ty::error();
    if (rt.kind == TyKind::Tensor) {
      rt.storage = Storage::Activation;
      rt.writable = false;
      rt.name = r.name ? r.name->name : name;
      rt.declRange = call->range;
    }
    result.elems.push_back(rt);
  }

  if (elaborating()) {
    std::vector<Ty> args;
    for (auto& [a, t] : positional) args.push_back(t);
    if (c.fn) return inlineFn(c.fn, calleeMod, bindings, args);
    GraphSink::OpCall oc;
    oc.instance = &opInstance(c.op, calleeMod, bindings);
    oc.args = args;
    oc.results = result.elems;
    oc.after = pendingAfter_;
    oc.gridSync = pendingSync_;
    oc.call = call->range;
    pendingSync_ = false;
    std::vector<int> ids = sink_->opCall(oc);
    for (size_t i = 0; i < result.elems.size() && i < ids.size(); ++i) result.elems[i].tensorId = ids[i];
  } else if (!gparams.empty() &&
             std::all_of(bindings.begin(), bindings.end(), [](auto& b) { return concreteValue(b.second); })) {
    instantiate(c, calleeMod, bindings, call->range);
  }
  pendingSync_ = false;  // a `sync grid;` applies to the first call after it only

  if (result.elems.empty()) {
    result.kind = TyKind::Void;
    return result;
  }
  if (result.elems.size() == 1 && !(c.fn && c.fn->tupleResult) && !(c.op && c.op->results.size() > 1)) return result.elems[0];
  return result;
}

// Re-checks a generic op or fn with concrete generic values, where rules that need numbers
// (exact task grids, region bounds, layout divisibility, static assertions) can be decided.
// Only what the generic check could not see is reported, with a note naming the call.
void Checker::instantiate(const Callable& c, Module* m, const std::map<std::string, Ty>& bindings, SourceRange callRange) {
  const Decl* d = c.decl();
  if (!genericClean_.count(d)) {
    // Checked before its turn, so the generic pass runs now.
    if (c.op) checkOp(c.op, m, nullptr);
    else checkFn(c.fn, m, nullptr);
  }
  if (!genericClean_[d]) return;
  std::string desc;
  for (const auto& [n, v] : bindings) desc += (desc.empty() ? "" : ", ") + n + " = " + valueStr(v);
  std::string key = fmt::format("{}|{}", static_cast<const void*>(d), desc);
  if (!instantiated_.insert(key).second) return;
  if (index_ && !elaborating()) index_->instances[d].push_back(bindings);
  DiagnosticEngine local(sources_);
  DiagnosticEngine* outer = diags_;
  diags_ = &local;
  callStack_.push_back(d);
  Mode outerMode = mode_;
  mode_ = Mode::Instantiate;
  if (c.op) checkOp(c.op, m, &bindings);
  else checkFn(c.fn, m, &bindings);
  mode_ = outerMode;
  callStack_.pop_back();
  diags_ = outer;
  for (Diagnostic diag : local.diagnostics()) {
    if (!reportedInInstances_.insert({diag.kind, diag.range.file, diag.range.begin, diag.range.end}).second) continue;
    diag.notes.push_back({callRange, fmt::format(fmt::runtime(InstantiatedFrom.format), d->name.name, desc)});
    diags_->report(std::move(diag));
  }
}

void Checker::checkCallCycles() {
  // Depth-first search; a back edge closes a cycle, reported at the call that closes it.
  std::map<const Decl*, int> state;  // 0 unseen, 1 on the path, 2 done
  std::vector<const Decl*> path;
  std::function<void(const Decl*)> visit = [&](const Decl* d) {
    state[d] = 1;
    path.push_back(d);
    for (auto& [callee, range] : calls_[d]) {
      if (state[callee] == 1 && callee != d) {
        std::string chain;
        for (auto it = std::find(path.begin(), path.end(), callee); it != path.end(); ++it) chain += (*it)->name.name + " -> ";
        diags_->emit(range, CallCycle, chain + callee->name.name);
      } else if (state[callee] == 0) {
        visit(callee);
      }
    }
    path.pop_back();
    state[d] = 2;
  };
  for (const Decl* d : callers_)
    if (state[d] == 0) visit(d);
}

}  // namespace mk::check
