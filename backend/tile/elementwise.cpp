// Elementwise evaluation: the numbers of the tile lowering (rounding, conversions, unary and
// binary operators) and element `idx` of a tile expression, computed in the calling thread.
#include <llvm/IR/Intrinsics.h>

#include "backend/tile/tile_gen.h"

namespace mk::backend::tile {

V TileGen::roundTo(DType t, V x) {
  if (t == DType::BF16) return b_.CreateFPExt(b_.CreateFPTrunc(x, b_.getBFloatTy()), f32());
  if (t == DType::F16) return b_.CreateFPExt(b_.CreateFPTrunc(x, b_.getHalfTy()), f32());
  return x;
}

V TileGen::toFloat(DType from, V x) { return isFloat(from) ? x : b_.CreateSIToFP(x, f32()); }

V TileGen::convert(DType from, DType to, V x) {
  switch (to) {
    case DType::F32: return toFloat(from, x);
    case DType::BF16:
    case DType::F16: return isFloat(from) && from == to ? x : roundTo(to, toFloat(from, x));
    case DType::Bool:
      return b_.CreateZExt(isFloat(from) ? b_.CreateFCmpUNE(x, cf(0)) : b_.CreateICmpNE(x, ci(0)), i32());
    case DType::I32: return isFloat(from) ? env_.target->floatToInt(b_, x) : x;
  }
  return x;
}

// e^x and ln x from the target's base-2 forms, for every target alike.
V TileGen::expf(V x) { return env_.target->exp2(b_, b_.CreateFMul(x, cf(1.4426950408889634))); }

V TileGen::logf(V x) { return b_.CreateFMul(env_.target->log2(b_, x), cf(0.6931471805599453)); }

V TileGen::unary(UnaryOp op, DType t, V x) {
  if (isFloat(t)) {
    V r = nullptr;
    switch (op) {
      case UnaryOp::Neg: r = b_.CreateFNeg(x); break;
      case UnaryOp::Abs: r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x); break;
      case UnaryOp::Exp: r = expf(x); break;
      case UnaryOp::Log: r = logf(x); break;
      case UnaryOp::Sigmoid: r = b_.CreateFDiv(cf(1), b_.CreateFAdd(cf(1), expf(b_.CreateFNeg(x)))); break;
      case UnaryOp::Silu: r = b_.CreateFDiv(x, b_.CreateFAdd(cf(1), expf(b_.CreateFNeg(x)))); break;
      case UnaryOp::Tanh:  // 1 - 2 / (e^2x + 1): exact limits +-1 for large |x|
        r = b_.CreateFSub(cf(1), b_.CreateFDiv(cf(2), b_.CreateFAdd(expf(b_.CreateFMul(x, cf(2))), cf(1))));
        break;
      case UnaryOp::Not: unsupported("`not` of a float value");
      default: r = env_.target->unaryMath(b_, op, x);
    }
    if (!r) unsupported(std::string("`") + ir::spelling(op) + "` on this target");
    return roundTo(t, r);
  }
  switch (op) {
    case UnaryOp::Neg: return b_.CreateNeg(x);
    case UnaryOp::Abs: return b_.CreateSelect(b_.CreateICmpSLT(x, ci(0)), b_.CreateNeg(x), x);
    case UnaryOp::Not: return t == DType::Bool ? b_.CreateZExt(b_.CreateICmpEQ(x, ci(0)), i32()) : b_.CreateNot(x);
    default: unsupported(std::string("`") + ir::spelling(op) + "` of an integer value");
  }
}

