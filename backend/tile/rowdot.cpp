// rowdot: y[M] = A[M, K] x[K], in two strategies (the flat list of 16-byte pieces for short
// rows, rows per warp otherwise) over the ways a row can be read (RowAccess).
#include <llvm/IR/Intrinsics.h>

#include <algorithm>

#include "backend/tile/tile_gen.h"

namespace mk::backend::tile {

TileGen::RowAccess TileGen::rowAccess(const Expr& A, int64_t K) {
  const Expr* m = &A;
  // A cast to f32 of a float value changes nothing in the f32 representation.
  while (m->kind == ExprKind::Cast && m->dtype == DType::F32 && !m->operands.empty() && m->operands[0] &&
         isFloat(m->operands[0]->dtype))
    m = m->operands[0].get();
  RowAccess r;
  // Shared-memory tiles hold every float as f32.
  if (auto it = tiles_.find(m); it != tiles_.end() && isFloat(it->second.dtype)) return {it->second.base, DType::F32, K, K % 4 == 0};
  if (m->kind == ExprKind::Local && !fn_.locals.at(size_t(m->index)).shape.empty()) {
    TileRef t = localTile(m->index);
    if (isFloat(t.dtype)) return {t.base, DType::F32, K, K % 4 == 0};
    return r;
  }
  if (m->kind != ExprKind::Load) return r;
  const ir::Tensor& t = tensorOf(m->index);
  if (!isFloat(t.dtype) || m->dtype != t.dtype) return r;
  if (auto it = ring_.find(m); it != ring_.end())
    return {it->second, t.dtype, K, t.dtype != DType::F32 ? K % 8 == 0 : K % 4 == 0};
  // One whole tile of a tiled(R, C) layout, read from global memory (no ring): R contiguous
  // rows of C = K elements from a 16-byte aligned start.
  if (wholeTileBytes(*m, t, statics_) > 0)
    return {at(t.dtype, args_.params[size_t(m->index)], physOffset(t, starts(m->region))), t.dtype, K,
            (K * dtypeBytes(t.dtype)) % 16 == 0};
  std::vector<int64_t> st = affineStrides(t);
  if (st.size() != m->region.size()) return r;
  // The two dims of length > 0: rows, then the contiguous last dim of the tensor.
  std::vector<size_t> dims;
  for (size_t d = 0; d < m->region.size(); ++d)
    if (m->region[d].length > 0) dims.push_back(d);
  if (dims.size() != 2 || dims[1] != m->region.size() - 1) return r;
  std::vector<V> s = starts(m->region);
  r.base = at(t.dtype, args_.params[size_t(m->index)], physOffset(t, s));
  r.storage = t.dtype;
  r.stride = st[dims[0]];
  const int64_t eb = dtypeBytes(t.dtype), per = 16 / eb;
  bool aligned = K % per == 0 && (r.stride * eb) % 16 == 0;
  for (size_t d = 0; d < m->region.size() && aligned; ++d)
    aligned = (statics_.multipleOf(*m->region[d].start) * st[d] * eb) % 16 == 0;
  r.vector = aligned;
  return r;
}

// Loads `n` consecutive elements (16 bytes) as f32 values; where `swapHalves`, the upper 8 bytes'
// elements come first.
std::vector<V> TileGen::loadVector(const RowAccess& a, V elemOffset /*i64*/, V swapHalves) {
  const int n = 16 / int(a.storage == DType::F32 || a.storage == DType::I32 ? 4 : 2);
  V p = at(a.storage, a.base, elemOffset);
  auto* vt = llvm::FixedVectorType::get(b_.getInt32Ty(), 4);
  V ld = b_.CreateAlignedLoad(vt, p, llvm::Align(16));
  if (swapHalves) ld = b_.CreateSelect(swapHalves, b_.CreateShuffleVector(ld, {2, 3, 0, 1}), ld);
  std::vector<V> out;
  for (int w = 0; w < 4; ++w) {
    V word = b_.CreateExtractElement(ld, uint64_t(w));
    if (n == 4) {
      out.push_back(b_.CreateBitCast(word, f32()));
      continue;
    }
    V lo = b_.CreateTrunc(word, b_.getInt16Ty()), hi = b_.CreateTrunc(b_.CreateLShr(word, ci(16)), b_.getInt16Ty());
    for (V h : {lo, hi}) out.push_back(widenStorage(b_, a.storage, h));
  }
  return out;
}

// y[M] = A[M, K] x[K] over the flat list of the matrix's 16-byte pieces: piece f = tid + j * T
// is row f / P, columns (f % P) * per .. (P pieces per row), so every thread has work even when
// rows are short (an attention chunk's 64-element key rows: 8 pieces). The lanes of a row's
// segment of a warp butterfly-sum, the segments' sums go to shared memory, each row adds its
// segments. False (nothing emitted) when the rows are not 16-byte pieces that tile a warp.
bool TileGen::flatRowdot(const RowAccess& acc, int64_t M, int64_t K, const Expr& x, const std::function<void(V, V)>& put) {
  if (!acc.base || !acc.vector) return false;
  const int64_t per = acc.storage == DType::F32 || acc.storage == DType::I32 ? 4 : 8;
  const int64_t pieces = K / per, total = M * pieces;
  if (K % per != 0 || (pieces % 32 != 0 && 32 % pieces != 0)) return false;
  const int64_t rounds = (total + T() - 1) / T();
  if (rounds > 4) return false;  // long rows: the row-per-warp form keeps fewer sums live
  const int64_t seg = std::min<int64_t>(pieces, 32);
  TileRef part = allocTemp(total / seg, DType::F32);
  V lane = b_.CreateURem(env_.tid, ci(32));
  // Every round's load first, unconditionally (a thread past the end of a partial round reads
  // piece 0 and drops it): one memory round trip for the whole rowdot instead of one a round.
  struct Round {
    V flat, in, col;
    std::vector<V> w;
  };
  std::vector<Round> issued(static_cast<size_t>(rounds));
  for (int64_t j = 0; j < rounds; ++j) {
    Round& r = issued[size_t(j)];
    r.flat = b_.CreateAdd(env_.tid, ci(j * T()));
    const bool full = (j + 1) * T() <= total;
    r.in = full ? b_.getTrue() : b_.CreateICmpULT(r.flat, ci(total));
    V piece = full ? r.flat : b_.CreateSelect(r.in, r.flat, ci(0));
    V row = b_.CreateUDiv(piece, ci(pieces));
    r.col = b_.CreateMul(b_.CreateURem(piece, ci(pieces)), ci(per));
    r.w = loadVector(acc, b_.CreateAdd(b_.CreateMul(b_.CreateZExt(row, b_.getInt64Ty()), b_.getInt64(uint64_t(acc.stride))),
                                       b_.CreateZExt(r.col, b_.getInt64Ty())));
  }
  for (const Round& r : issued) {
    V s = cf(0);
    for (int64_t e = 0; e < per; ++e)
      s = b_.CreateIntrinsic(llvm::Intrinsic::fma, {f32()},
                             {r.w[size_t(e)], convert(x.dtype, DType::F32, elem(x, b_.CreateAdd(r.col, ci(e)))), s});
    s = b_.CreateSelect(r.in, s, cf(0));
    // Every lane shuffles (lanes past the end hold 0), so the warp stays converged.
    for (int mask = int(seg) / 2; mask >= 1; mask /= 2) s = b_.CreateFAdd(s, env_.target->shuffleXor(b_, s, mask));
    when(b_.CreateAnd(r.in, b_.CreateICmpEQ(b_.CreateURem(lane, ci(seg)), ci(0))),
         [&] { writeTile(part, b_.CreateUDiv(r.flat, ci(seg)), s); });
  }
  barrier();
  const int64_t segsPerRow = pieces / seg;
  forEachElement(M, [&](V m) {
    V s = cf(0);
    for (int64_t q = 0; q < segsPerRow; ++q) s = b_.CreateFAdd(s, readTile(part, b_.CreateAdd(b_.CreateMul(m, ci(segsPerRow)), ci(q))));
    put(m, s);
  });
  barrier();
  return true;
}

// y[M] = A[M, K] x[K]: whole rows go to warps round-robin while every warp gets one; the
// M % W rows left over are split across all W warps (W / left warps per row, partial sums in
// shared memory), so no warp does much more than M / W rows. Lanes stride over a row with
// 16-byte loads where the rows allow, f32 fma, then a butterfly sum.
// With `into`, adds the result to that f32 tile instead (`acc += rowdot(...)` without a
// temporary, its barrier and a second pass).
TileGen::TileRef TileGen::rowdot(const Expr& e, const TileRef* into) {
  const Expr& A = operand(e, 0);
  const Expr& x = operand(e, 1);
  if (A.shape.size() != 2) unsupported("rowdot of a matrix of rank " + std::to_string(A.shape.size()));
  const int64_t M = A.shape[0], K = A.shape[1];
  const int W = T() / 32;
  const int64_t whole = M / W * W, left = M - whole;
  const int g = left > 0 ? W / int(left) : 1;  // warps per left-over row
  TileRef out = into ? *into : allocTemp(M, e.dtype);
  // Row m's result: stored, or added to the accumulator.
  auto put = [&](V m, V s) {
    if (into) writeTile(out, m, b_.CreateFAdd(readTile(out, m), s));
    else writeTile(out, m, convert(DType::F32, e.dtype, s));
  };
  RowAccess acc = rowAccess(A, K);
  V lane = b_.CreateURem(env_.tid, ci(32)), warp = b_.CreateUDiv(env_.tid, ci(32));
  if (flatRowdot(acc, M, K, x, put)) return out;
  TileRef partial = g > 1 ? allocTemp(left * g, DType::F32) : TileRef{};

  // The sum over stripe `part` of `parts` of row m, in every lane of the warp.
  auto rowSum = [&](V m, V part, int parts) {
    auto* sum = entryAlloca(f32());
    b_.CreateStore(cf(0), sum);
    V rowBase = b_.CreateMul(b_.CreateZExt(m, b_.getInt64Ty()), b_.getInt64(uint64_t(acc.stride)));
    if (acc.base && acc.vector) {
      const int per = acc.storage == DType::F32 || acc.storage == DType::I32 ? 4 : 8;
      V first = b_.CreateMul(b_.CreateAdd(b_.CreateMul(part, ci(32)), lane), ci(per));
      loop(first, ci(K), ci(int64_t(per) * 32 * parts), [&](V k) {
        std::vector<V> w = loadVector(acc, b_.CreateAdd(rowBase, b_.CreateZExt(k, b_.getInt64Ty())));
        V s = b_.CreateLoad(f32(), sum);
        for (int j = 0; j < per; ++j) {
          V xj = convert(x.dtype, DType::F32, elem(x, b_.CreateAdd(k, ci(j))));
          s = b_.CreateIntrinsic(llvm::Intrinsic::fma, {f32()}, {w[size_t(j)], xj, s});
        }
        b_.CreateStore(s, sum);
      });
    } else {
      loop(b_.CreateAdd(b_.CreateMul(part, ci(32)), lane), ci(K), ci(32 * parts), [&](V k) {
        V a = acc.base ? loadStorage(acc.storage, at(acc.storage, acc.base, b_.CreateAdd(rowBase, b_.CreateZExt(k, b_.getInt64Ty()))))
                       : elem(A, b_.CreateAdd(b_.CreateMul(m, ci(K)), k));
        a = convert(acc.base ? acc.storage : A.dtype, DType::F32, a);
        V xk = convert(x.dtype, DType::F32, elem(x, k));
        b_.CreateStore(b_.CreateIntrinsic(llvm::Intrinsic::fma, {f32()}, {a, xk, b_.CreateLoad(f32(), sum)}), sum);
      });
    }
    V s = b_.CreateLoad(f32(), sum);
    for (int mask = 16; mask >= 1; mask /= 2) s = b_.CreateFAdd(s, env_.target->shuffleXor(b_, s, mask));
    return s;
  };

  if (whole > 0) {
    loop(warp, ci(whole), ci(W), [&](V m) {
      V s = rowSum(m, ci(0), 1);
      when(b_.CreateICmpEQ(lane, ci(0)), [&] { put(m, s); });
    }, /*unroll=*/1);  // rows are independent: unrolling them only multiplies live registers
  }
  if (left > 0) {
    V slot = b_.CreateUDiv(warp, ci(g)), part = b_.CreateURem(warp, ci(g));
    when(b_.CreateICmpULT(slot, ci(left)), [&] {
      V m = b_.CreateAdd(slot, ci(whole));
      V s = rowSum(m, part, g);
      when(b_.CreateICmpEQ(lane, ci(0)), [&] {
        if (g == 1) put(m, s);
        else writeTile(partial, b_.CreateAdd(b_.CreateMul(slot, ci(g)), part), s);
      });
    });
  }
  barrier();
  if (g > 1) {
    forEachElement(left, [&](V r) {
      V s = cf(0);
      for (int j = 0; j < g; ++j) s = b_.CreateFAdd(s, readTile(partial, b_.CreateAdd(b_.CreateMul(r, ci(g)), ci(j))));
      put(b_.CreateAdd(r, ci(whole)), s);
    });
    barrier();
  }
  return out;
}

}  // namespace mk::backend::tile
