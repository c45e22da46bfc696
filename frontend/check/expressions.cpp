// Expressions: literals, names, fields, regions, loads, casts and arithmetic, with compile-time
// folding. Calls go to checkBuiltin in op bodies and to checkCall in fns and the step.
#include "frontend/check/context.h"

namespace mk::check {

bool Checker::sameShape(const Shape& a, const Shape& b) const {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].value != b[i].value) return false;
  return true;
}

void Checker::shapeNotes(DiagnosticBuilder& b, const Shape& s) {
  if (!s.empty()) b.note(s[0].origin, ShapeFrom, shapeStr(s));
}

bool Checker::requireValue(const Ty& t, const Expr* e, const std::string& what) {
  if (t.isError()) return false;
  if (t.isValue()) return true;
  if (t.kind == TyKind::Tensor) diags_->emit(e->range, TensorInArith, t.name);
  else diags_->emit(e->range, OperandType, what, tyStr(t));
  return false;
}

Ty Checker::checkExpr(const Expr* e, Ctx& ctx) {
  Ty t = checkExprImpl(e, ctx);
  if (e) recordType(e, t);
  return t;
}

Ty Checker::checkExprImpl(const Expr* e, Ctx& ctx) {
  if (!e) return Ty::error();
  switch (e->kind) {
    case ExprKind::Int: return Ty::intConst(Poly::constant(as<IntLit>(e)->value));
    case ExprKind::Float: return Ty::floatConst(as<FloatLit>(e)->value);
    case ExprKind::Bool: return Ty::boolConst(as<BoolLit>(e)->value);
    case ExprKind::Name: return nameValue(as<NameExpr>(e)->name, e->range, ctx);
    case ExprKind::Call: {
      auto* c = as<CallExpr>(e);
      if (ctx.kind == BodyKind::Op) return checkBuiltin(c, ctx);
      if (ctx.kind == BodyKind::Fn || ctx.kind == BodyKind::Step) return checkCall(c, ctx);
      diags_->emit(e->range, NotConstant, "this", fmt::format("'{}(...)' is computed at run time", c->callee.name));
      return Ty::error();
    }
    case ExprKind::Tuple: {
      Ty t;
      t.kind = TyKind::Tuple;
      for (const auto& el : as<TupleExpr>(e)->elems) {
        t.elems.push_back(checkExpr(el.get(), ctx));
        if (t.elems.back().isError()) return Ty::error();
      }
      return t;
    }
    case ExprKind::Index: return checkIndex(as<IndexExpr>(e), ctx, Access::Value);
    case ExprKind::Field: {
      auto* f = as<FieldExpr>(e);
      Ty base = checkExpr(f->base.get(), ctx);
      if (base.isError()) return base;
      if (base.kind != TyKind::GroupElem) {
        diags_->emit(f->field.range, NoFields, tyStr(base));
        return Ty::error();
      }
      auto& members = groupMembers_[base.group];
      auto it = members.find(f->field.name);
      if (it == members.end()) {
        std::vector<std::string> names;
        for (auto& [n, _] : members) names.push_back(n);
        diags_->emit(f->field.range, NoSuchMember, base.group->name.name, f->field.name, suggest(f->field.name, names));
        return Ty::error();
      }
      Ty t = it->second.first;
      recordUse(f->field.range, it->second.second->name.range, &t);
      if (!t.isError()) t.name = fmt::format("{}[{}].{}", base.group->name.name,
                                             base.groupIndex ? std::to_string(*base.groupIndex) : base.group->var.name,
                                             f->field.name);
      if (elaborating() && !t.isError()) t = graphStorage(it->second.second, t, base.groupIndex);
      return t;
    }
    case ExprKind::Load: {
      auto* l = as<LoadExpr>(e);
      if (ctx.kind != BodyKind::Op) {
        diags_->emit(e->range, LoadOutsideOp);
        return Ty::error();
      }
      if (auto* ix = as<IndexExpr>(l->source.get())) return checkIndex(ix, ctx, Access::Load);
      // `load s` of a rank-0 tensor.
      Ty t = checkExpr(l->source.get(), ctx);
      if (t.isError()) return t;
      if (t.kind != TyKind::Tensor) {
        diags_->emit(l->source->range, LoadNotTensor, fmt::format("found {}", tyStr(t)));
        return Ty::error();
      }
      if (!t.shape.empty()) {
        diags_->emit(l->source->range, RegionRank, t.name, static_cast<unsigned>(t.shape.size()), plural(t.shape.size()), 0u);
        return Ty::error();
      }
      if (t.storage == Storage::OpResult) {
        diags_->emit(l->source->range, LoadFromResult, t.name);
        return Ty::error();
      }
      return Ty::scalar(t.dtype);
    }
    case ExprKind::Cast: {
      auto* c = as<CastExpr>(e);
      Ty v = checkExpr(c->value.get(), ctx);
      auto dt = parseDType(c->dtype.name);
      if (!dt) {
        if (!c->dtype.name.empty()) diags_->emit(c->dtype.range, CastTarget, c->dtype.name);
        return Ty::error();
      }
      if (v.isError()) return v;
      if (v.kind == TyKind::Tensor) {
        diags_->emit(c->value->range, CastNotValue, fmt::format("tensor '{}'", v.name));
        return Ty::error();
      }
      if (!v.isValue()) {
        diags_->emit(c->value->range, CastNotValue, tyStr(v));
        return Ty::error();
      }
      if (ctx.kind != BodyKind::Op) {
        diags_->emit(e->range, NotConstant, "this", "casts produce runtime values, which only ops compute");
        return Ty::error();
      }
      if (v.kind == TyKind::Tile) return Ty::tile(*dt, v.shape);
      return Ty::scalar(*dt);
    }
    case ExprKind::Unary: {
      auto* u = as<UnaryExpr>(e);
      Ty v = checkExpr(u->operand.get(), ctx);
      if (ctx.kind != BodyKind::Op && (runtimeValue(v) || v.kind == TyKind::Tensor)) {
        diags_->emit(e->range, TensorArith, spelling(u->op), v.kind == TyKind::Tensor ? "tensor '" + v.name + "'" : "a runtime " + tyStr(v));
        return Ty::error();
      }
      if (!requireValue(v, u->operand.get(), spelling(u->op))) return Ty::error();
      if (u->op == UnaryOp::Not) {
        bool isBool = v.kind == TyKind::Bool || (runtimeValue(v) && v.dtype == DType::Bool);
        if (!isBool) {
          diags_->emit(u->operand->range, ExpectedBool, "the operand of '!'", tyStr(v));
          return Ty::error();
        }
        if (v.kind == TyKind::Bool) return Ty::boolConst(v.boolValue ? std::optional<bool>(!*v.boolValue) : std::nullopt);
        return v;
      }
      if (v.kind == TyKind::Bool || (runtimeValue(v) && v.dtype == DType::Bool)) {
        diags_->emit(u->operand->range, OperandType, "-", tyStr(v));
        return Ty::error();
      }
      if (v.kind == TyKind::Int) {
        auto r = Poly::sub(Poly::constant(0), *v.intValue);
        if (!r) {
          diags_->emit(e->range, IntOverflow);
          return Ty::error();
        }
        return Ty::intConst(*r);
      }
      if (v.kind == TyKind::Float) return Ty::floatConst(v.floatValue ? std::optional<double>(-*v.floatValue) : std::nullopt);
      return v;
    }
    case ExprKind::Binary: return checkBinary(as<BinaryExpr>(e), ctx);
  }
  return Ty::error();
}

