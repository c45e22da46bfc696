// coldot: y[K] = A[M, K]^T x[M].
#include <llvm/IR/Intrinsics.h>

#include <algorithm>

#include "backend/tile/tile_gen.h"

namespace mk::backend::tile {

// y[K] = A[M, K]^T x[M]. Rows of 16-byte pieces: thread (g, c) sums column piece c over rows
// g, g + G, ... (G row groups, as many as the threads and a bounded scratch allow), then each
// column adds its G partial sums. Otherwise one thread per column, sequential over the rows.
TileGen::TileRef TileGen::coldot(const Expr& e) {
  const Expr& A = operand(e, 0);
  const Expr& y = operand(e, 1);
  if (A.shape.size() != 2) unsupported("coldot of a matrix of rank " + std::to_string(A.shape.size()));
  const int64_t M = A.shape[0], K = A.shape[1];
  TileRef out = allocTemp(K, e.dtype);
  RowAccess acc = rowAccess(A, K);
  const int64_t per = acc.storage == DType::F32 || acc.storage == DType::I32 ? 4 : 8;
  const int64_t pieces = K / per;
  // Row groups: thread tid reads column piece tid % pieces of rows tid / pieces + r * groups.
  const int64_t groups = pieces > 0 ? std::min<int64_t>(int64_t(T()) / pieces, M) : 0;
  if (acc.base && acc.vector && K % per == 0 && groups >= 2) {
    const int64_t rows = (M + groups - 1) / groups, active = groups * pieces;
    // The groups of one warp add up with shuffles first, so shared memory holds one partial a warp.
    const int64_t inWarp = pieces < 32 && 32 % pieces == 0 ? 32 / pieces : 1;
    const int64_t partials = (groups + inWarp - 1) / inWarp;
    TileRef part = allocTemp(partials * K, DType::F32);
    V busy = b_.CreateICmpULT(env_.tid, ci(active));
    V g = b_.CreateUDiv(env_.tid, ci(pieces));
    V col = b_.CreateMul(b_.CreateURem(env_.tid, ci(pieces)), ci(per));
    // A batch of rows: every row's load before the first product, one memory round trip, not
    // one per row. A thread with no row there reads row 0 and weighs it 0.
    std::vector<llvm::AllocaInst*> sumSlots;
    for (int64_t j = 0; j < per; ++j) {
      sumSlots.push_back(entryAlloca(f32()));
      b_.CreateStore(cf(0), sumSlots.back());
    }
    auto batch = [&](V firstRow /*this thread's first row of the batch*/, int64_t count, bool inRange) {
      std::vector<std::vector<V>> w(static_cast<size_t>(count));
      std::vector<V> weight(static_cast<size_t>(count));
      for (int64_t r = 0; r < count; ++r) {
        V m = b_.CreateAdd(firstRow, ci(r * groups));
        V ok = inRange ? busy : b_.CreateAnd(busy, b_.CreateICmpULT(m, ci(M)));
        V row = b_.CreateSelect(ok, m, ci(0));
        w[size_t(r)] = loadVector(acc, b_.CreateAdd(b_.CreateMul(b_.CreateZExt(row, b_.getInt64Ty()), b_.getInt64(uint64_t(acc.stride))),
                                                    b_.CreateZExt(col, b_.getInt64Ty())));
        weight[size_t(r)] = b_.CreateSelect(ok, convert(y.dtype, DType::F32, elem(y, row)), cf(0));
      }
      std::vector<V> x;
      for (auto* slot : sumSlots) x.push_back(b_.CreateLoad(f32(), slot));
      for (int64_t r = 0; r < count; ++r)
        for (int64_t j = 0; j < per; ++j)
          x[size_t(j)] = b_.CreateIntrinsic(llvm::Intrinsic::fma, {f32()}, {w[size_t(r)][size_t(j)], weight[size_t(r)], x[size_t(j)]});
      for (int64_t j = 0; j < per; ++j) b_.CreateStore(x[size_t(j)], sumSlots[size_t(j)]);
    };
    // Up to 8 rows a thread in one batch (32 words of loads in flight); more rows in a loop of
    // such batches, so the registers stay bounded.
    constexpr int64_t kBatchRows = 8;
    if (rows <= kBatchRows) batch(g, rows, rows * groups <= M);
    else loop(ci(0), ci(rows), ci(kBatchRows), [&](V r0) { batch(b_.CreateAdd(g, b_.CreateMul(r0, ci(groups))), kBatchRows, false); }, /*unroll=*/1);
    std::vector<V> sums;
    for (auto* slot : sumSlots) sums.push_back(b_.CreateLoad(f32(), slot));
    for (int64_t mask = pieces; inWarp > 1 && mask < 32; mask *= 2)
      for (V& x : sums) x = b_.CreateFAdd(x, env_.target->shuffleXor(b_, x, int(mask)));
    when(b_.CreateAnd(busy, b_.CreateICmpEQ(b_.CreateURem(g, ci(inWarp)), ci(0))), [&] {
      V base = b_.CreateAdd(b_.CreateMul(b_.CreateUDiv(g, ci(inWarp)), ci(K)), col);
      for (int64_t j = 0; j < per; ++j) writeTile(part, b_.CreateAdd(base, ci(j)), sums[size_t(j)]);
    });
    barrier();
    forEachElement(K, [&](V k) {
      V s = cf(0);
      for (int64_t q = 0; q < partials; ++q) s = b_.CreateFAdd(s, readTile(part, b_.CreateAdd(ci(q * K), k)));
      writeTile(out, k, convert(DType::F32, e.dtype, s));
    });
    barrier();
    return out;
  }
  forEachElement(K, [&](V k) {
    V s = cf(0);
    auto* sum = entryAlloca(f32());
    b_.CreateStore(s, sum);
    loop(ci(0), ci(M), ci(1), [&](V m) {
      V a = convert(A.dtype, DType::F32, elem(A, b_.CreateAdd(b_.CreateMul(m, ci(K)), k)));
      V ym = convert(y.dtype, DType::F32, elem(y, m));
      b_.CreateStore(b_.CreateIntrinsic(llvm::Intrinsic::fma, {f32()}, {a, ym, b_.CreateLoad(f32(), sum)}), sum);
    }, /*unroll=*/4);
    writeTile(out, k, convert(DType::F32, e.dtype, b_.CreateLoad(f32(), sum)));
  });
  barrier();
  return out;
}

}  // namespace mk::backend::tile
