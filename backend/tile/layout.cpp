// Where a tensor's elements are: the layout address formula (abi/layout.h's, emitted as LLVM IR)
// and element stores in a dtype's storage.
#include <optional>
#include <span>

#include "abi/layout.h"
#include "backend/tile/tile_gen.h"

namespace mk::backend::tile {

std::vector<int64_t> affineStrides(const ir::Tensor& t) { return abi::affineStrides(t.layout, t.shape); }

// abi::physicalOffset's arithmetic as LLVM IR: coordinates are i32, offsets i64, both
// non-negative (so division and remainder are unsigned).
struct IRArithmetic {
  using Index = V;
  using Offset = V;
  Builder& b;
  V constant(int64_t x) const { return b.getInt64(uint64_t(x)); }
  V widen(V i) const { return b.CreateZExt(i, b.getInt64Ty()); }
  V indexDiv(V i, int64_t d) const { return b.CreateUDiv(i, b.getInt32(uint32_t(int32_t(d)))); }
  V indexRem(V i, int64_t d) const { return b.CreateURem(i, b.getInt32(uint32_t(int32_t(d)))); }
  V add(V x, V y) const { return b.CreateAdd(x, y); }
  V sub(V x, V y) const { return b.CreateSub(x, y); }
  V mul(V x, V y) const { return b.CreateMul(x, y); }
  V div(V x, V y) const { return b.CreateUDiv(x, y); }
  V rem(V x, V y) const { return b.CreateURem(x, y); }
  V bitXor(V x, V y) const { return b.CreateXor(x, y); }
};

void TileGen::storeStorage(DType t, V ptr, V x) {  // x: the repr of a value of dtype t
  switch (t) {
    case DType::BF16: b_.CreateStore(b_.CreateBitCast(b_.CreateFPTrunc(x, b_.getBFloatTy()), b_.getInt16Ty()), ptr); return;
    case DType::F16: b_.CreateStore(b_.CreateBitCast(b_.CreateFPTrunc(x, b_.getHalfTy()), b_.getInt16Ty()), ptr); return;
    case DType::Bool: b_.CreateStore(b_.CreateTrunc(x, b_.getInt8Ty()), ptr); return;
    default: b_.CreateStore(x, ptr); return;
  }
}

// Physical element offset (i64) of logical coordinates (i32, non-negative) in tensor t.
V TileGen::physOffset(const ir::Tensor& t, const std::vector<V>& c) {
  IRArithmetic a{b_};
  std::optional<V> off = abi::physicalOffset(a, t.layout, t.shape, dtypeBytes(t.dtype), std::span<const V>(c));
  if (!off) unsupported("the layout " + t.layout.str() + " of '" + t.name + "'");
  return *off;
}

}  // namespace mk::backend::tile