Ty Checker::checkBinary(const BinaryExpr* b, Ctx& ctx) {
  Ty l = checkExpr(b->lhs.get(), ctx);
  Ty r = checkExpr(b->rhs.get(), ctx);
  if (l.isError() || r.isError()) return Ty::error();
  std::string opName = spelling(b->op);
  if (ctx.kind != BodyKind::Op && !(l.isCompileTime() && r.isCompileTime()) &&
      (l.isValue() || l.kind == TyKind::Tensor) && (r.isValue() || r.kind == TyKind::Tensor)) {
    const Ty& rt = l.isCompileTime() ? r : l;
    std::string what = rt.kind == TyKind::Tensor ? "tensor '" + rt.name + "'" : "a runtime " + tyStr(rt);
    if (ctx.constNeeded && rt.kind != TyKind::Tensor)
      diags_->emit(b->range, *ctx.constNeeded, ctx.constWhat + fmt::format("'{}' is computed at run time", opName));
    else
      diags_->emit(b->range, TensorArith, opName, what);
    return Ty::error();
  }
  if (!requireValue(l, b->lhs.get(), opName) || !requireValue(r, b->rhs.get(), opName)) return Ty::error();
  if (l.isCompileTime() && r.isCompileTime()) return foldConst(b->op, l, r, b->range);
  return combine(opName, b->op, l, r, b->opRange, b->lhs.get(), b->rhs.get());
}