V TileGen::binary(BinaryOp op, DType t, DType ta, DType tb, V a, V b) {
  switch (op) {
    case BinaryOp::Lt: case BinaryOp::Le: case BinaryOp::Gt:
    case BinaryOp::Ge: case BinaryOp::Eq: case BinaryOp::Ne: {
      V r;
      if (isFloat(ta) || isFloat(tb)) {
        a = toFloat(ta, a), b = toFloat(tb, b);
        auto p = op == BinaryOp::Lt ? llvm::CmpInst::FCMP_OLT : op == BinaryOp::Le ? llvm::CmpInst::FCMP_OLE
               : op == BinaryOp::Gt ? llvm::CmpInst::FCMP_OGT : op == BinaryOp::Ge ? llvm::CmpInst::FCMP_OGE
               : op == BinaryOp::Eq ? llvm::CmpInst::FCMP_OEQ : llvm::CmpInst::FCMP_UNE;
        r = b_.CreateFCmp(p, a, b);
      } else {
        auto p = op == BinaryOp::Lt ? llvm::CmpInst::ICMP_SLT : op == BinaryOp::Le ? llvm::CmpInst::ICMP_SLE
               : op == BinaryOp::Gt ? llvm::CmpInst::ICMP_SGT : op == BinaryOp::Ge ? llvm::CmpInst::ICMP_SGE
               : op == BinaryOp::Eq ? llvm::CmpInst::ICMP_EQ : llvm::CmpInst::ICMP_NE;
        r = b_.CreateICmp(p, a, b);
      }
      return b_.CreateZExt(r, i32());
    }
    case BinaryOp::And:
    case BinaryOp::Or:
      if (isFloat(t)) unsupported("`and`/`or` of float values");
      if (t == DType::Bool) {
        V x = b_.CreateICmpNE(a, ci(0)), y = b_.CreateICmpNE(b, ci(0));
        return b_.CreateZExt(op == BinaryOp::And ? b_.CreateAnd(x, y) : b_.CreateOr(x, y), i32());
      }
      return op == BinaryOp::And ? b_.CreateAnd(a, b) : b_.CreateOr(a, b);
    default: break;
  }
  if (isFloat(t)) {
    V x = toFloat(ta, a), y = toFloat(tb, b), r = nullptr;
    switch (op) {
      case BinaryOp::Add: r = b_.CreateFAdd(x, y); break;
      case BinaryOp::Sub: r = b_.CreateFSub(x, y); break;
      case BinaryOp::Mul: r = b_.CreateFMul(x, y); break;
      case BinaryOp::Div: r = b_.CreateFDiv(x, y); break;
      case BinaryOp::Mod:  // fmod: x - trunc(x / y) * y
        r = b_.CreateFSub(x, b_.CreateFMul(b_.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, b_.CreateFDiv(x, y)), y));
        break;
      case BinaryOp::Min: r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, x, y); break;
      case BinaryOp::Max: r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, x, y); break;
      case BinaryOp::Pow: r = env_.target->exp2(b_, b_.CreateFMul(y, env_.target->log2(b_, x))); break;
      default: break;
    }
    return roundTo(t, r);
  }
  switch (op) {
    case BinaryOp::Add: return b_.CreateAdd(a, b);
    case BinaryOp::Sub: return b_.CreateSub(a, b);
    case BinaryOp::Mul: return b_.CreateMul(a, b);
    case BinaryOp::Div: return b_.CreateSDiv(a, b);
    case BinaryOp::Mod: return b_.CreateSRem(a, b);
    case BinaryOp::Min: return b_.CreateSelect(b_.CreateICmpSLT(a, b), a, b);
    case BinaryOp::Max: return b_.CreateSelect(b_.CreateICmpSGT(a, b), a, b);
    case BinaryOp::Pow: {  // x^min(y, 64) wrapping, y >= 0: square and multiply over 7 bits
      V e = b_.CreateSelect(b_.CreateICmpSGT(b, ci(64)), ci(64), b);
      e = b_.CreateSelect(b_.CreateICmpSLT(e, ci(0)), ci(0), e);
      V r = ci(1), base = a;
      for (int bit = 0; bit < 7; ++bit) {
        V on = b_.CreateICmpNE(b_.CreateAnd(b_.CreateLShr(e, ci(bit)), ci(1)), ci(0));
        r = b_.CreateSelect(on, b_.CreateMul(r, base), r);
        base = b_.CreateMul(base, base);
      }
      return r;
    }
    default: break;
  }
  unsupported(std::string("operator ") + ir::spelling(op));
}

