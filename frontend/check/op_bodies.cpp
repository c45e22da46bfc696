// Op bodies: task grids, annotations, results, and the statements of tile code.
#include "frontend/check/context.h"

#include <functional>

namespace mk::check {

bool Checker::assignable(const Ty& target, const Ty& value) const {
  if (value.isCompileTime()) {
    if (value.kind == TyKind::Bool) return target.dtype == DType::Bool;
    if (value.kind == TyKind::Float) return isFloat(target.dtype);
    return target.dtype != DType::Bool;
  }
  if (value.dtype != target.dtype) return false;
  if (value.kind == TyKind::Scalar) return true;  // broadcast
  return value.kind == TyKind::Tile && target.kind == TyKind::Tile && sameShape(value.shape, target.shape);
}

void Checker::checkOpStmt(const Stmt* s, Ctx& ctx) {
  switch (s->kind) {
    case StmtKind::Let: {
      auto* l = as<LetStmt>(s);
      if (l->names.empty()) {  // the parser recovered from a missing name; it reported that
        checkExpr(l->value.get(), ctx);
        return;
      }
      if (!l->annotations.empty())
        diags_->emit(l->annotations[0].range, AnnotationPlace, l->annotations[0].name.name, "applies to calls in a fn or step, not to statements in an op");
      if (l->tuplePattern) {
        diags_->emit(s->range, StmtNotInOp, "binding several names at once");
        return;
      }
      Ty v = checkExpr(l->value.get(), ctx);
      if (!v.isError() && !v.isValue()) {
        requireValue(v, l->value.get(), "let");
        v = Ty::error();
      }
      if (l->type && !v.isError()) {
        Ty t = resolveType(*l->type, ctx, "variable", l->names[0].name, false);
        if (!t.isError()) {
          Ty declared = Ty::tile(t.dtype, t.shape);
          if (!assignable(declared, v) || (v.kind == TyKind::Scalar && declared.kind == TyKind::Tile)) {
            diags_->emit(l->value->range, InitMismatch, l->names[0].name, tyStr(declared), tyStr(v));
          }
          v = declared;
        }
      }
      recordType(l, v);
      for (const auto& n : l->names) declareLocal(ctx, n, Local{Local::Let, v, {}}, s->range);
      return;
    }
    case StmtKind::Var: {
      auto* v = as<VarStmt>(s);
      Ty t = resolveType(v->type, ctx, "variable", v->name.name, false);
      Ty declared = t.isError() ? t : Ty::tile(t.dtype, t.shape);
      if (v->init) {
        Ty init = checkExpr(v->init.get(), ctx);
        if (!init.isError() && !declared.isError()) {
          if (!init.isValue()) requireValue(init, v->init.get(), "var");
          else if (!assignable(declared, init)) diags_->emit(v->init->range, InitMismatch, v->name.name, tyStr(declared), tyStr(init));
        }
      }
      recordType(v, declared);
      declareLocal(ctx, v->name, Local{Local::Var, declared, {}}, s->range);
      return;
    }
    case StmtKind::Const: {
      auto* c = as<ConstStmt>(s);
      Ty v = evalConst(c->value.get(), ctx, fmt::format("constant '{}'", c->name.name));
      declareLocal(ctx, c->name, Local{Local::Const, v, {}}, s->range);
      return;
    }
    case StmtKind::Assign: {
      auto* a = as<AssignStmt>(s);
      Ty value = checkExpr(a->value.get(), ctx);
      auto* n = as<NameExpr>(a->target.get());
      if (!n) {
        if (as<IndexExpr>(a->target.get()))
          diags_->emit(a->target->range, NotAssignable, "a region", "write to tensors with `store`, and to tiles by assigning the whole var");
        else
          diags_->emit(a->target->range, NotAssignable, "this expression", "only vars can be assigned");
        return;
      }
      if (n->name.empty()) return;
      Local* l = findLocal(ctx, n->name);
      if (l) recordUse(n->range, l->range, &l->ty);
      if (!l) {
        nameValue(n->name, n->range, ctx);  // reports unknown or misuse
        return;
      }
      if (l->kind != Local::Var) {
        static const char* why[] = {"it is a let binding; declare it with var to change it", "", "it is a constant",
                                    "parameters cannot be assigned; results are written with `store`", "it is a generic parameter",
                                    "it is a task index", "it is a loop variable"};
        diags_->emit(a->target->range, NotAssignable, n->name, why[l->kind]).note(l->range, DeclaredHere, n->name);
        return;
      }
      if (value.isError() || l->ty.isError()) return;
      if (!value.isValue()) {
        requireValue(value, a->value.get(), ast::spelling(a->op));
        return;
      }
      if (!assignable(l->ty, value)) {
        auto d = diags_->emit(a->value->range, AssignMismatch, tyStr(value), n->name, tyStr(l->ty));
        if (value.kind == TyKind::Tile && l->ty.kind == TyKind::Tile && value.dtype == l->ty.dtype) {
          shapeNotes(d, value.shape);
          shapeNotes(d, l->ty.shape);
        }
        return;
      }
      if (a->op != AssignOp::Set && l->ty.dtype == DType::Bool)
        diags_->emit(a->opRange, OperandType, ast::spelling(a->op), tyStr(l->ty));
      return;
    }
    case StmtKind::Store: {
      auto* st = as<StoreStmt>(s);
      Ty value = checkExpr(st->value.get(), ctx);
      Ty region;
      std::string tname;
      const Ty* tensor = nullptr;
      Ty base;
      if (auto* ix = as<IndexExpr>(st->target.get())) {
        base = checkExpr(ix->base.get(), ctx);
        if (base.isError()) return;
        if (base.kind == TyKind::Tile || base.kind == TyKind::Scalar) {
          diags_->emit(st->target->range, StoreNotWritable, as<NameExpr>(ix->base.get()) ? as<NameExpr>(ix->base.get())->name : "this",
                       "it is a tile value; store writes op results and inout parameters");
          return;
        }
        if (base.kind != TyKind::Tensor) {
          diags_->emit(st->target->range, StoreTarget);
          return;
        }
        if (base.shape.empty()) {
          diags_->emit(st->target->range, StoreScalarRegion, base.name);
          return;
        }
        region = checkIndex(ix, ctx, Access::Store);
        tensor = &base;
      } else if (auto* n = as<NameExpr>(st->target.get())) {
        base = checkExpr(n, ctx);
        if (base.isError()) return;
        if (base.kind != TyKind::Tensor) {
          diags_->emit(st->target->range, StoreTarget);
          return;
        }
        if (!base.shape.empty()) {
          diags_->emit(st->target->range, RegionRank, base.name, static_cast<unsigned>(base.shape.size()), plural(base.shape.size()), 0u);
          return;
        }
        region = Ty::scalar(base.dtype);
        tensor = &base;
      } else {
        checkExpr(st->target.get(), ctx);
        diags_->emit(st->target->range, StoreTarget);
        return;
      }
      if (!tensor->writable) {
        diags_->emit(st->target->range, StoreNotWritable, tensor->name,
                     tensor->storage == Storage::OpParam ? "parameters are read-only; mark it inout to write it" : "it is read-only")
            .note(tensor->declRange, DeclaredHere, tensor->name);
        return;
      }
      if (tensor->storage == Storage::OpResult) ctx.stored.insert(tensor->name);
      if (region.isError() || value.isError()) return;
      if (!value.isValue()) {
        requireValue(value, st->value.get(), "store");
        return;
      }
      if (runtimeValue(value) && value.dtype != tensor->dtype) {
        diags_->emit(st->value->range, StoreDType, tyStr(value), dtypeName(tensor->dtype), tensor->name);
        return;
      }
      if (value.kind == TyKind::Tile && !(region.kind == TyKind::Tile && sameShape(region.shape, value.shape))) {
        auto d = diags_->emit(st->value->range, StoreShape, shapeStr(value.shape), region.kind == TyKind::Tile ? shapeStr(region.shape) : "[]", tensor->name);
        shapeNotes(d, value.shape);
        return;
      }
      if (!runtimeValue(value) && !assignable(Ty::tile(tensor->dtype, {}), value))
        diags_->emit(st->value->range, StoreDType, tyStr(value), dtypeName(tensor->dtype), tensor->name);
      return;
    }
    case StmtKind::For: {
      auto* f = as<ForStmt>(s);
      for (const Expr* b : {f->lo.get(), f->hi.get()}) {
        Ty t = checkExpr(b, ctx);
        if (!t.isError() && !(t.kind == TyKind::Int || (t.kind == TyKind::Scalar && t.dtype == DType::I32)))
          diags_->emit(b->range, LoopBound, tyStr(t));
      }
      if (f->step) {
        Ty st = checkExpr(f->step.get(), ctx);
        if (!st.isError()) {
          if (st.kind != TyKind::Int)
            diags_->emit(f->step->range, LoopStep, runtimeValue(st) ? "this is a runtime value" : fmt::format("found {}", tyStr(st)));
          else if (st.intValue->isConstant() && st.intValue->value() <= 0)
            diags_->emit(f->step->range, LoopStep, fmt::format("found {}", st.intValue->str()));
        }
      }
      ctx.scopes.emplace_back();
      declareLocal(ctx, f->var, Local{Local::LoopVar, Ty::scalar(DType::I32), {}}, f->range, f->body.range);
      ++ctx.nesting;
      checkBlock(f->body, ctx);
      --ctx.nesting;
      ctx.scopes.pop_back();
      return;
    }
    case StmtKind::If: {
      auto* i = as<IfStmt>(s);
      Ty c = checkExpr(i->cond.get(), ctx);
      if (!c.isError() && !(c.kind == TyKind::Bool || (c.kind == TyKind::Scalar && c.dtype == DType::Bool)))
        diags_->emit(i->cond->range, ExpectedBool, "an if condition", tyStr(c));
      ++ctx.nesting;
      checkBlock(i->then, ctx);
      if (i->otherwise) checkBlock(*i->otherwise, ctx);
      --ctx.nesting;
      return;
    }
    case StmtKind::Return: diags_->emit(s->range, StmtNotInOp, "return (ops write their results with `store`)"); return;
    case StmtKind::Sync: diags_->emit(s->range, StmtNotInOp, "sync (it goes between op calls in a fn or step)"); return;
    case StmtKind::Assert: {
      auto* a = as<AssertStmt>(s);
      checkStaticAssert(a->cond.get(), a->message, s->range, ctx);
      return;
    }
    case StmtKind::Expr: {
      auto* e = as<ExprStmt>(s);
      if (!e->annotations.empty())
        diags_->emit(e->annotations[0].range, AnnotationPlace, e->annotations[0].name.name, "applies to calls in a fn or step, not to statements in an op");
      Ty t = checkExpr(e->expr.get(), ctx);
      if (!t.isError()) diags_->emit(e->expr->range, StmtNotInOp, "an expression statement (its value would be unused)");
      return;
    }
  }
}


void Checker::checkTaskGrid(const OpDecl* op, Ctx& ctx, bool concrete) {
  if (op->tasks.size() > 3) diags_->emit(op->tasks[3].range, TaskGridRank, static_cast<unsigned>(op->tasks.size()));
  int64_t total = 1;
  bool knownTotal = true;
  for (const auto& td : op->tasks) {
    Ty e = checkExpr(td.extent.get(), ctx);
    if (!e.isError()) {
      if (e.kind != TyKind::Int) {
        diags_->emit(td.extent->range, TaskExtent, td.var.name,
                     runtimeValue(e) || e.kind == TyKind::Tensor ? "this is a runtime value" : fmt::format("found {}", tyStr(e)));
        knownTotal = false;
      } else if (e.intValue->isConstant()) {
        if (e.intValue->value() <= 0) diags_->emit(td.extent->range, TaskExtent, td.var.name, fmt::format("found {}", e.intValue->str()));
        if (__builtin_mul_overflow(total, e.intValue->value(), &total)) knownTotal = false;
      } else {
        knownTotal = false;
      }
      // Every division in an extent must be exact, or tasks would silently drop elements.
      std::function<void(const Expr*)> exact = [&](const Expr* x) {
        auto* b = as<BinaryExpr>(x);
        if (!b) return;
        exact(b->lhs.get());
        exact(b->rhs.get());
        if (b->op != BinaryOp::Div) return;
        bool was = diags_->suppressed();
        diags_->setSuppressed(true);
        Ty l = checkExpr(b->lhs.get(), ctx), r = checkExpr(b->rhs.get(), ctx);
        diags_->setSuppressed(was);
        if (l.kind != TyKind::Int || r.kind != TyKind::Int || !l.intValue->isConstant() || !r.intValue->isConstant()) return;
        int64_t p = l.intValue->value(), q = r.intValue->value();
        if (q != 0 && p % q != 0) {
          const std::string& text = sources_.file(b->range.file).text();
          diags_->emit(b->range, TaskGridInexact, text.substr(b->range.begin, b->range.end - b->range.begin),
                       fmt::format("{} / {}", p, q), std::to_string(p), std::to_string(q));
        }
      };
      exact(td.extent.get());
    }
    declareLocal(ctx, td.var, Local{Local::TaskVar, Ty::scalar(DType::I32), {}}, td.range);
  }
  (void)concrete;
  for (const auto& a : op->annotations) {
    if (a.name.name != "cluster" || a.args.size() != 1) continue;
    bool was = diags_->suppressed();
    diags_->setSuppressed(true);
    Ty n = checkExpr(a.args[0].get(), ctx);
    diags_->setSuppressed(was);
    if (n.kind == TyKind::Int && n.intValue->isConstant() && knownTotal && n.intValue->value() > 0 && total % n.intValue->value() != 0)
      diags_->emit(a.range, ClusterTasks, n.intValue->str(), std::to_string(total), op->name.name);
  }
}

void Checker::checkOp(const OpDecl* op, Module* m, const std::map<std::string, Ty>* bindings) {
  if (!bindings && genericClean_.count(op)) return;
  BodyScope scope(*this, !bindings);
  unsigned before = diags_->errorCount();
  if (!bindings) genericClean_[op] = false;  // in progress
  Ctx ctx;
  ctx.mod = m;
  ctx.kind = BodyKind::Op;
  ctx.decl = op;
  ctx.scopes.emplace_back();
  bindGenerics(op->generics, ctx, bindings);
  forEachAnnotation(op->annotations, "cluster", [&](const Annotation& a) {
    if (a.args.size() != 1) {
      diags_->emit(a.range, ClusterArg, fmt::format("{} arguments", a.args.size()));
      return;
    }
    Ty v = checkExpr(a.args[0].get(), ctx);
    if (v.isError()) return;
    if (v.kind != TyKind::Int) {
      diags_->emit(a.args[0]->range, ClusterArg, tyStr(v));
    } else if (v.intValue->isConstant()) {
      int64_t c = v.intValue->value();
      if (c < 1 || c > 8 || (c & (c - 1)) != 0) diags_->emit(a.args[0]->range, ClusterArg, std::to_string(c));
    }
  });
  bindParams(op->params, ctx, true);
  for (const auto& r : op->results) {
    std::string rn = r.name ? r.name->name : "";
    Ty t = resolveType(r.type, ctx, "result", rn, true);
    if (t.kind == TyKind::GroupElem) {
      diags_->emit(r.type.range, ParamType, "result", rn, tyStr(t));
      t = Ty::error();
    }
    if (t.kind == TyKind::Tensor) {
      t.storage = Storage::OpResult;
      t.writable = true;
      t.name = rn;
      t.declRange = r.name ? r.name->range : r.range;
    }
    recordType(&r, t);
    if (r.name) declareLocal(ctx, *r.name, Local{Local::Param, t, {}}, r.range, {}, SymbolKind::Result);
  }
  checkTaskGrid(op, ctx, bindings != nullptr);
  checkBlock(op->body, ctx);
  if (!bindings) {
    // Only for an op with no other error: a broken body often lost its stores to recovery.
    if (diags_->errorCount() == before && !parseErrors_.count(m))
      for (const auto& r : op->results)
        if (r.name && !ctx.stored.count(r.name->name)) diags_->emit(r.name->range, ResultNeverStored, r.name->name);
    genericClean_[op] = diags_->errorCount() == before;
  }
}

}  // namespace mk::check
