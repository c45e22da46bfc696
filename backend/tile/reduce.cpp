// Block reductions: per-thread partials combined across the compute threads (butterflies within
// a warp, then the warps' partials through shared memory); `reduce` and `dot` on top of them.
#include <cmath>
#include <cstdint>

#include <llvm/IR/Intrinsics.h>

#include "backend/tile/tile_gen.h"

namespace mk::backend::tile {

// Combines per-thread partials across the compute threads; every thread gets the result.
TileGen::Partial TileGen::blockReduce(ReduceOp op, DType accT, Partial p) {
  const int W = T() / 32;
  auto combine = [&](Partial a, Partial o) -> Partial {
    if (op == ReduceOp::Sum || op == ReduceOp::Mean)
      return {isFloat(accT) ? b_.CreateFAdd(a.value, o.value) : b_.CreateAdd(a.value, o.value), nullptr};
    bool isMin = op == ReduceOp::Min;
    V better = isFloat(accT) ? (isMin ? b_.CreateFCmpOLT(o.value, a.value) : b_.CreateFCmpOGT(o.value, a.value))
                             : (isMin ? b_.CreateICmpSLT(o.value, a.value) : b_.CreateICmpSGT(o.value, a.value));
    V same = isFloat(accT) ? b_.CreateFCmpOEQ(o.value, a.value) : b_.CreateICmpEQ(o.value, a.value);
    // The first extreme wins, as in the interpreter.
    V take = b_.CreateOr(better, b_.CreateAnd(same, b_.CreateICmpSLT(o.index, a.index)));
    return {b_.CreateSelect(take, o.value, a.value), b_.CreateSelect(take, o.index, a.index)};
  };
  for (int m = 16; m >= 1; m /= 2) {
    Partial o{env_.target->shuffleXor(b_, p.value, m), p.index ? env_.target->shuffleXor(b_, p.index, m) : nullptr};
    p = combine(p, o);
  }
  V lane = b_.CreateURem(env_.tid, ci(32)), warp = b_.CreateUDiv(env_.tid, ci(32));
  V vals = smemPtr(env_, ci(SmemLayout::kScratch));
  V idxs = smemPtr(env_, ci(SmemLayout::kScratch + 4 * 64));
  when(b_.CreateICmpEQ(lane, ci(0)), [&] {
    b_.CreateStore(p.value, b_.CreateGEP(p.value->getType(), vals, warp));
    if (p.index) b_.CreateStore(p.index, b_.CreateGEP(i32(), idxs, warp));
  });
  barrier();
  Partial r{b_.CreateLoad(p.value->getType(), vals), p.index ? b_.CreateLoad(i32(), idxs) : nullptr};
  for (int w = 1; w < W; ++w) {
    Partial o{b_.CreateLoad(p.value->getType(), b_.CreateConstGEP1_32(p.value->getType(), vals, w)),
              p.index ? b_.CreateLoad(i32(), b_.CreateConstGEP1_32(i32(), idxs, w)) : nullptr};
    r = combine(r, o);
  }
  barrier();  // the scratch is free again
  return r;
}

// The value that `op` leaves any accumulator of dtype accT unchanged with.
V TileGen::reduceIdentity(ReduceOp op, DType accT) {
  if (op == ReduceOp::Sum || op == ReduceOp::Mean) return isFloat(accT) ? cf(0) : ci(0);
  if (isFloat(accT)) return cf(op == ReduceOp::Min ? INFINITY : -INFINITY);
  return ci(op == ReduceOp::Min ? INT32_MAX : INT32_MIN);
}

// Per-thread accumulation over n elements, then the block-wide combination.
TileGen::Partial TileGen::reduceElements(ReduceOp op, DType accT, int64_t n, const std::function<V(V)>& value) {
  const bool withIndex = op != ReduceOp::Sum && op != ReduceOp::Mean;
  V init = reduceIdentity(op, accT);
  auto* accSlot = entryAlloca(repr(accT));
  auto* idxSlot = entryAlloca(i32());
  b_.CreateStore(init, accSlot);
  b_.CreateStore(ci(INT32_MAX), idxSlot);  // loses every tie: threads without elements
  forEachElement(n, [&](V idx) {
    V x = value(idx);
    V acc = b_.CreateLoad(repr(accT), accSlot);
    if (!withIndex) {
      b_.CreateStore(isFloat(accT) ? b_.CreateFAdd(acc, x) : b_.CreateAdd(acc, x), accSlot);
      return;
    }
    V cur = b_.CreateLoad(i32(), idxSlot);
    bool isMin = op == ReduceOp::Min;
    V better = isFloat(accT) ? (isMin ? b_.CreateFCmpOLT(x, acc) : b_.CreateFCmpOGT(x, acc))
                             : (isMin ? b_.CreateICmpSLT(x, acc) : b_.CreateICmpSGT(x, acc));
    // A thread's first element always counts (so that NaN-free data finds an index).
    V first = b_.CreateICmpEQ(cur, ci(INT32_MAX));
    V take = b_.CreateOr(better, first);
    b_.CreateStore(b_.CreateSelect(take, x, acc), accSlot);
    b_.CreateStore(b_.CreateSelect(take, idx, cur), idxSlot);
  });
  Partial p{b_.CreateLoad(repr(accT), accSlot), withIndex ? b_.CreateLoad(i32(), idxSlot) : nullptr};
  return blockReduce(op, accT, p);
}

V TileGen::reduce(const Expr& e) {
  const Expr& a = operand(e, 0);
  const int64_t n = abi::shapeElements(a.shape);
  if (a.shape.empty()) {
    V x = scalar(a);
    if (e.reduce == ReduceOp::Argmax) return convert(DType::I32, e.dtype, ci(0));
    return convert(a.dtype, e.dtype, x);
  }
  switch (e.reduce) {
    case ReduceOp::Sum:
    case ReduceOp::Mean: {
      DType accT = isFloat(e.dtype) ? DType::F32 : DType::I32;
      Partial p = reduceElements(e.reduce, accT, n, [&](V i) { return convert(a.dtype, accT, elem(a, i)); });
      V s = p.value;
      if (e.reduce == ReduceOp::Mean) s = isFloat(accT) ? b_.CreateFDiv(s, cf(double(n))) : b_.CreateSDiv(s, ci(n));
      return convert(accT, e.dtype, s);
    }
    case ReduceOp::Max:
    case ReduceOp::Min:
    case ReduceOp::Argmax: {
      DType accT = isFloat(a.dtype) ? DType::F32 : DType::I32;
      ReduceOp op = e.reduce == ReduceOp::Min ? ReduceOp::Min : ReduceOp::Max;
      Partial p = reduceElements(op, accT, n, [&](V i) { return elem(a, i); });
      if (e.reduce == ReduceOp::Argmax) return convert(DType::I32, e.dtype, p.index);
      return convert(a.dtype, e.dtype, p.value);
    }
  }
  unsupported("a reduction");
}

// Two partials of row_sum/row_max/row_min (no index to keep, unlike blockReduce's).
V TileGen::combineRow(ReduceOp op, DType accT, V x, V y) {
  if (op == ReduceOp::Sum) return isFloat(accT) ? b_.CreateFAdd(x, y) : b_.CreateAdd(x, y);
  const bool isMin = op == ReduceOp::Min;
  if (isFloat(accT)) return b_.CreateBinaryIntrinsic(isMin ? llvm::Intrinsic::minnum : llvm::Intrinsic::maxnum, x, y);
  return b_.CreateSelect(isMin ? b_.CreateICmpSLT(x, y) : b_.CreateICmpSGT(x, y), x, y);
}

// row_sum/row_max/row_min of x[M, N] into an [M] temporary: each group of 32 threads takes rows
// in turn, its lanes stride along the row, and a butterfly combines them (no shared memory or
// barrier inside, so the rows proceed independently).
TileGen::TileRef TileGen::rowReduce(const Expr& e) {
  const Expr& a = operand(e, 0);
  const int64_t M = a.shape.at(0), N = a.shape.at(1);
  const DType accT = isFloat(a.dtype) ? DType::F32 : DType::I32;
  TileRef out = allocTemp(M, e.dtype);
  auto combine = [&](V x, V y) { return combineRow(e.reduce, accT, x, y); };
  V init = reduceIdentity(e.reduce, accT);
  const int groups = T() / 32;
  V lane = b_.CreateURem(env_.tid, ci(32)), group = b_.CreateUDiv(env_.tid, ci(32));
  auto* acc = entryAlloca(repr(accT));
  loop(group, ci(M), ci(groups), [&](V m) {
    b_.CreateStore(init, acc);
    V rowStart = b_.CreateMul(m, ci(N));
    loop(lane, ci(N), ci(32), [&](V n) {
      V x = convert(a.dtype, accT, elem(a, b_.CreateAdd(rowStart, n)));
      b_.CreateStore(combine(b_.CreateLoad(repr(accT), acc), x), acc);
    });
    V r = b_.CreateLoad(repr(accT), acc);
    for (int k = 16; k >= 1; k /= 2) r = combine(r, env_.target->shuffleXor(b_, r, k));
    when(b_.CreateICmpEQ(lane, ci(0)), [&] { writeTile(out, m, convert(accT, e.dtype, r)); });
  });
  barrier();
  return out;
}

V TileGen::dot(const Expr& e) {
  const Expr& a = operand(e, 0);
  const Expr& bb = operand(e, 1);
  const int64_t n = abi::shapeElements(a.shape);
  Partial p = reduceElements(ReduceOp::Sum, DType::F32, n, [&](V i) {
    V x = convert(a.dtype, DType::F32, elem(a, i)), y = convert(bb.dtype, DType::F32, elem(bb, i));
    return b_.CreateFMul(x, y);
  });
  return convert(DType::F32, e.dtype, p.value);
}

}  // namespace mk::backend::tile