// Runtime elementwise arithmetic: dtypes agree (compile-time constants adapt), shapes agree or
// one side is a scalar.
Ty Checker::combine(const std::string& opName, BinaryOp op, const Ty& a, const Ty& b, SourceRange range,
                    const Expr* ea, const Expr* eb) {
  bool logical = op == BinaryOp::And || op == BinaryOp::Or;
  bool compare = op == BinaryOp::Lt || op == BinaryOp::Le || op == BinaryOp::Gt || op == BinaryOp::Ge ||
                 op == BinaryOp::Eq || op == BinaryOp::Ne;
  // The runtime side decides the dtype; a constant must fit it.
  const Ty& rt = runtimeValue(a) ? a : b;
  const Ty& other = runtimeValue(a) ? b : a;
  const Expr* otherExpr = runtimeValue(a) ? eb : ea;
  DType dt = rt.dtype;
  if (runtimeValue(other)) {
    if (other.dtype != dt) {
      diags_->emit(range, DTypeMismatch, opName, tyStr(a), tyStr(b));
      return Ty::error();
    }
  } else if (other.kind == TyKind::Float && !isFloat(dt)) {
    diags_->emit(otherExpr->range, FloatConstToInt, other.floatValue ? fmt::format("{}", *other.floatValue) : "value", tyStr(rt));
    return Ty::error();
  } else if ((other.kind == TyKind::Bool) != (dt == DType::Bool)) {
    diags_->emit(range, DTypeMismatch, opName, tyStr(a), tyStr(b));
    return Ty::error();
  }
  if (logical && dt != DType::Bool) {
    diags_->emit(range, OperandType, opName, tyStr(rt));
    return Ty::error();
  }
  if (!logical && dt == DType::Bool && !(op == BinaryOp::Eq || op == BinaryOp::Ne)) {
    diags_->emit(range, OperandType, opName, tyStr(rt));
    return Ty::error();
  }
  if (op == BinaryOp::Mod && isFloat(dt)) {
    diags_->emit(range, OperandType, opName, tyStr(rt));
    return Ty::error();
  }
  Shape shape;
  if (a.kind == TyKind::Tile && b.kind == TyKind::Tile) {
    if (!sameShape(a.shape, b.shape)) {
      auto d = diags_->emit(range, ShapeMismatch, opName, tyStr(a), tyStr(b));
      shapeNotes(d, a.shape);
      shapeNotes(d, b.shape);
      return Ty::error();
    }
    shape = a.shape;
  } else if (a.kind == TyKind::Tile) {
    shape = a.shape;
  } else if (b.kind == TyKind::Tile) {
    shape = b.shape;
  }
  return Ty::tile(compare ? DType::Bool : dt, shape);
}

