// Values: shared-memory tiles (locals and temporaries), scalar locals, parameters, region
// coordinates, and the uniform value of a scalar expression (computed once per statement).
#include <algorithm>

#include "backend/tile/tile_gen.h"

namespace mk::backend::tile {

const ir::Tensor& TileGen::tensorOf(int param) {
  if (param < 0 || size_t(param) >= v_.tensors.size() || !v_.tensors[size_t(param)])
    unsupported("a load or store of a parameter that is not a tensor");
  return *v_.tensors[size_t(param)];
}

V TileGen::allocBytes(int64_t bytes, int64_t align) {
  top_ = (top_ + align - 1) / align * align;
  V p = tilePtr(top_);
  top_ += align16(bytes);
  peak_ = std::max(peak_, top_ - SmemLayout::kTiles);
  return p;
}

TileGen::TileRef TileGen::allocTemp(int64_t elements, DType t) { return {allocBytes(elements * 4), t}; }

V TileGen::readTile(const TileRef& t, V idx) {
  V p = b_.CreateGEP(repr(t.dtype), t.base, idx);
  return b_.CreateLoad(repr(t.dtype), p);
}

TileGen::TileRef TileGen::localTile(int slot) {
  const auto& L = fn_.locals.at(size_t(slot));
  return {tilePtr(tileOffset_.at(size_t(slot))), L.dtype};
}

V TileGen::readScalarLocal(int slot) {
  V raw = b_.CreateLoad(i32(), scalarSlot(slot));
  return isFloat(fn_.locals[size_t(slot)].dtype) ? b_.CreateBitCast(raw, f32()) : raw;
}

void TileGen::writeScalarLocal(int slot, V x) {
  b_.CreateStore(x->getType()->isFloatTy() ? b_.CreateBitCast(x, i32()) : x, scalarSlot(slot));
}

llvm::AllocaInst* TileGen::entryAlloca(llvm::Type* t) {
  llvm::IRBuilder<> eb(&env_.fn->getEntryBlock(), env_.fn->getEntryBlock().begin());
  return eb.CreateAlloca(t);
}

V TileGen::paramScalar(int index, DType want) {
  if (index < 0 || size_t(index) >= args_.params.size() || !args_.params[size_t(index)])
    unsupported("a scalar parameter without a value");
  V x = args_.params[size_t(index)];
  DType have = x->getType()->isFloatTy() ? DType::F32 : DType::I32;
  return convert(have, want, x);
}

// Region starts (i32, uniform), one per dimension.
std::vector<V> TileGen::starts(const std::vector<ir::RegionDim>& region) {
  std::vector<V> s;
  for (const auto& r : region) {
    if (!r.start) unsupported("a region without a start");
    s.push_back(convert(r.start->dtype, DType::I32, scalar(*r.start)));
  }
  return s;
}

// Logical coordinates of element `idx` of a region's value (dims of length 0 stay at start).
std::vector<V> TileGen::coordsOf(const std::vector<ir::RegionDim>& region, const std::vector<V>& s, V idx) {
  std::vector<V> c(region.size());
  V rest = idx;
  for (size_t d = region.size(); d-- > 0;) {
    if (region[d].length <= 0) {
      c[d] = s[d];
      continue;
    }
    c[d] = b_.CreateAdd(s[d], b_.CreateURem(rest, ci(region[d].length)));
    rest = b_.CreateUDiv(rest, ci(region[d].length));
  }
  return c;
}

// Uniform value of a scalar expression (computed once per statement).
V TileGen::scalar(const Expr& e) {
  if (auto it = scalars_.find(&e); it != scalars_.end()) return it->second;
  V r = scalarRaw(e);
  scalars_[&e] = r;
  return r;
}

const Expr& TileGen::operand(const Expr& e, size_t i) {
  if (i >= e.operands.size() || !e.operands[i]) unsupported("an expression with a missing operand");
  return *e.operands[i];
}

V TileGen::scalarRaw(const Expr& e) {
  if (!e.shape.empty()) unsupported("a tile where a scalar is needed");
  switch (e.kind) {
    case ExprKind::Const: return isFloat(e.dtype) ? roundTo(e.dtype, cf(e.value)) : ci(int64_t(e.value));
    case ExprKind::Local: {
      const auto& L = fn_.locals.at(size_t(e.index));
      return convert(L.dtype, e.dtype, readScalarLocal(e.index));
    }
    case ExprKind::TaskIndex:
      if (e.index < 0 || size_t(e.index) >= args_.index.size()) unsupported("a task index out of range");
      return convert(DType::I32, e.dtype, args_.index[size_t(e.index)]);
    case ExprKind::Scalar: return roundTo(e.dtype, paramScalar(e.index, e.dtype));
    case ExprKind::Reduce: return reduce(e);
    case ExprKind::Dot: return dot(e);
    default: return elem(e, ci(0));  // loads, slices, arithmetic of one element
  }
}

// Before a statement's element loops: every scalar subexpression once (uniform), every
// block-wide subexpression into shared memory.
void TileGen::prepare(const Expr& e) {
  // In a fragment run, x + a product: the product accumulates onto x's owned elements.
  if (run_ && run_->fragment && e.kind == ExprKind::Binary && e.binary == BinaryOp::Add && e.dtype == DType::F32)
    for (size_t side = 0; side < 2; ++side) {
      const Expr& p = operand(e, side);
      const Expr& x = operand(e, 1 - side);
      if (!fragmentProducts_.count(&p) || x.shape != p.shape || x.dtype != DType::F32) continue;
      prepare(x);
      for (const auto& o : p.operands) prepare(*o);
      std::vector<V> init;
      for (int64_t j = 0; j < p.shape[1] / 2; ++j) {
        V i = fragmentIndex(p.shape, j, &ownedHalf_);
        ownedElement_ = j;
        init.push_back(elem(x, i));
      }
      fragments_[&e] = fragmentMma(p, std::move(init));
      return;
    }
  for (const auto& o : e.operands)
    if (o) prepare(*o);
  for (const auto& r : e.region)
    if (r.start) prepare(*r.start);
  if (e.shape.empty()) scalar(e);
  else if (e.kind == ExprKind::RowDot || e.kind == ExprKind::ColDot) tiles_[&e] = e.kind == ExprKind::RowDot ? rowdot(e) : coldot(e);
  else if (e.kind == ExprKind::Mma || e.kind == ExprKind::MmaNt) {
    if (run_ && run_->fragment) fragments_[&e] = fragmentMma(e);
    else tiles_[&e] = mma(e);
  } else if (e.kind == ExprKind::RowReduce) {
    if (run_ && run_->fragment) fragments_[&e] = fragmentRowReduce(e);
    else tiles_[&e] = run_ ? ownedRowReduce(e) : rowReduce(e);
  }
}

}  // namespace mk::backend::tile
