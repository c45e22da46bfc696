// mma: c[M, N] = a[M, K] b[K, N]; mma_nt: c[M, N] = a[M, K] b[N, K]^T. Two lowerings:
// - on the target's matrix instruction (Target::mmaStep: mma.sync m16n8k16 on NVPTX, MFMA
//   16x16x16 on AMDGPU) where the operands are bf16 or f16 and the shape is a multiple of its
//   block (ir::mmaMisfit): the operands are staged in shared memory at their 16-bit dtype, k
//   contiguous, and each warp (wave) keeps the accumulators of its output blocks in registers
//   over all of K;
// - otherwise on CUDA cores / VALU, every target alike (f32 operands, any shape).
// Both are in today's value model: the result is an f32 shared-memory tile.
#include <llvm/IR/Intrinsics.h>

#include <algorithm>

#include "backend/tile/tile_gen.h"

namespace mk::backend::tile {

// The staged operands' rows: K elements and 16 bytes of padding, an odd number of 16-byte units
// since K is a multiple of 16, so the eight rows one fragment load touches start on distinct banks.
TileGen::TileRef TileGen::matrixInstructionMma(const Expr& a, const Expr& b, bool nt, int64_t M, int64_t N, int64_t K) {
  const Target& tg = *env_.target;
  const ir::MmaShape& shape = tg.arch().mma;
  const int64_t ld = K + 8;
  const DType dt = a.dtype;
  auto stage = [&](int64_t rows) {
    V base = tilePtr(top_);
    top_ += align16(rows * ld * 2);
    peak_ = std::max(peak_, top_ - SmemLayout::kTiles);
    return base;
  };
  V sa = stage(M), sb = stage(N);
  auto put16 = [&](V base, V row, V col, V x) {
    storeStorage(dt, b_.CreateGEP(b_.getInt16Ty(), base, b_.CreateAdd(b_.CreateMul(row, ci(ld)), col)), x);
  };
  forEachElement(M * K, [&](V i) { return elem(a, i); },
                 [&](V i, V x) { put16(sa, b_.CreateUDiv(i, ci(K)), b_.CreateURem(i, ci(K)), x); });
  // b is written transposed for mma (b[k, n] -> row n), as read for mma_nt.
  const int64_t bCols = nt ? K : N;
  forEachElement(N * K, [&](V i) { return elem(b, i); }, [&](V i, V x) {
    V r = b_.CreateUDiv(i, ci(bCols)), c = b_.CreateURem(i, ci(bCols));
    put16(sb, nt ? r : c, nt ? c : r, x);
  });
  barrier();

  // Each warp takes output strips of `blocks` blocks side by side (the a fragment is loaded once a
  // k step for all of them), strip s at rows (s / strips across) * m, round-robin over the warps.
  const int64_t blocksAcross = N / shape.n;
  const int blocks = blocksAcross % 4 == 0 ? 4 : blocksAcross % 2 == 0 ? 2 : 1;
  const int64_t stripsAcross = blocksAcross / blocks, strips = M / shape.m * stripsAcross;
  const int ws = tg.warpSize(), perBlock = tg.mmaAccumulators();
  TileRef out = allocTemp(M * N, DType::F32);
  V warp = b_.CreateUDiv(env_.tid, ci(ws)), lane = b_.CreateURem(env_.tid, ci(ws));
  std::vector<llvm::AllocaInst*> slots;
  for (int j = 0; j < blocks * perBlock; ++j) slots.push_back(entryAlloca(f32()));
  Target::MmaOperands ops{dt, sa, ld, sb, ld};
  loop(warp, ci(strips), ci(T() / ws), [&](V s) {
    V m0 = b_.CreateMul(b_.CreateUDiv(s, ci(stripsAcross)), ci(shape.m));
    V n0 = b_.CreateMul(b_.CreateURem(s, ci(stripsAcross)), ci(shape.n * blocks));
    for (auto* slot : slots) b_.CreateStore(cf(0), slot);
    loop(ci(0), ci(K), ci(shape.k), [&](V k0) {
      std::vector<V> acc;
      for (auto* slot : slots) acc.push_back(b_.CreateLoad(f32(), slot));
      tg.mmaStep(b_, ops, lane, m0, n0, k0, blocks, acc);
      for (size_t j = 0; j < slots.size(); ++j) b_.CreateStore(acc[j], slots[j]);
    });
    for (int blk = 0; blk < blocks; ++blk)
      for (int j = 0; j < perBlock; ++j) {
        auto [r, c] = tg.mmaAccumulatorAt(b_, lane, j);
        V col = b_.CreateAdd(b_.CreateAdd(n0, ci(blk * shape.n)), c);
        writeTile(out, b_.CreateAdd(b_.CreateMul(b_.CreateAdd(m0, r), ci(N)), col),
                  b_.CreateLoad(f32(), slots[size_t(blk * perBlock + j)]));
      }
  });
  barrier();
  return out;
}

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
  if (a.dtype == b.dtype && env_.target->hasMma(a.dtype) && !ir::mmaMisfit(env_.target->arch(), M, N, K))
    return matrixInstructionMma(a, b, nt, M, N, K);
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
