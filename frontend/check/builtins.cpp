// The tile builtins of op bodies, typed by the rule support/builtins.def gives each.
#include "frontend/check/context.h"

#include <algorithm>
#include <functional>

namespace mk::check {

namespace {

// How a builtin is typed; several builtins share a rule, the name telling them apart in messages.
enum class BuiltinRule {
  FloatUnary,     // elementwise, a float scalar or tile
  FloatBinary,    // elementwise, two float operands under the arithmetic rules
  NumericBinary,  // elementwise, two numeric operands under the arithmetic rules
  Reduce,         // a numeric tile to a scalar of its dtype
  FloatReduce,    // a float tile to a scalar of its dtype
  Argmax,         // a 1-D numeric tile to an i32 index
  RowReduce,      // a 2-D numeric tile to one value per row, of its dtype
  Repeat,         // a 1-D tile repeated into the rows (repeat_rows) or columns (repeat_cols) of a 2-D one
  Select,
  Dot,     // a[K] . x[K] -> f32
  RowDot,  // A[M, K] x[K] -> f32[M]
  ColDot,  // A[M, K]^T y[M] -> f32[K]
  Mma,     // a[M, K] b[K, N] -> f32[M, N]
  MmaNt,   // a[M, K] b[N, K]^T -> f32[M, N]
  Iota,
  Concat,
};

struct BuiltinForm {
  const char* name;
  size_t arity;
  BuiltinRule rule;
};

const std::vector<BuiltinForm>& builtinForms() {
  static const std::vector<BuiltinForm> kForms = {
#define MK_BUILTIN(NAME, ARITY, RULE, IR, SIGNATURE, DOC) {NAME, ARITY, BuiltinRule::RULE},
#include "support/builtins.def"
#undef MK_BUILTIN
  };
  return kForms;
}

// The form of `name` a call with `nargs` arguments means: the one of that arity, else the last.
const BuiltinForm* findForm(const std::string& name, size_t nargs) {
  const BuiltinForm* found = nullptr;
  for (const BuiltinForm& f : builtinForms())
    if (f.name == name && (!found || found->arity != nargs)) found = &f;
  return found;
}

}  // namespace

const std::vector<std::string>& builtinNames() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const BuiltinForm& f : builtinForms())
      if (std::find(names.begin(), names.end(), f.name) == names.end()) names.push_back(f.name);
    return names;
  }();
  return kNames;
}

