// mma: c[M, N] = a[M, K] b[K, N]; mma_nt: c[M, N] = a[M, K] b[N, K]^T. The scalar (CUDA-core /
// VALU) lowering every target shares, in today's value model (f32 shared-memory tiles). The
// tensor-core lowerings (mma.sync and wgmma on NVPTX, MFMA on AMDGPU) will sit in per-target
// files behind the target interface, chosen where the operands fit the target's fragment shape
// (ir::ArchDesc::mma, ir/targets.cpp); this stays the fallback.
#include <llvm/IR/Intrinsics.h>

#include "backend/tile/tile_gen.h"

namespace mk::backend::tile {

// Each operand is read M*N*K / (its size) times, so it is first written once into an f32
// shared-memory tile (unless it already is one); then thread i % T computes output i, summing
// over k in increasing order from 0 with one fma a term: the interpreter's order, so the
// results are bit-identical to it.
TileGen::TileRef TileGen::mma(const Expr& e) {
  const Expr& a = operand(e, 0);
  const Expr& b = operand(e, 1);
  const bool nt = e.kind == ExprKind::MmaNt;
  if (a.shape.size() != 2 || b.shape.size() != 2 || a.shape[1] != b.shape[nt ? 1 : 0])
    unsupported(std::string(nt ? "mma_nt" : "mma") + " of shapes " + abi::shapeString(a.shape) + " and " +
                abi::shapeString(b.shape));
  const int64_t M = a.shape[0], K = a.shape[1], N = b.shape[nt ? 0 : 1];
  bool staged = false;
  auto tileOf = [&](const Expr& x) -> TileRef {
    if (auto it = tiles_.find(&x); it != tiles_.end() && isFloat(it->second.dtype)) return it->second;
    if (x.kind == ExprKind::Local && x.dtype == fn_.locals.at(size_t(x.index)).dtype && !x.shape.empty())
      return localTile(x.index);
    TileRef t = allocTemp(abi::shapeElements(x.shape), DType::F32);
    forEachElement(abi::shapeElements(x.shape), [&](V i) { return convert(x.dtype, DType::F32, elem(x, i)); },
                   [&](V i, V v) { writeTile(t, i, v); });
    staged = true;
    return t;
  };
  TileRef ta = tileOf(a), tb = tileOf(b);
  if (staged) barrier();
  TileRef out = allocTemp(M * N, e.dtype);
  forEachElement(M * N, [&](V i) {
    V m = b_.CreateUDiv(i, ci(N)), n = b_.CreateURem(i, ci(N));
    V rowA = b_.CreateMul(m, ci(K));
    auto* sum = entryAlloca(f32());
    b_.CreateStore(cf(0), sum);
    loop(ci(0), ci(K), ci(1), [&](V k) {
      V x = readTile(ta, b_.CreateAdd(rowA, k));
      V y = readTile(tb, nt ? b_.CreateAdd(b_.CreateMul(n, ci(K)), k) : b_.CreateAdd(b_.CreateMul(k, ci(N)), n));
      b_.CreateStore(b_.CreateIntrinsic(llvm::Intrinsic::fma, {f32()}, {x, y, b_.CreateLoad(f32(), sum)}), sum);
    }, /*unroll=*/4);
    writeTile(out, i, convert(DType::F32, e.dtype, b_.CreateLoad(f32(), sum)));
  });
  barrier();
  return out;
}

}  // namespace mk::backend::tile
