// Where a tensor's elements are: the layout address formula (logical coordinates -> physical
// element offset, emitted as LLVM IR) and element stores in a dtype's storage.
#include "backend/tile/tile_gen.h"

namespace mk::backend::tile {

std::vector<int64_t> affineStrides(const ir::Tensor& t) {
  const auto& s = t.shape;
  std::vector<int64_t> st(s.size(), 1);
  auto rowMajor = [&] {
    for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
    return st;
  };
  switch (t.layout.kind) {
    case Layout::RowMajor:
    case Layout::Interleave: return rowMajor();
    case Layout::Padded:
      if (s.size() == 2 && !t.layout.args.empty()) return {t.layout.args[0], 1};
      return {};
    case Layout::Tiled:
      if (s.size() == 2 && t.layout.args.size() == 2 && t.layout.args[1] == s[1]) return rowMajor();
      return {};
    default: return {};
  }
}

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
  auto* i64 = b_.getInt64Ty();
  auto z = [&](V x) { return b_.CreateZExt(x, i64); };
  auto k = [&](int64_t x) { return b_.getInt64(uint64_t(x)); };
  const auto& s = t.shape;
  if (c.empty()) return k(0);
  const auto& a = t.layout.args;
  switch (t.layout.kind) {
    case Layout::ColMajor:
      if (s.size() == 2) return b_.CreateAdd(b_.CreateMul(z(c[1]), k(s[0])), z(c[0]));
      break;
    case Layout::Tiled:
      if (s.size() == 2 && a.size() == 2 && a[1] != s[1]) {
        const int64_t R = a[0], C = a[1];
        V tile = b_.CreateAdd(b_.CreateMul(z(b_.CreateUDiv(c[0], ci(R))), k(s[1] / C)), z(b_.CreateUDiv(c[1], ci(C))));
        V in = b_.CreateAdd(b_.CreateMul(z(b_.CreateURem(c[0], ci(R))), k(C)), z(b_.CreateURem(c[1], ci(C))));
        return b_.CreateAdd(b_.CreateMul(tile, k(R * C)), in);
      }
      break;
    case Layout::Swizzle:
      if (s.size() == 2 && !a.empty()) {
        // Row-major bytes; the 16-byte chunk within each B-byte span XOR (row % (B / 16)).
        const int64_t B = a[0], eb = dtypeBytes(t.dtype);
        V byte = b_.CreateMul(b_.CreateAdd(b_.CreateMul(z(c[0]), k(s[1])), z(c[1])), k(eb));
        V inSpan = b_.CreateURem(byte, k(B));
        V chunk = b_.CreateXor(b_.CreateUDiv(inSpan, k(16)), z(b_.CreateURem(c[0], ci(B / 16))));
        V moved = b_.CreateAdd(b_.CreateSub(byte, inSpan), b_.CreateAdd(b_.CreateMul(chunk, k(16)), b_.CreateURem(byte, k(16))));
        return b_.CreateUDiv(moved, k(eb));
      }
      break;
    default: break;
  }
  std::vector<int64_t> st = affineStrides(t);
  if (st.size() != c.size()) unsupported("the layout " + t.layout.str() + " of '" + t.name + "'");
  V off = k(0);
  for (size_t d = 0; d < c.size(); ++d) off = b_.CreateAdd(off, b_.CreateMul(z(c[d]), k(st[d])));
  return off;
}

}  // namespace mk::backend::tile