Ty Checker::foldConst(BinaryOp op, const Ty& a, const Ty& b, SourceRange range) {
  std::string opName = spelling(op);
  bool compare = op == BinaryOp::Lt || op == BinaryOp::Le || op == BinaryOp::Gt || op == BinaryOp::Ge ||
                 op == BinaryOp::Eq || op == BinaryOp::Ne;
  if (op == BinaryOp::And || op == BinaryOp::Or) {
    if (a.kind != TyKind::Bool || b.kind != TyKind::Bool) {
      diags_->emit(range, OperandType, opName, tyStr(a.kind != TyKind::Bool ? a : b));
      return Ty::error();
    }
    if (!a.boolValue || !b.boolValue) return Ty::boolConst(std::nullopt);
    return Ty::boolConst(op == BinaryOp::And ? (*a.boolValue && *b.boolValue) : (*a.boolValue || *b.boolValue));
  }
  if (a.kind == TyKind::Bool || b.kind == TyKind::Bool) {
    if (a.kind == TyKind::Bool && b.kind == TyKind::Bool && (op == BinaryOp::Eq || op == BinaryOp::Ne)) {
      if (!a.boolValue || !b.boolValue) return Ty::boolConst(std::nullopt);
      return Ty::boolConst((*a.boolValue == *b.boolValue) == (op == BinaryOp::Eq));
    }
    diags_->emit(range, OperandType, opName, tyStr(a.kind == TyKind::Bool ? a : b));
    return Ty::error();
  }
  if (a.kind == TyKind::Int && b.kind == TyKind::Int) {
    const Poly& x = *a.intValue;
    const Poly& y = *b.intValue;
    if (compare) {
      if (!x.isConstant() || !y.isConstant()) {
        if (x == y && (op == BinaryOp::Eq || op == BinaryOp::Le || op == BinaryOp::Ge)) return Ty::boolConst(true);
        if (x == y) return Ty::boolConst(false);
        return Ty::boolConst(std::nullopt);
      }
      int64_t p = x.value(), q = y.value();
      bool r = op == BinaryOp::Lt ? p < q : op == BinaryOp::Le ? p <= q : op == BinaryOp::Gt ? p > q
             : op == BinaryOp::Ge ? p >= q : op == BinaryOp::Eq ? p == q : p != q;
      return Ty::boolConst(r);
    }
    if ((op == BinaryOp::Div || op == BinaryOp::Mod) && y.isConstant() && y.value() == 0) {
      diags_->emit(range, DivisionByZero);
      return Ty::error();
    }
    std::optional<Poly> r;
    switch (op) {
      case BinaryOp::Add: r = Poly::add(x, y); break;
      case BinaryOp::Sub: r = Poly::sub(x, y); break;
      case BinaryOp::Mul: r = Poly::mul(x, y); break;
      case BinaryOp::Div: r = Poly::div(x, y); break;
      case BinaryOp::Mod: r = Poly::mod(x, y); break;
      default: break;
    }
    if (!r) {
      diags_->emit(range, IntOverflow);
      return Ty::error();
    }
    return Ty::intConst(*r);
  }
  // Float arithmetic; ints promote.
  auto asDouble = [](const Ty& t) -> std::optional<double> {
    if (t.kind == TyKind::Float) return t.floatValue;
    if (t.intValue && t.intValue->isConstant()) return static_cast<double>(t.intValue->value());
    return std::nullopt;
  };
  auto x = asDouble(a), y = asDouble(b);
  if (op == BinaryOp::Mod) {
    diags_->emit(range, OperandType, opName, "compile-time float");
    return Ty::error();
  }
  if (!x || !y) return compare ? Ty::boolConst(std::nullopt) : Ty::floatConst(std::nullopt);
  switch (op) {
    case BinaryOp::Add: return Ty::floatConst(*x + *y);
    case BinaryOp::Sub: return Ty::floatConst(*x - *y);
    case BinaryOp::Mul: return Ty::floatConst(*x * *y);
    case BinaryOp::Div:
      if (*y == 0) {
        diags_->emit(range, DivisionByZero);
        return Ty::error();
      }
      return Ty::floatConst(*x / *y);
    case BinaryOp::Lt: return Ty::boolConst(*x < *y);
    case BinaryOp::Le: return Ty::boolConst(*x <= *y);
    case BinaryOp::Gt: return Ty::boolConst(*x > *y);
    case BinaryOp::Ge: return Ty::boolConst(*x >= *y);
    case BinaryOp::Eq: return Ty::boolConst(*x == *y);
    case BinaryOp::Ne: return Ty::boolConst(*x != *y);
    default: return Ty::error();
  }
}