// Each builtin checks its operands and gives the result type.
Ty Checker::checkBuiltin(const CallExpr* call, Ctx& ctx) {
  const std::string& name = call->callee.name;
  if (name.empty()) return Ty::error();
  const BuiltinForm* form = findForm(name, call->args.size());
  if (!form) {
    if (auto sym = findGlobal(ctx.mod, name, call->callee.range, false); sym && sym->decl &&
        (as<OpDecl>(sym->decl) || as<FnDecl>(sym->decl))) {
      recordUse(call->callee.range, sym->decl->name.range, nullptr);
      diags_->emit(call->callee.range, CallInOp, name);
      return Ty::error();
    }
    diags_->emit(call->callee.range, UnknownBuiltin, name, suggest(name, builtinNames()));
    return Ty::error();
  }
  std::vector<Ty> args;
  for (const auto& a : call->args) {
    if (a.name) {
      diags_->emit(a.name->range, BuiltinNamedArg, name);
      return Ty::error();
    }
    args.push_back(checkExpr(a.value.get(), ctx));
    if (args.back().isError()) return Ty::error();
  }
  auto arity = [&](size_t n, const char* words) {
    if (args.size() == n) return true;
    diags_->emit(call->range, BuiltinArity, name, words, static_cast<unsigned>(args.size()));
    return false;
  };
  auto operand = [&](size_t i, const char* need, auto pred) {
    const Ty& t = args[i];
    if (t.kind == TyKind::Tensor) {
      diags_->emit(call->args[i].value->range, TensorInArith, t.name);
      return false;
    }
    if (pred(t)) return true;
    diags_->emit(call->args[i].value->range, BuiltinOperand, name, need, tyStr(t));
    return false;
  };
  auto floatValue = [](const Ty& t) {
    return t.kind == TyKind::Float || t.kind == TyKind::Int || ((t.kind == TyKind::Scalar || t.kind == TyKind::Tile) && isFloat(t.dtype));
  };
  auto runtimeTile = [&](const Ty& t) { return t.kind == TyKind::Tile; };
  auto oneD = [&](const Ty& t) { return t.kind == TyKind::Tile && t.shape.size() == 1; };
  auto twoD = [&](const Ty& t) { return t.kind == TyKind::Tile && t.shape.size() == 2 && isFloat(t.dtype); };
  BuiltinRule rule = form->rule;

  if (rule == BuiltinRule::FloatUnary) {
    if (!arity(1, "1 argument") || !operand(0, "a float scalar or tile", floatValue)) return Ty::error();
    if (args[0].isCompileTime()) return Ty::floatConst(std::nullopt);
    return args[0];
  }
  if (rule == BuiltinRule::FloatBinary || rule == BuiltinRule::NumericBinary) {
    bool floats = rule == BuiltinRule::FloatBinary;
    if (!arity(2, "2 arguments")) return Ty::error();
    for (size_t i = 0; i < 2; ++i)
      if (!operand(i, floats ? "a float scalar or tile" : "a number or tile",
                   floats ? floatValue : [](const Ty& t) { return t.isValue() && !(t.kind == TyKind::Bool); }))
        return Ty::error();
    if (args[0].isCompileTime() && args[1].isCompileTime()) return Ty::floatConst(std::nullopt);
    return combine(name, BinaryOp::Add, args[0], args[1], call->range, call->args[0].value.get(), call->args[1].value.get());
  }
  if (rule == BuiltinRule::Reduce || rule == BuiltinRule::FloatReduce) {
    bool floats = rule == BuiltinRule::FloatReduce;
    if (!arity(1, "1 argument (or 2 for elementwise max/min)") || !operand(0, "a tile", runtimeTile)) return Ty::error();
    if (args[0].dtype == DType::Bool || (floats && !isFloat(args[0].dtype))) {
      diags_->emit(call->args[0].value->range, BuiltinOperand, name, floats ? "a float tile" : "a numeric tile", tyStr(args[0]));
      return Ty::error();
    }
    return Ty::scalar(args[0].dtype);
  }
  if (rule == BuiltinRule::Argmax) {
    if (!arity(1, "1 argument") || !operand(0, "a 1-D numeric tile", oneD)) return Ty::error();
    return Ty::scalar(DType::I32);
  }
  if (rule == BuiltinRule::RowReduce) {
    if (!arity(1, "1 argument") ||
        !operand(0, "a 2-D numeric tile", [](const Ty& t) { return t.kind == TyKind::Tile && t.shape.size() == 2 && t.dtype != DType::Bool; }))
      return Ty::error();
    return Ty::tile(args[0].dtype, {args[0].shape[0]});
  }
  if (rule == BuiltinRule::Repeat) {
    if (!arity(2, "2 arguments") || !operand(0, "a 1-D tile", oneD)) return Ty::error();
    const Ty& count = args[1];
    if (count.kind != TyKind::Int || (count.intValue->isConstant() && count.intValue->value() <= 0)) {
      const bool constant = count.kind == TyKind::Int && count.intValue->isConstant();
      diags_->emit(call->args[1].value->range, BuiltinOperand, name, "a positive compile-time int count",
                   constant ? std::to_string(count.intValue->value()) : tyStr(count));
      return Ty::error();
    }
    const Dim n{*count.intValue, call->args[1].value->range};
    // repeat_rows(v[N], M) -> [M, N]; repeat_cols(v[M], N) -> [M, N].
    if (name == "repeat_rows") return Ty::tile(args[0].dtype, {n, args[0].shape[0]});
    return Ty::tile(args[0].dtype, {args[0].shape[0], n});
  }
  if (rule == BuiltinRule::Select) {
    if (!arity(3, "3 arguments")) return Ty::error();
    const Ty& c = args[0];
    bool condOk = (c.kind == TyKind::Bool) || ((c.kind == TyKind::Scalar || c.kind == TyKind::Tile) && c.dtype == DType::Bool);
    if (!condOk) {
      diags_->emit(call->args[0].value->range, ExpectedBool, "the condition of 'select'", tyStr(c));
      return Ty::error();
    }
    Ty v;
    if (args[1].isCompileTime() && args[2].isCompileTime()) {
      // Both branches constant: the dtype follows them (ints give i32, floats f32).
      if ((args[1].kind == TyKind::Bool) != (args[2].kind == TyKind::Bool)) {
        diags_->emit(call->range, DTypeMismatch, name, tyStr(args[1]), tyStr(args[2]));
        return Ty::error();
      }
      DType dt = args[1].kind == TyKind::Bool ? DType::Bool
                 : args[1].kind == TyKind::Float || args[2].kind == TyKind::Float ? DType::F32 : DType::I32;
      v = Ty::scalar(dt);
    } else {
      v = combine("select", BinaryOp::Add, args[1], args[2], call->range, call->args[1].value.get(), call->args[2].value.get());
    }
    if (v.isError()) return v;
    if (c.kind == TyKind::Tile && v.kind == TyKind::Tile && !sameShape(c.shape, v.shape)) {
      auto d = diags_->emit(call->range, ShapeMismatch, "select", tyStr(c), tyStr(v));
      shapeNotes(d, c.shape);
      shapeNotes(d, v.shape);
      return Ty::error();
    }
    if (c.kind == TyKind::Tile && v.kind != TyKind::Tile) return Ty::tile(v.dtype, c.shape);
    return v;
  }
  if (rule == BuiltinRule::Dot || rule == BuiltinRule::RowDot || rule == BuiltinRule::ColDot) {
    if (!arity(2, "2 arguments")) return Ty::error();
    bool isDot = rule == BuiltinRule::Dot;
    if (!operand(0, isDot ? "a 1-D float tile" : "a 2-D float tile", isDot ? std::function<bool(const Ty&)>(
                     [&](const Ty& t) { return oneD(t) && isFloat(t.dtype); }) : std::function<bool(const Ty&)>(twoD)) ||
        !operand(1, "a 1-D float tile", [&](const Ty& t) { return oneD(t) && isFloat(t.dtype); }))
      return Ty::error();
    const Ty& a = args[0];
    const Ty& x = args[1];
    if (a.dtype != x.dtype) {
      diags_->emit(call->range, DTypeMismatch, name, tyStr(a), tyStr(x));
      return Ty::error();
    }
    // dot: a[K] . x[K]; rowdot: A[M, K] x[K] -> [M]; coldot: A[M, K]^T y[M] -> [K].
    size_t axis = rule == BuiltinRule::RowDot ? 1 : 0;
    if (a.shape[axis].value != x.shape[0].value) {
      auto d = diags_->emit(call->range, ShapeMismatch, name, tyStr(a), tyStr(x));
      d.note(a.shape[axis].origin, ShapeFrom, shapeStr(a.shape));
      d.note(x.shape[0].origin, ShapeFrom, shapeStr(x.shape));
      return Ty::error();
    }
    if (isDot) return Ty::scalar(DType::F32);
    return Ty::tile(DType::F32, {a.shape[rule == BuiltinRule::RowDot ? 0 : 1]});
  }
  if (rule == BuiltinRule::Mma || rule == BuiltinRule::MmaNt) {
    if (!arity(2, "2 arguments") || !operand(0, "a 2-D float tile", twoD) || !operand(1, "a 2-D float tile", twoD))
      return Ty::error();
    const Ty& a = args[0];
    const Ty& b = args[1];
    if (a.dtype != b.dtype) {
      diags_->emit(call->range, DTypeMismatch, name, tyStr(a), tyStr(b));
      return Ty::error();
    }
    // mma: a[M, K] b[K, N]; mma_nt: a[M, K] b[N, K]. K is a's dim 1 and b's dim 0 or 1.
    const bool nt = rule == BuiltinRule::MmaNt;
    const auto& ka = a.shape[1];
    const auto& kb = b.shape[nt ? 1 : 0];
    if (ka.value != kb.value) {
      auto d = diags_->emit(call->range, ContractedDims, name, tyStr(a), tyStr(b), ka.value.str(), kb.value.str());
      d.note(ka.origin, ShapeFrom, shapeStr(a.shape));
      d.note(kb.origin, ShapeFrom, shapeStr(b.shape));
      return Ty::error();
    }
    return Ty::tile(DType::F32, {a.shape[0], b.shape[nt ? 0 : 1]});
  }
  if (rule == BuiltinRule::Iota) {
    if (!arity(1, "1 argument")) return Ty::error();
    if (args[0].kind != TyKind::Int) {
      diags_->emit(call->args[0].value->range, SliceLengthNotConst,
                   runtimeValue(args[0]) ? "this is a runtime value" : fmt::format("found {}", tyStr(args[0])));
      return Ty::error();
    }
    if (args[0].intValue->isConstant() && args[0].intValue->value() <= 0) {
      diags_->emit(call->args[0].value->range, SliceLengthPositive, args[0].intValue->str());
      return Ty::error();
    }
    return Ty::tile(DType::I32, {{*args[0].intValue, call->args[0].value->range}});
  }
  if (rule == BuiltinRule::Concat) {
    if (!arity(2, "2 arguments") || !operand(0, "a 1-D tile", oneD) || !operand(1, "a 1-D tile", oneD)) return Ty::error();
    if (args[0].dtype != args[1].dtype) {
      diags_->emit(call->range, DTypeMismatch, name, tyStr(args[0]), tyStr(args[1]));
      return Ty::error();
    }
    auto n = Poly::add(args[0].shape[0].value, args[1].shape[0].value);
    if (!n) {
      diags_->emit(call->range, IntOverflow);
      return Ty::error();
    }
    return Ty::tile(args[0].dtype, {{*n, call->range}});
  }
  return Ty::error();
}

}  // namespace mk::check
