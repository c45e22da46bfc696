// The streamed matvec loop, pattern-matched:
// `for k in .. by C { let xc = xn[k : +C]; acc += rowdot(load W[rows, k : +C], xc); ... }` with
// W streamed through the ring: each thread keeps its share of every rowdot's products in
// registers for the whole loop (flat 16-byte column f = tid + j * T of the [M, C] chunk, the
// same (row, column) pairs every iteration), each warp frees a ring slot as soon as it has read
// it, and the block reduces once after the loop. No barrier per iteration: warps run ahead
// within the ring, and the loader's copies overlap the compute of earlier chunks.
#include <llvm/IR/Intrinsics.h>

#include <algorithm>

#include "backend/tile/tile_gen.h"

namespace mk::backend::tile {

const Expr* TileGen::stripFloatCasts(const Expr* e) {
  while (e && e->kind == ExprKind::Cast && e->dtype == DType::F32 && !e->operands.empty() && e->operands[0] &&
         isFloat(e->operands[0]->dtype))
    e = e->operands[0].get();
  return e;
}

// Where the 1-D f32-representable operand `x` of length n can be read 16 bytes at a time.
std::optional<TileGen::VectorSource> TileGen::vectorSource(const Expr& x, const std::map<int, const Expr*>& aliases) {
  const Expr* e = stripFloatCasts(&x);
  if (!e || e->shape.size() != 1) return std::nullopt;
  if (e->kind == ExprKind::Local) {
    if (auto it = aliases.find(e->index); it != aliases.end()) e = it->second;
    else return fn_.locals.at(size_t(e->index)).shape.size() == 1 ? std::optional(VectorSource{e, nullptr, nullptr}) : std::nullopt;
  }
  if (e->kind == ExprKind::Slice) {
    const Expr* t = e->operands.empty() ? nullptr : e->operands[0].get();
    if (!t || t->kind != ExprKind::Local || t->shape.size() != 1 || e->region.size() != 1 || !e->region[0].start ||
        fn_.locals.at(size_t(t->index)).shape.size() != 1 || !isFloat(t->dtype))
      return std::nullopt;
    if (statics_.multipleOf(*e->region[0].start) % 4 != 0) return std::nullopt;  // f32: 16 bytes = 4
    return VectorSource{t, nullptr, e->region[0].start.get()};
  }
  if (e->kind == ExprKind::Load) {
    const ir::Tensor& t = tensorOf(e->index);
    if (!isFloat(t.dtype) || e->dtype != t.dtype || e->region.size() != 1 || t.shape.size() != 1 || !e->region[0].start ||
        t.layout.kind != Layout::RowMajor)
      return std::nullopt;
    if ((statics_.multipleOf(*e->region[0].start) * dtypeBytes(t.dtype)) % 16 != 0) return std::nullopt;
    return VectorSource{nullptr, e, nullptr};
  }
  return std::nullopt;
}

// The loop's parts when it has the streamed-matvec shape above, else nullopt.
std::optional<std::vector<TileGen::FusedRowdot>> TileGen::fusedRowdots(const Stmt& loopStmt, std::map<int, const Expr*>& aliases) {
  std::vector<FusedRowdot> parts;
  int accumulators = 0;
  for (const auto& st : loopStmt.body) {
    if (st->kind == StmtKind::Let && st->value && st->value->kind == ExprKind::Slice &&
        fn_.locals.at(size_t(st->slot)).shape.size() == 1) {
      aliases[st->slot] = st->value.get();
      continue;
    }
    if (!accumulatesRowdot(*st)) return std::nullopt;
    const Expr& rd = *st->value;
    const Expr* A = stripFloatCasts(rd.operands.size() == 2 ? rd.operands[0].get() : nullptr);
    if (!A || A->kind != ExprKind::Load || !v_.streamed.count(A) || A->shape.size() != 2) return std::nullopt;
    FusedRowdot f;
    f.stmt = st.get();
    f.weights = A;
    f.rows = A->shape[0];
    f.cols = A->shape[1];
    const DType wt = tensorOf(A->index).dtype;
    f.per = 16 / dtypeBytes(wt);
    if (!isFloat(wt) || f.cols % f.per != 0) return std::nullopt;
    f.vecsPerRow = f.cols / f.per;
    if (f.vecsPerRow % 32 != 0 && 32 % f.vecsPerRow != 0) return std::nullopt;
    f.seg = std::min<int64_t>(f.vecsPerRow, 32);
    auto x = vectorSource(*rd.operands[1], aliases);
    if (!x) return std::nullopt;
    if (x->tile && !aliases.count(stripFloatCasts(rd.operands[1].get())->index) && !x->start &&
        abi::shapeElements(fn_.locals.at(size_t(x->tile->index)).shape) != f.cols)
      return std::nullopt;
    f.x = *x;
    f.accumulators = int((f.rows * f.vecsPerRow + T() - 1) / T());
    accumulators += f.accumulators;
    parts.push_back(f);
  }
  // Past this many registers of partial sums the fused form would spill; the general path is slower but fits.
  if (parts.empty() || accumulators > 24) return std::nullopt;
  return parts;
}

// `per` consecutive elements from `base` (f32 in shared memory, or a float tensor's storage)
// at element offset `off`, as f32, in 16-byte loads.
std::vector<V> TileGen::loadRun(V base, DType storage, V off /*i64*/, int64_t per) {
  RowAccess a{base, storage, 0, true};
  std::vector<V> out;
  const int64_t perLoad = 16 / (storage == DType::F32 || storage == DType::I32 ? 4 : 2);
  for (int64_t i = 0; i < per; i += perLoad) {
    std::vector<V> w = loadVector(a, b_.CreateAdd(off, b_.getInt64(uint64_t(i))));
    out.insert(out.end(), w.begin(), w.end());
  }
  return out;
}

// An f32 run of 8 (two 16-byte loads) per lane in shared memory: lanes 32 bytes apart, so lanes
// i and i + 4 of a quarter warp would hit the same banks. Where `upperFirst` (the odd fours of a
// quarter warp), the lane reads its upper half first, which spreads each load over all 32
// banks; the caller pairs the values with its weights in the same order.
std::vector<V> TileGen::loadRunSpread(V base, V off /*i64*/, V upperFirst) {
  RowAccess a{base, DType::F32, 0, true};
  V upper = b_.CreateAdd(off, b_.getInt64(4));
  std::vector<V> out = loadVector(a, b_.CreateSelect(upperFirst, upper, off));
  std::vector<V> second = loadVector(a, b_.CreateSelect(upperFirst, off, upper));
  out.insert(out.end(), second.begin(), second.end());
  return out;
}

bool TileGen::fusedRowdotLoop(const Stmt& s) {
  std::map<int, const Expr*> aliases;
  auto parts = fusedRowdots(s, aliases);
  if (!parts) return false;
  V lane = b_.CreateURem(env_.tid, ci(32));
  V upperFirst = b_.CreateICmpNE(b_.CreateAnd(lane, ci(4)), ci(0));
  std::vector<std::vector<llvm::AllocaInst*>> sums(parts->size());
  for (size_t p = 0; p < parts->size(); ++p)
    for (int j = 0; j < (*parts)[p].accumulators; ++j) {
      sums[p].push_back(entryAlloca(f32()));
      b_.CreateStore(cf(0), sums[p].back());
    }
  V lo = convert(s.lo->dtype, DType::I32, scalar(*s.lo)), hi = convert(s.hi->dtype, DType::I32, scalar(*s.hi));
  const DType counterType = fn_.locals.at(size_t(s.slot)).dtype;
  // A vector read from global memory chunk by chunk would put a load's latency in every
  // iteration of every warp: copy the loop's whole run of it to shared memory first.
  top_ = localsEnd_;
  std::map<const Expr*, V> staged;  // x load -> its copy's element at lo
  for (const FusedRowdot& f : *parts) {
    if (!f.x.load || staged.count(f.x.load)) continue;
    const Expr& start = *f.x.load->region[0].start;
    if (start.kind != ExprKind::Local || start.index != s.slot || s.lo->kind != ExprKind::Const ||
        s.hi->kind != ExprKind::Const || s.step != f.cols)
      continue;
    const ir::Tensor& t = tensorOf(f.x.load->index);
    const int64_t first = int64_t(s.lo->value), bytes = (int64_t(s.hi->value) - first) * dtypeBytes(t.dtype);
    if (bytes <= 0 || bytes > kStagedBytes || bytes % 16 != 0 || (first * dtypeBytes(t.dtype)) % 16 != 0) continue;
    V dst = allocTemp((bytes + 3) / 4, DType::F32).base;
    V src = at(t.dtype, args_.params[size_t(f.x.load->index)], physOffset(t, {ci(first)}));
    auto* v4 = llvm::FixedVectorType::get(i32(), 4);
    auto piece = [&](V base, V i) { return b_.CreateGEP(b_.getInt8Ty(), base, b_.CreateMul(i, ci(16))); };
    forEachElement(bytes / 16, [&](V i) { return static_cast<V>(b_.CreateAlignedLoad(v4, piece(src, i), llvm::Align(16))); },
                   [&](V i, V x) { b_.CreateAlignedStore(x, piece(dst, i), llvm::Align(16)); });
    staged[f.x.load] = dst;
  }
  if (!staged.empty()) barrier();
  const int64_t floor = top_;  // the staged copies stay while any warp is still in the loop
  loop(lo, hi, ci(s.step), [&](V k) {
    writeScalarLocal(s.slot, convert(DType::I32, counterType, k));
    for (size_t p = 0; p < parts->size(); ++p) {
      const FusedRowdot& f = (*parts)[p];
      beginStatement();
      top_ = floor;
      std::vector<V> slots = acquireSlots(*f.stmt);
      V wBase = ring_.at(f.weights);
      const DType wt = tensorOf(f.weights->index).dtype;
      V xBase;
      DType xt = DType::F32;
      if (f.x.tile) {
        xBase = localTile(f.x.tile->index).base;
        if (f.x.start) xBase = b_.CreateGEP(f32(), xBase, convert(f.x.start->dtype, DType::I32, scalar(*f.x.start)));
      } else if (auto it = staged.find(f.x.load); it != staged.end()) {
        xt = tensorOf(f.x.load->index).dtype;
        xBase = at(xt, it->second, b_.CreateZExt(b_.CreateSub(k, lo), b_.getInt64Ty()));
      } else {
        const ir::Tensor& t = tensorOf(f.x.load->index);
        xt = t.dtype;
        xBase = at(t.dtype, args_.params[size_t(f.x.load->index)], physOffset(t, starts(f.x.load->region)));
      }
      const int64_t total = f.rows * f.vecsPerRow;
      for (int j = 0; j < f.accumulators; ++j) {
        V flat = b_.CreateAdd(env_.tid, ci(int64_t(j) * T()));
        auto body = [&] {
          V row = b_.CreateUDiv(flat, ci(f.vecsPerRow));
          V col = b_.CreateMul(b_.CreateURem(flat, ci(f.vecsPerRow)), ci(f.per));
          V col64 = b_.CreateZExt(col, b_.getInt64Ty());
          V wOff = b_.CreateAdd(b_.CreateMul(b_.CreateZExt(row, b_.getInt64Ty()), b_.getInt64(uint64_t(f.cols))), col64);
          // 16-bit weights against an f32 vector: 8 of each per lane, the vector's read spread
          // over the banks (the weights' halves swapped to match).
          const bool spread = xt == DType::F32 && f.per == 8 && dtypeBytes(wt) == 2;
          std::vector<V> w = spread ? loadVector(RowAccess{wBase, wt, 0, true}, wOff, upperFirst) : loadRun(wBase, wt, wOff, f.per);
          std::vector<V> xv = spread ? loadRunSpread(xBase, col64, upperFirst) : loadRun(xBase, xt, col64, f.per);
          V acc = b_.CreateLoad(f32(), sums[p][size_t(j)]);
          for (int64_t e = 0; e < f.per; ++e)
            acc = b_.CreateIntrinsic(llvm::Intrinsic::fma, {f32()}, {w[size_t(e)], xv[size_t(e)], acc});
          b_.CreateStore(acc, sums[p][size_t(j)]);
        };
        if (env_.ablateMath) continue;
        if (int64_t(j + 1) * T() <= total) body();
        else when(b_.CreateICmpULT(flat, ci(total)), body);
      }
      // This warp is done with the slots: free them without waiting for the other warps.
      releaseSlots(slots, /*warpDone=*/false);
    }
  });
  // One reduction per rowdot: lanes of a segment (one row's columns within a warp) butterfly,
  // the segments' sums go to shared memory, and each row adds its segments in order. (Above
  // the staged copies: other warps may still be reading them.)
  top_ = floor;
  std::vector<TileRef> partials;
  for (size_t p = 0; p < parts->size(); ++p) {
    const FusedRowdot& f = (*parts)[p];
    const int64_t total = f.rows * f.vecsPerRow;
    TileRef part = allocTemp(total / f.seg, DType::F32);
    partials.push_back(part);
    for (int j = 0; j < f.accumulators; ++j) {
      V flat = b_.CreateAdd(env_.tid, ci(int64_t(j) * T()));
      V sum = b_.CreateLoad(f32(), sums[p][size_t(j)]);
      for (int mask = int(f.seg) / 2; mask >= 1; mask /= 2) sum = b_.CreateFAdd(sum, env_.target->shuffleXor(b_, sum, mask));
      V writes = b_.CreateAnd(b_.CreateICmpEQ(b_.CreateURem(lane, ci(f.seg)), ci(0)), b_.CreateICmpULT(flat, ci(total)));
      when(writes, [&] { writeTile(part, b_.CreateUDiv(flat, ci(f.seg)), sum); });
    }
  }
  barrier();
  for (size_t p = 0; p < parts->size(); ++p) {
    const FusedRowdot& f = (*parts)[p];
    const int64_t segsPerRow = f.vecsPerRow / f.seg;
    TileRef acc = localTile(f.stmt->slot);
    forEachElement(f.rows, [&](V m) {
      V sum = cf(0);
      for (int64_t q = 0; q < segsPerRow; ++q)
        sum = b_.CreateFAdd(sum, readTile(partials[p], b_.CreateAdd(b_.CreateMul(m, ci(segsPerRow)), ci(q))));
      writeTile(acc, m, b_.CreateFAdd(readTile(acc, m), sum));
    });
  }
  barrier();
  // A ring wait that failed set the abort flag; every compute thread is past the barrier.
  V abort = b_.CreateLoad(i32(), smemPtr(env_, ci(SmemLayout::kAbortFlag)));
  auto* go = newBlock("fused.ok");
  b_.CreateCondBr(b_.CreateICmpNE(abort, ci(0)), env_.exit, go);
  b_.SetInsertPoint(go);
  beginStatement();
  return true;
}

}  // namespace mk::backend::tile