Shape Checker::checkRegion(const IndexExpr* ix, const Ty& base, const std::string& name, Ctx& ctx) {
  Shape out;
  bool bad = false;
  if (ix->slices.size() != base.shape.size()) {
    diags_->emit(ix->range, RegionRank, name, static_cast<unsigned>(base.shape.size()), plural(base.shape.size()),
                 static_cast<unsigned>(ix->slices.size()));
    return {{Poly::symbol("?"), {}}};
  }
  for (size_t i = 0; i < ix->slices.size(); ++i) {
    const Slice& sl = ix->slices[i];
    const Dim& dim = base.shape[i];
    Ty start = checkExpr(sl.start.get(), ctx);
    if (start.isError()) {
      bad = true;
    } else if (!(start.kind == TyKind::Int || (start.kind == TyKind::Scalar && start.dtype == DType::I32))) {
      diags_->emit(sl.start->range, ExpectedInt, "a region start", tyStr(start));
      bad = true;
    }
    std::optional<int64_t> s0;
    if (!bad && start.kind == TyKind::Int && start.intValue->isConstant()) s0 = start.intValue->value();
    bool knownExtent = dim.value.isConstant();
    int64_t extent = knownExtent ? dim.value.value() : 0;
    if (!sl.length) {
      if (s0 && knownExtent && (*s0 < 0 || *s0 >= extent))
        diags_->emit(sl.range, SliceOutOfBounds, fmt::format("[{}]", *s0), static_cast<unsigned>(i), name, dim.value.str());
      continue;
    }
    Ty len = checkExpr(sl.length.get(), ctx);
    if (len.isError()) {
      bad = true;
      continue;
    }
    if (len.kind != TyKind::Int) {
      diags_->emit(sl.length->range, SliceLengthNotConst,
                   runtimeValue(len) ? "this is a runtime value" : fmt::format("found {}", tyStr(len)));
      bad = true;
      continue;
    }
    if (len.intValue->isConstant()) {
      int64_t n = len.intValue->value();
      if (n <= 0) {
        diags_->emit(sl.length->range, SliceLengthPositive, std::to_string(n));
        bad = true;
        continue;
      }
      if (knownExtent && (n > extent || (s0 && (*s0 < 0 || *s0 > extent - n))))
        diags_->emit(sl.range, SliceOutOfBounds, s0 ? fmt::format("[{} : +{}]", *s0, n) : fmt::format("of length {}", n),
                     static_cast<unsigned>(i), name, dim.value.str())
            .note(dim.origin, ShapeFrom, shapeStr(base.shape));
    }
    out.push_back({*len.intValue, sl.length->range});
  }
  if (bad) return {{Poly::symbol("?"), {}}};
  return out;
}

Ty Checker::checkIndex(const IndexExpr* ix, Ctx& ctx, Access access) {
  Ty base = checkExpr(ix->base.get(), ctx);
  if (base.isError()) return base;
  auto badRegion = [](const Shape& s) { return s.size() == 1 && !s[0].origin.valid() && !s[0].value.isConstant(); };
  if (base.kind == TyKind::GroupArray) {
    if (access != Access::Value || ix->slices.size() != 1 || ix->slices[0].length) {
      diags_->emit(ix->range, NotIndexable, fmt::format("group '{}' that way; write {}[i] with one index", base.group->name.name, base.group->name.name));
      return Ty::error();
    }
    Ty i = checkExpr(ix->slices[0].start.get(), ctx);
    if (i.isError()) return i;
    if (i.kind != TyKind::Int) {
      diags_->emit(ix->slices[0].start->range, NotConstant, "a group index", fmt::format("found {}", tyStr(i)));
      return Ty::error();
    }
    Ty t = base;
    t.kind = TyKind::GroupElem;
    if (i.intValue->isConstant()) {
      int64_t v = i.intValue->value();
      t.groupIndex = v;
      auto [lo, hi] = groupRange_[base.group];
      if (lo && hi && (v < *lo || v >= *hi))
        diags_->emit(ix->slices[0].start->range, GroupIndexRange, std::to_string(v), base.group->name.name,
                     std::to_string(*lo), std::to_string(*hi))
            .note(base.group->name.range, DeclaredHere, base.group->name.name);
    }
    return t;
  }
  if (base.kind == TyKind::Tensor) {
    if (access == Access::Value && ctx.kind != BodyKind::Op) {
      diags_->emit(ix->range, NotIndexable, fmt::format("{} '{}' in a fn or step; its regions are loaded inside ops", storageName(base.storage), base.name));
      return Ty::error();
    }
    if (access == Access::Value) {
      diags_->emit(ix->range, TensorInArith, base.name);
      return Ty::error();
    }
    if (access == Access::Load && base.storage == Storage::OpResult) {
      diags_->emit(ix->base->range, LoadFromResult, base.name);
      return Ty::error();
    }
    Shape region = checkRegion(ix, base, base.name, ctx);
    if (badRegion(region)) return Ty::error();
    Ty t = Ty::tile(base.dtype, region);
    t.name = base.name;
    return t;
  }
  if (base.kind == TyKind::Tile && access == Access::Value) {
    auto* baseName = as<NameExpr>(ix->base.get());
    Shape region = checkRegion(ix, base, baseName ? baseName->name : "the tile", ctx);
    if (badRegion(region)) return Ty::error();
    return Ty::tile(base.dtype, region);
  }
  if (access == Access::Load) {
    diags_->emit(ix->base->range, LoadNotTensor, fmt::format("found {}", tyStr(base)));
    return Ty::error();
  }
  diags_->emit(ix->base->range, NotIndexable, tyStr(base));
  return Ty::error();
}

}  // namespace mk::check