// Element `idx` (i32) of the tile (or scalar) `e`, in the calling thread.
V TileGen::elem(const Expr& e, V idx) {
  if (e.shape.empty() && e.kind != ExprKind::Load && e.kind != ExprKind::Slice && e.kind != ExprKind::Unary &&
      e.kind != ExprKind::Binary && e.kind != ExprKind::Select && e.kind != ExprKind::Cast)
    return scalar(e);
  if (e.shape.empty()) {
    if (auto it = scalars_.find(&e); it != scalars_.end()) return it->second;
  }
  if (auto it = tiles_.find(&e); it != tiles_.end()) return readTile(it->second, idx);
  // A fragment run's product or row reduction: this thread's element of it, or its row's value.
  if (auto it = fragments_.find(&e); it != fragments_.end())
    return it->second.at(size_t(e.kind == ExprKind::RowReduce ? ownedHalf_ : ownedElement_));
  switch (e.kind) {
    case ExprKind::Const: return isFloat(e.dtype) ? roundTo(e.dtype, cf(e.value)) : ci(int64_t(e.value));
    case ExprKind::Local: {
      const auto& L = fn_.locals.at(size_t(e.index));
      if (L.shape.empty()) return convert(L.dtype, e.dtype, readScalarLocal(e.index));
      if (privateLocal(e.index)) return convert(L.dtype, e.dtype, readPrivate(e.index));
      return convert(L.dtype, e.dtype, readTile(localTile(e.index), idx));
    }
    case ExprKind::Load: {
      const ir::Tensor& t = tensorOf(e.index);
      V x;
      if (auto it = ring_.find(&e); it != ring_.end()) {
        x = loadStorage(t.dtype, at(t.dtype, it->second, b_.CreateZExt(idx, b_.getInt64Ty())));
      } else {
        std::vector<V> s = starts(e.region);
        V off = physOffset(t, coordsOf(e.region, s, idx));
        x = loadStorage(t.dtype, at(t.dtype, args_.params[size_t(e.index)], off));
      }
      return convert(t.dtype, e.dtype, x);
    }
    case ExprKind::Slice: {
      const Expr& a = operand(e, 0);
      std::vector<V> s = starts(e.region);
      std::vector<V> c = coordsOf(e.region, s, idx);
      if (c.size() != a.shape.size()) unsupported("a slice whose rank differs from its operand's");
      V lin = ci(0);
      for (size_t d = 0; d < c.size(); ++d) lin = b_.CreateAdd(b_.CreateMul(lin, ci(a.shape[d])), c[d]);
      return convert(a.dtype, e.dtype, elem(a, lin));
    }
    case ExprKind::Unary: return unary(e.unary, e.dtype, elem(operand(e, 0), idx));
    case ExprKind::Binary: {
      const Expr& a = operand(e, 0);
      const Expr& bb = operand(e, 1);
      return binary(e.binary, e.dtype, a.dtype, bb.dtype, elem(a, idx), elem(bb, idx));
    }
    case ExprKind::Select: {
      const Expr& c = operand(e, 0);
      const Expr& a = operand(e, 1);
      const Expr& bb = operand(e, 2);
      V cond = b_.CreateICmpNE(convert(c.dtype, DType::Bool, elem(c, idx)), ci(0));
      return b_.CreateSelect(cond, convert(a.dtype, e.dtype, elem(a, idx)), convert(bb.dtype, e.dtype, elem(bb, idx)));
    }
    case ExprKind::Cast: {
      const Expr& a = operand(e, 0);
      return convert(a.dtype, e.dtype, elem(a, idx));
    }
    case ExprKind::Iota: return convert(DType::I32, e.dtype, idx);
    case ExprKind::Concat: {
      const Expr& a = operand(e, 0);
      const Expr& bb = operand(e, 1);
      const int64_t na = abi::shapeElements(a.shape), nb = abi::shapeElements(bb.shape);
      // Both sides read an index in range; the select keeps the right one.
      V inA = b_.CreateICmpSLT(idx, ci(na));
      V ia = b_.CreateSelect(inA, idx, ci(0));
      V ib = b_.CreateSelect(inA, ci(0), b_.CreateSub(idx, ci(na)));
      (void)nb;
      return b_.CreateSelect(inA, convert(a.dtype, e.dtype, elem(a, ia)), convert(bb.dtype, e.dtype, elem(bb, ib)));
    }
    case ExprKind::RepeatRows:  // [M, N] of v[N]: element (m, n) is v[n]
      return convert(operand(e, 0).dtype, e.dtype, elem(operand(e, 0), b_.CreateURem(idx, ci(e.shape[1]))));
    case ExprKind::RepeatCols:  // [M, N] of v[M]: element (m, n) is v[m]
      return convert(operand(e, 0).dtype, e.dtype, elem(operand(e, 0), b_.CreateUDiv(idx, ci(e.shape[1]))));
    case ExprKind::TaskIndex:
    case ExprKind::Scalar:
    case ExprKind::Reduce:
    case ExprKind::Dot: return scalar(e);
    case ExprKind::RowReduce:
    case ExprKind::RowDot:
    case ExprKind::ColDot:
    case ExprKind::Mma:
    case ExprKind::MmaNt: unsupported("a row reduction/rowdot/coldot/mma that was not prepared");
  }
  unsupported("an unknown expression");
}

}  // namespace mk::backend::tile
