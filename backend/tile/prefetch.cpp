// Prefetching for loads that do not stream through the ring: at the task's start, the loads
// whose regions follow from the task's indices; in a loop, the next iteration's.
#include <algorithm>

#include "backend/tile/tile_gen.h"

namespace mk::backend::tile {

// Whether scalar `e` follows from the task's indices alone, or also from the scalar local
// `loopSlot` (a loop variable; -1: none).
bool TileGen::fromIndices(const Expr& e, int loopSlot) {
  if (e.kind == ExprKind::Local) return loopSlot >= 0 && e.index == loopSlot && e.shape.empty();
  if (e.kind != ExprKind::Const && e.kind != ExprKind::TaskIndex && e.kind != ExprKind::Binary &&
      e.kind != ExprKind::Unary && e.kind != ExprKind::Cast)
    return false;
  for (const auto& o : e.operands)
    if (!o || !fromIndices(*o, loopSlot)) return false;
  return e.shape.empty();
}
// Each load whose region is known from the task's indices alone (and that does not stream
// through the ring) is brought towards the SM when the task starts, so the statement that
// reads it later (a matvec's residual, the combine's partials) finds it close instead of
// waiting out a round trip to L2. The waits are done: what it brings is what the task reads.
void TileGen::prefetchLoads() {
  std::vector<const Expr*> loads;
  std::function<void(const Expr*)> expr = [&](const Expr* e) {
    if (!e) return;
    for (const auto& o : e->operands) expr(o.get());
    for (const auto& r : e->region) expr(r.start.get());
    if (e->kind == ExprKind::Load && !v_.streamed.count(e) && !e->region.empty() &&
        std::all_of(e->region.begin(), e->region.end(), [](const ir::RegionDim& r) { return r.start && fromIndices(*r.start); }))
      loads.push_back(e);
  };
  // Not under an `if`: a branch not taken may guard a region that is out of bounds.
  std::function<void(const ir::Block&)> walk = [&](const ir::Block& body) {
    for (const auto& st : body) {
      if (st->kind == StmtKind::If) continue;
      expr(st->value.get());
      expr(st->lo.get());
      expr(st->hi.get());
      for (const auto& r : st->region) expr(r.start.get());
      walk(st->body);
    }
  };
  walk(fn_.body);
  // A large region is left alone: the statement's own loads are many in flight anyway.
  for (const Expr* load : loads) prefetchLines(*load, 0, /*l2=*/false);
}

// Prefetches every line `load`'s region may touch, one line per compute thread from thread
// `firstThread` on. Returns the threads used, or 0 (and prefetches nothing) when they would be
// more than the block has.
int64_t TileGen::prefetchLines(const Expr& load, int64_t firstThread, bool l2) {
  constexpr int64_t kLine = 128;
  const ir::Tensor& t = tensorOf(load.index);
  const int64_t last = std::max<int64_t>(load.region.back().length, 1);
  const int64_t rows = regionElements(load.region) / last;
  // Every line a row may touch, whatever its alignment: offsets 0, 128, ... and its last byte.
  const int64_t rowBytes = last * dtypeBytes(t.dtype);
  const int64_t lines = (rowBytes + kLine - 1) / kLine + 1;
  if (firstThread + rows * lines > T()) return 0;
  V mine = b_.CreateSub(env_.tid, ci(firstThread));
  when(b_.CreateICmpULT(mine, ci(rows * lines)), [&] {
    V row = b_.CreateUDiv(mine, ci(lines)), line = b_.CreateURem(mine, ci(lines));
    std::vector<V> c = coordsOf(load.region, starts(load.region), b_.CreateMul(row, ci(last)));
    V first = at(t.dtype, args_.params[size_t(load.index)], physOffset(t, c));
    V offset = b_.CreateZExt(b_.CreateMul(line, ci(kLine)), b_.getInt64Ty());
    offset = b_.CreateSelect(b_.CreateICmpULT(offset, b_.getInt64(uint64_t(rowBytes))), offset, b_.getInt64(uint64_t(rowBytes - 1)));
    V linePtr = b_.CreateGEP(b_.getInt8Ty(), first, offset);
    if (l2) env_.target->prefetchLineL2(b_, linePtr);
    else env_.target->prefetchLine(b_, linePtr);
  });
  return rows * lines;
}

// A loop's loads whose regions follow from the task's indices and the loop variable (an
// attention loop's cache tiles): while iteration i runs, iteration i + 1's lines are brought
// into L2, and before the loop the first iteration's, so that its later loads (the values
// after the keys) do not each wait out a trip to memory.
std::vector<const Expr*> TileGen::iterationLoads(const Stmt& loopStmt) {
  std::vector<const Expr*> loads;
  std::function<void(const Expr*)> expr = [&](const Expr* e) {
    if (!e) return;
    for (const auto& o : e->operands) expr(o.get());
    if (e->kind == ExprKind::Load && !v_.streamed.count(e) && !e->region.empty() &&
        std::all_of(e->region.begin(), e->region.end(),
                    [&](const ir::RegionDim& r) { return r.start && fromIndices(*r.start, loopStmt.slot); }))
      loads.push_back(e);
  };
  // Statements every iteration runs: not those under an `if` or in an inner loop.
  for (const auto& st : loopStmt.body) {
    if (st->kind == StmtKind::If || st->kind == StmtKind::For) continue;
    expr(st->value.get());
  }
  return loads;
}
// Prefetches the lines `loads` touch with the loop variable at `k`, one line per thread.
void TileGen::prefetchIteration(const Stmt& loopStmt, const std::vector<const Expr*>& loads, V k) {
  atLoopValue(loopStmt, k, nullptr, [&] {
    int64_t firstThread = 0;
    for (const Expr* load : loads) firstThread += prefetchLines(*load, firstThread, /*l2=*/true);
  });
}
// Emits `body` with the loop variable of `loopStmt` at `value` (another iteration's regions),
// then sets the variable back to `restore` where given. Called under a condition: what `body`
// evaluates must not stay in the scalar cache, so the cache is set aside meanwhile.
void TileGen::atLoopValue(const Stmt& loopStmt, V value, V restore, const std::function<void()>& body) {
  const DType t = fn_.locals.at(size_t(loopStmt.slot)).dtype;
  auto saved = std::move(scalars_);
  scalars_.clear();
  writeScalarLocal(loopStmt.slot, convert(DType::I32, t, value));
  body();
  if (restore) writeScalarLocal(loopStmt.slot, convert(DType::I32, t, restore));
  scalars_ = std::move(saved);
}

}  // namespace mk::backend::tile
