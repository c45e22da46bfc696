// Fn and step bodies: compositions of op calls, with compile-time loops and ifs unrolled.
#include "frontend/check/context.h"

#include <algorithm>
#include <set>

namespace mk::check {

void Checker::forEachAnnotation(const std::vector<Annotation>& anns, const std::string& here,
                                const std::function<void(const Annotation&)>& check) {
  // The annotations the language has, and where each applies (docs/language.md).
  static const std::vector<std::pair<std::string, const char*>> kKnown = {
      {"after", "applies to a call in a fn or step, not to an op declaration"},
      {"cluster", "applies to an op declaration"},
  };
  std::set<std::string> seen;
  for (const auto& a : anns) {
    const std::string& n = a.name.name;
    if (n.empty()) continue;  // the parser reported it
    if (!seen.insert(n).second) {
      diags_->emit(a.range, DuplicateAnnotation, n);
      continue;
    }
    if (n == here) {
      check(a);
      continue;
    }
    auto known = std::find_if(kKnown.begin(), kKnown.end(), [&](const auto& k) { return k.first == n; });
    if (known != kKnown.end()) {
      diags_->emit(a.range, AnnotationPlace, n, known->second);
    } else {
      std::vector<std::string> names;
      for (const auto& k : kKnown) names.push_back(k.first);
      diags_->emit(a.name.range, UnknownAnnotation, n, suggest(n, names));
    }
  }
}

void Checker::checkAnnotations(const std::vector<Annotation>& anns, const Expr* value, Ctx& ctx) {
  forEachAnnotation(anns, "after", [&](const Annotation& a) {
    const std::string& n = a.name.name;
    if (!as<CallExpr>(value)) {
      diags_->emit(a.range, AnnotationPlace, n, "applies to an op or fn call");
      return;
    }
    if (a.args.empty()) {
      diags_->emit(a.range, AfterNoArgs);
      return;
    }
    for (const auto& arg : a.args) {
      auto* nm = as<NameExpr>(arg.get());
      Ty t = checkExpr(arg.get(), ctx);
      if (t.isError()) continue;
      if (t.kind == TyKind::Tensor && (t.storage == Storage::Activation || t.storage == Storage::State ||
                                       (t.storage == Storage::OpParam && t.writable))) {
        if (!nm && !as<FieldExpr>(arg.get())) diags_->emit(arg->range, AfterArg, "name a tensor");
        else if (t.tensorId >= 0) pendingAfter_.push_back(t.tensorId);
        continue;
      }
      std::string why = t.kind == TyKind::Tensor && t.storage == Storage::Weight
                            ? fmt::format("'{}' is a weight, which nothing writes", t.name)
                        : t.kind == TyKind::Tensor ? fmt::format("'{}' is a {}, which nothing writes during the step", t.name, storageName(t.storage))
                                                   : fmt::format("found {}", tyStr(t));
      diags_->emit(arg->range, AfterArg, why);
    }
  });
}

void Checker::checkFnStmt(const Stmt* s, Ctx& ctx) {
  switch (s->kind) {
    case StmtKind::Let: {
      auto* l = as<LetStmt>(s);
      if (l->names.empty()) {  // the parser recovered from a missing name; it reported that
        checkExpr(l->value.get(), ctx);
        return;
      }
      checkAnnotations(l->annotations, l->value.get(), ctx);
      Ty v = checkExpr(l->value.get(), ctx);
      auto callee = [&]() { auto* c = as<CallExpr>(l->value.get()); return c ? c->callee.name : std::string("value"); };
      std::vector<Ty> bound(l->names.size(), Ty::error());
      if (!v.isError()) {
        if (v.kind == TyKind::Void) {
          diags_->emit(l->value->range, VoidValue, callee());
        } else if (l->tuplePattern || v.kind == TyKind::Tuple) {
          size_t have = v.kind == TyKind::Tuple ? v.elems.size() : 1;
          // A tuple of one result binds to one name with or without the parentheses.
          if (have != l->names.size() || (!l->tuplePattern && have != 1))
            diags_->emit(s->range, TupleCount, callee(), static_cast<unsigned>(have), plural(have),
                         static_cast<unsigned>(l->names.size()), plural(l->names.size()));
          else if (v.kind != TyKind::Tuple)
            bound[0] = v;  // `let (a) = f(...)` of a single result
          else
            for (size_t i = 0; i < have; ++i) bound[i] = v.elems[i];
        } else {
          bound[0] = v;
        }
      }
      if (l->type && !bound[0].isError()) {
        Ty t = resolveType(*l->type, ctx, "binding", l->names[0].name, true);
        if (!t.isError() && !(t.kind == TyKind::Tensor && bound[0].kind == TyKind::Tensor && t.dtype == bound[0].dtype &&
                              sameShape(t.shape, bound[0].shape)) && !(t.kind == bound[0].kind && t.kind != TyKind::Tensor))
          diags_->emit(l->value->range, InitMismatch, l->names[0].name, tyStr(t), tyStr(bound[0]));
      }
      for (size_t i = 0; i < l->names.size(); ++i) {
        if (bound[i].kind == TyKind::Tensor && bound[i].storage == Storage::Activation) bound[i].name = l->names[i].name;
        declareLocal(ctx, l->names[i], Local{Local::Let, bound[i], {}}, s->range);
      }
      return;
    }
    case StmtKind::Var: {
      auto* v = as<VarStmt>(s);
      Ty t = resolveType(v->type, ctx, "variable", v->name.name, true);
      Ty init = Ty::error();
      if (!v->init) {
        diags_->emit(s->range, InitMismatch, v->name.name, tyStr(t), "nothing; a var in a fn starts from a call's result");
      } else {
        init = checkExpr(v->init.get(), ctx);
        if (!init.isError() && !t.isError() &&
            !(init.kind == TyKind::Tensor && init.dtype == t.dtype && sameShape(init.shape, t.shape) && init.layout == t.layout))
          diags_->emit(v->init->range, InitMismatch, v->name.name, tyStr(t), tyStr(init));
      }
      if (!t.isError()) {
        t.storage = Storage::Activation;
        t.name = v->name.name;
        t.tensorId = init.tensorId;  // graph mode: the name stands for the initialising tensor
      }
      declareLocal(ctx, v->name, Local{Local::Var, t, {}}, s->range);
      return;
    }
    case StmtKind::Const: {
      auto* c = as<ConstStmt>(s);
      ctx.constNeeded = &ConstNeedsValue;
      ctx.constWhat = fmt::format("constant '{}' must be a compile-time value; ", c->name.name);
      Ty v = evalConst(c->value.get(), ctx, fmt::format("constant '{}'", c->name.name));
      ctx.constNeeded = nullptr;
      declareLocal(ctx, c->name, Local{Local::Const, v, {}}, s->range);
      return;
    }
    case StmtKind::Assign: {
      auto* a = as<AssignStmt>(s);
      Ty value = checkExpr(a->value.get(), ctx);
      auto* n = as<NameExpr>(a->target.get());
      if (!n || a->op != AssignOp::Set) {
        diags_->emit(a->target->range, NotAssignable, n ? n->name : "this expression",
                     n ? "fns rebind names with `=`; arithmetic belongs in ops" : "only vars can be rebound");
        return;
      }
      Local* l = findLocal(ctx, n->name);
      if (l) recordUse(n->range, l->range, &l->ty);
      if (!l) {
        nameValue(n->name, n->range, ctx);
        return;
      }
      if (l->kind != Local::Var) {
        diags_->emit(a->target->range, NotAssignable, n->name,
                     l->kind == Local::Let ? "it is a let binding; declare it with var to rebind it" : "only vars can be rebound")
            .note(l->range, DeclaredHere, n->name);
        return;
      }
      if (value.isError() || l->ty.isError()) return;
      if (!(value.kind == TyKind::Tensor && value.dtype == l->ty.dtype && sameShape(value.shape, l->ty.shape) &&
            value.layout == l->ty.layout)) {
        diags_->emit(a->value->range, RebindType, n->name, tyStr(l->ty), tyStr(value)).note(l->range, DeclaredHere, n->name);
      } else if (elaborating()) {
        l->ty = value;  // the name now stands for the new tensor
      }
      return;
    }
    case StmtKind::Store: diags_->emit(s->range, StoreOutsideOp); return;
    case StmtKind::For: {
      auto* f = as<ForStmt>(s);
      // Bounds must be compile-time integers; symbolic ones (generic parameters) check the body once.
      auto bound = [&](const Expr* b) -> std::optional<int64_t> {
        ctx.constNeeded = &FnLoopNotConst;
        ctx.constWhat.clear();
        Ty t = checkExpr(b, ctx);
        ctx.constNeeded = nullptr;
        if (t.isError()) return std::nullopt;
        if (t.kind != TyKind::Int) {
          diags_->emit(b->range, FnLoopNotConst, runtimeValue(t) || t.kind == TyKind::Tensor
                                                     ? "this bound is a runtime value"
                                                     : fmt::format("this bound is {}", tyStr(t)));
          return std::nullopt;
        }
        return t.intValue->isConstant() ? std::optional<int64_t>(t.intValue->value()) : std::nullopt;
      };
      auto lo = bound(f->lo.get());
      auto hi = bound(f->hi.get());
      int64_t step = 1;
      bool knownStep = true;
      if (f->step) {
        auto st = constInt(f->step.get(), ctx, "a loop step");
        knownStep = st.has_value();
        if (st && *st <= 0) {
          diags_->emit(f->step->range, LoopStep, fmt::format("found {}", *st));
          knownStep = false;
        }
        if (knownStep) step = *st;
      }
      ++ctx.nesting;
      auto body = [&](Ty var) {
        ctx.scopes.emplace_back();
        declareLocal(ctx, f->var, Local{Local::LoopVar, var, {}}, f->range, f->body.range);
        checkBlock(f->body, ctx);
        ctx.scopes.pop_back();
      };
      constexpr int64_t kMaxUnroll = 65536;
      if (lo && hi && knownStep) {
        __int128 span = static_cast<__int128>(*hi) - *lo;
        int64_t n = span > 0 ? static_cast<int64_t>(std::min<__int128>((span + step - 1) / step, INT64_MAX)) : 0;
        if (n > kMaxUnroll) {
          diags_->emit(SourceRange::cover(f->lo->range, f->hi->range), UnrollLimit, std::to_string(n), std::to_string(kMaxUnroll));
        } else if (n > unrollBudget_) {
          if (unrollBudget_ >= 0) diags_->emit(SourceRange::cover(f->lo->range, f->hi->range), UnrollBudget, std::to_string(kUnrollBudget));
          unrollBudget_ = -1;  // reported once
        } else {
          unrollBudget_ -= n;
          // Unrolled: each iteration sees its own index, so group indices are checked exactly.
          for (int64_t k = 0; k < n; ++k) body(Ty::intConst(Poly::constant(static_cast<int64_t>(*lo + static_cast<__int128>(k) * step))));
        }
      } else {
        body(Ty::intConst(Poly::symbol(f->var.name)));
      }
      --ctx.nesting;
      return;
    }
    case StmtKind::If: {
      auto* i = as<IfStmt>(s);
      ctx.constNeeded = &FnIfNotConst;
      ctx.constWhat.clear();
      Ty c = checkExpr(i->cond.get(), ctx);
      ctx.constNeeded = nullptr;
      if (!c.isError() && c.kind != TyKind::Bool)
        diags_->emit(i->cond->range, FnIfNotConst, fmt::format("found {}", tyStr(c)));
      ++ctx.nesting;
      // Both branches are checked; the graph is built from the one the condition selects.
      bool known = c.kind == TyKind::Bool && c.boolValue.has_value();
      if (!elaborating() || !known || *c.boolValue) checkBlock(i->then, ctx);
      if (i->otherwise && (!elaborating() || !known || !*c.boolValue)) checkBlock(*i->otherwise, ctx);
      --ctx.nesting;
      return;
    }
    case StmtKind::Return: {
      auto* r = as<ReturnStmt>(s);
      if (ctx.nesting > 0) diags_->emit(s->range, ReturnInLoop);
      if (!r->value) {
        if (!ctx.results.empty())
          diags_->emit(s->range, ReturnCount, ctx.decl->name.name, 0u, "s", static_cast<unsigned>(ctx.results.size()), plural(ctx.results.size()));
        return;
      }
      Ty v = checkExpr(r->value.get(), ctx);
      if (v.isError()) return;
      ctx.returned = v;
      if (ctx.results.empty()) {
        diags_->emit(r->value->range, ReturnNoResults, ctx.decl->name.name);
        return;
      }
      std::vector<Ty> vals = v.kind == TyKind::Tuple ? v.elems : std::vector<Ty>{v};
      std::vector<const Expr*> exprs;
      if (auto* t = as<TupleExpr>(r->value.get()))
        for (const auto& e : t->elems) exprs.push_back(e.get());
      else
        exprs.push_back(r->value.get());
      if (vals.size() != ctx.results.size()) {
        diags_->emit(r->value->range, ReturnCount, ctx.decl->name.name, static_cast<unsigned>(vals.size()), plural(vals.size()),
                     static_cast<unsigned>(ctx.results.size()), plural(ctx.results.size()));
        return;
      }
      const std::vector<Result>& declared = as<FnDecl>(ctx.decl) ? as<FnDecl>(ctx.decl)->results : as<StepDecl>(ctx.decl)->results;
      for (size_t i = 0; i < vals.size(); ++i) {
        const Ty& want = ctx.results[i];
        const Ty& got = vals[i];
        const Expr* e = i < exprs.size() ? exprs[i] : r->value.get();
        if (want.isError() || got.isError()) continue;
        if (ctx.kind == BodyKind::Step && got.kind == TyKind::Tensor &&
            (got.storage == Storage::Weight || got.storage == Storage::StepInput || got.storage == Storage::State)) {
          diags_->emit(e->range, ReturnWeight, declared[i].name ? declared[i].name->name : std::to_string(i + 1),
                       storageName(got.storage), got.name);
          continue;
        }
        if (ctx.kind == BodyKind::Step && got.kind == TyKind::Scalar) {
          auto* n = as<NameExpr>(e);
          diags_->emit(e->range, ReturnWeight, declared[i].name ? declared[i].name->name : std::to_string(i + 1),
                       "step input", n ? n->name : "value");
          continue;
        }
        bool ok;
        if (want.kind == TyKind::Tensor && want.shape.empty())
          ok = (got.kind == TyKind::Tensor || got.kind == TyKind::Scalar) && got.shape.empty() && got.dtype == want.dtype;
        else if (want.kind == TyKind::Tensor)
          ok = got.kind == TyKind::Tensor && got.dtype == want.dtype && sameShape(got.shape, want.shape) && got.layout == want.layout;
        else
          ok = got.kind == want.kind && got.group == want.group;
        if (!ok)
          diags_->emit(e->range, ReturnType, static_cast<unsigned>(i + 1), ctx.decl->name.name, tyStr(want), tyStr(got))
              .note(declared[i].range, ResultDeclared);
      }
      return;
    }
    case StmtKind::Sync: {
      auto* sy = as<SyncStmt>(s);
      if (!sy->scope.name.empty() && sy->scope.name != "grid") diags_->emit(sy->scope.range, SyncScope, sy->scope.name);
      pendingSync_ = true;
      return;
    }
    case StmtKind::Assert: {
      auto* a = as<AssertStmt>(s);
      checkStaticAssert(a->cond.get(), a->message, s->range, ctx);
      return;
    }
    case StmtKind::Expr: {
      auto* e = as<ExprStmt>(s);
      checkAnnotations(e->annotations, e->expr.get(), ctx);
      if (!as<CallExpr>(e->expr.get())) {
        Ty t = checkExpr(e->expr.get(), ctx);
        if (!t.isError()) diags_->emit(e->expr->range, ExprStmtNotCall);
        return;
      }
      Ty t = checkExpr(e->expr.get(), ctx);
      // Discarding results is fine for a call whose point is writing state through inout.
      auto* call = as<CallExpr>(e->expr.get());
      bool writesState = false;
      if (auto sym = findGlobal(ctx.mod, call->callee.name, call->callee.range, false); sym && sym->decl) {
        const std::vector<Param>* ps = as<OpDecl>(sym->decl) ? &as<OpDecl>(sym->decl)->params
                                       : as<FnDecl>(sym->decl) ? &as<FnDecl>(sym->decl)->params : nullptr;
        writesState = ps && std::any_of(ps->begin(), ps->end(), [](const Param& p) { return p.inout; });
      }
      if (!t.isError() && t.kind != TyKind::Void && !writesState) diags_->emit(e->expr->range, UnusedResults, call->callee.name);
      return;
    }
  }
}


void Checker::checkFn(const FnDecl* fn, Module* m, const std::map<std::string, Ty>* bindings) {
  if (!bindings && genericClean_.count(fn)) return;
  BodyScope scope(*this, !bindings);
  unsigned before = diags_->errorCount();
  if (!bindings) genericClean_[fn] = false;
  Ctx ctx;
  ctx.mod = m;
  ctx.kind = BodyKind::Fn;
  ctx.decl = fn;
  ctx.scopes.emplace_back();
  bindGenerics(fn->generics, ctx, bindings);
  bindParams(fn->params, ctx, false);
  for (const auto& r : fn->results) {
    Ty t = resolveType(r.type, ctx, "result", r.name ? r.name->name : fn->name.name, true);
    if (t.kind == TyKind::GroupElem) {
      diags_->emit(r.type.range, ParamType, "result", r.name ? r.name->name : fn->name.name, tyStr(t));
      t = Ty::error();
    }
    ctx.results.push_back(t);
  }
  callStack_.push_back(fn);
  checkBlock(fn->body, ctx);
  callStack_.pop_back();
  if (!fn->results.empty() && (fn->body.stmts.empty() || !as<ReturnStmt>(fn->body.stmts.back().get())))
    diags_->emit(fn->name.range, MissingReturn, fn->name.name);
  if (!bindings) genericClean_[fn] = diags_->errorCount() == before;
}

void Checker::checkStep(const StepDecl* step, Module* m) {
  std::vector<std::pair<std::string, Ty>> inputs;
  Ctx ctx;
  ctx.mod = m;
  ctx.kind = BodyKind::Step;
  ctx.decl = step;
  ctx.scopes.emplace_back();
  for (const auto& p : step->params) {
    Ty t = resolveType(p.type, ctx, "step input", p.name.name, true);
    if (p.inout) {
      diags_->emit(p.range, StepInout);
      t = Ty::error();
    }
    if (!t.isError()) {
      bool ok = t.kind == TyKind::Tensor && (t.dtype == DType::I32 || (!t.shape.empty() && t.dtype == DType::F32));
      if (!ok) {
        diags_->emit(p.type.range, StepParam, p.name.name, tyStr(t));
        t = Ty::error();
      } else if (t.shape.empty()) {
        t = Ty::scalar(t.dtype);
        t.inputIndex = static_cast<int>(&p - step->params.data());
      } else {
        t.storage = Storage::StepInput;
        t.name = p.name.name;
        t.declRange = p.name.range;
        if (elaborating()) t.tensorId = sink_->inputTensor(p, t);
      }
    }
    inputs.push_back({p.name.name, t});
    declareLocal(ctx, p.name, Local{Local::Param, t, {}}, p.range);
  }
  if (elaborating()) sink_->stepInputs(inputs);
  for (size_t i = 0; i < step->results.size(); ++i) {
    const Result& r = step->results[i];
    if (!r.name) diags_->emit(r.range, StepResultName, static_cast<unsigned>(i + 1));
    Ty t = resolveType(r.type, ctx, "step result", r.name ? r.name->name : "", true);
    if (!t.isError() && t.kind != TyKind::Tensor) {
      diags_->emit(r.type.range, StepResultType, r.name ? r.name->name : std::to_string(i + 1), tyStr(t));
      t = Ty::error();
    }
    ctx.results.push_back(t);
  }
  checkBlock(step->body, ctx);
  if (!step->results.empty() && (step->body.stmts.empty() || !as<ReturnStmt>(step->body.stmts.back().get())))
    diags_->emit(step->name.range, MissingReturn, step->name.name);
  if (elaborating()) {
    std::vector<Ty> values = ctx.returned.kind == TyKind::Tuple ? ctx.returned.elems : std::vector<Ty>{ctx.returned};
    std::vector<std::pair<std::string, Ty>> outputs;
    for (size_t i = 0; i < step->results.size() && i < values.size(); ++i)
      outputs.push_back({step->results[i].name ? step->results[i].name->name : "", values[i]});
    sink_->stepOutputs(outputs);
  }
}

}  // namespace mk::check
