// A loop's matrix-product operands that are rows in global memory (an attention's keys and values
// at the loop's position, its queries), copied with the target's asynchronous copies into buffers
// of their own: those the loop moves one iteration ahead, into one of two buffers in turn; those
// it does not move once, before it. An iteration's products then find their operands staged
// instead of each waiting out its loads from L2. (mmaAccumulatingLoop, a loop of products only,
// has a pipeline of its own.)
#include <set>

#include "backend/tile/tile_gen.h"

namespace mk::backend::tile {

namespace {

// The local slots `body` writes (lets, assignments, loop variables), nested blocks included.
void writtenSlots(const ir::Block& body, std::set<int>& out) {
  for (const auto& st : body) {
    if (st->kind == StmtKind::Let || st->kind == StmtKind::Assign || st->kind == StmtKind::For) out.insert(st->slot);
    writtenSlots(st->body, out);
    writtenSlots(st->otherwise, out);
  }
}

// Whether `e` reads only values the loop does not change, but for its variable `loopSlot`:
// constants, task indices, scalar parameters, locals it does not write. `*moves`: it reads the
// variable.
bool fixedButLoopVariable(const Expr& e, const std::set<int>& written, int loopSlot, bool* moves) {
  if (e.kind == ExprKind::Load) return false;
  if (e.kind == ExprKind::Local && e.index == loopSlot) *moves = true;
  else if (e.kind == ExprKind::Local && written.count(e.index)) return false;
  for (const auto& o : e.operands)
    if (o && !fixedButLoopVariable(*o, written, loopSlot, moves)) return false;
  for (const auto& r : e.region)
    if (r.start && !fixedButLoopVariable(*r.start, written, loopSlot, moves)) return false;
  return true;
}

void forEachProduct(const Expr& e, const std::function<void(const Expr&)>& visit) {
  if (e.kind == ExprKind::Mma || e.kind == ExprKind::MmaNt) visit(e);
  for (const auto& o : e.operands)
    if (o) forEachProduct(*o, visit);
}

}  // namespace

// The operands of the products in the statements every iteration runs (not under an `if` or in
// an inner loop) that copyMmaRows can copy from global memory, with their buffers above the tile
// locals live during the loop; none where the target has no asynchronous copies or the buffers
// leave too little room for the iteration's temporaries. Called where the loop starts.
std::vector<TileGen::LoopOperand> TileGen::loopOperands(const Stmt& loopStmt, V lo) {
  std::vector<LoopOperand> ops;
  if (!env_.target->asyncCopies()) return ops;
  std::set<int> written;
  writtenSlots(loopStmt.body, written);
  auto consider = [&](const Expr& x, const MmaTiling& t, bool isA) {
    if (x.kind != ExprKind::Load) return;
    bool moves = false;
    for (const auto& r : x.region)
      if (r.start && !fixedButLoopVariable(*r.start, written, loopStmt.slot, &moves)) return;
    LoopOperand op{&x, t, isA ? t.M : t.bNMajor ? t.K : t.N, isA ? t.K : t.bNMajor ? t.N : t.K,
                   isA ? t.stagedRowsBytes(t.M) : t.stagedBBytes(), !moves, {0, 0}};
    bool global = false;
    atLoopValue(loopStmt, lo, nullptr, [&] {
      auto rows = mmaRows(x, x.dtype, op.rowElements);
      global = rows && rows->global;
    });
    if (global) ops.push_back(op);
  };
  for (const auto& st : loopStmt.body) {
    if (st->kind == StmtKind::If || st->kind == StmtKind::For || !st->value) continue;
    forEachProduct(*st->value, [&](const Expr& e) {
      const std::optional<MmaTiling> t = mmaTiling(e);
      if (!t) return;
      consider(operand(e, 0), *t, true);
      if (t->nt || t->bNMajor) consider(operand(e, 1), *t, false);
    });
  }
  if (ops.empty()) return ops;
  int64_t end = liveLocalsEnd(loopStmt, {});
  for (LoopOperand& op : ops) {
    const int64_t align = op.t.stagedAlign();
    for (int j = 0; j < (op.invariant ? 1 : 2); ++j) {
      end = (end + align - 1) / align * align;
      op.buffers[j] = end;
      end += op.bytes;
    }
  }
  // What the iteration's own statements may still need (a product's staging and its f32 tile).
  constexpr int64_t kReserve = 64 * 1024;
  if (env_.smemPerBlock > 0 && end + kReserve > env_.smemPerBlock - env_.ringNeedBytes - 127) ops.clear();
  return ops;
}

// Where operand `op` is staged in the iteration whose buffer is `turn`.
V TileGen::loopOperandBuffer(const LoopOperand& op, V turn) {
  if (op.invariant) return smemPtr(env_, ci(op.buffers[0]));
  return smemPtr(env_, b_.CreateSelect(b_.CreateICmpEQ(turn, ci(0)), ci(op.buffers[0]), ci(op.buffers[1])));
}

// Copies the operands that the loop moves (and with `invariants` those it does not) for the
// iteration at `value` into buffer `turn`, the loop variable set back to `restore` after.
void TileGen::copyLoopOperands(const Stmt& loopStmt, const std::vector<LoopOperand>& ops, V value, V restore, V turn,
                               bool invariants) {
  atLoopValue(loopStmt, value, restore, [&] {
    for (const LoopOperand& op : ops) {
      if (op.invariant && !invariants) continue;
      copyMmaRows(*mmaRows(*op.load, op.load->dtype, op.rowElements), loopOperandBuffer(op, turn), op.rows,
                  op.rowElements, op.t, /*async=*/true);
    }
  });
}

// A `for` loop other than the special forms (fusedRowdotLoop, mmaAccumulatingLoop): each
// iteration's `ahead` loads (iterationLoads) brought into L2 one iteration early, and its
// operands `ops` (loopOperands; none: the plain loop) copied ahead: before the loop the first
// iteration's (and those it does not move), one commit group; each iteration then issues the next
// one's into the other buffer, a group every iteration, empty or not, so that a product waits with
// one group pending (its own landed, the next still in flight). The buffer an iteration writes was
// last read by the one before, whose products ended with a block barrier.
void TileGen::pipelinedLoop(const Stmt& loopStmt, V lo, V hi, std::vector<LoopOperand> ops,
                            std::vector<const Expr*> ahead) {
  std::erase_if(ahead, [&](const Expr* x) {
    return std::any_of(ops.begin(), ops.end(), [&](const LoopOperand& op) { return op.load == x; });
  });
  const DType counter = fn_.locals.at(size_t(loopStmt.slot)).dtype;
  const bool copies = !ops.empty();
  const int64_t savedEnd = localsEnd_, savedBuffersEnd = loopBuffersEnd_;
  const LoopPipeline* saved = pipeline_;
  LoopPipeline here{ops, nullptr};
  if (copies) {
    int64_t buffersEnd = 0;
    for (const LoopOperand& op : ops) buffersEnd = std::max(buffersEnd, op.buffers[op.invariant ? 0 : 1] + op.bytes);
    localsEnd_ = std::max(localsEnd_, buffersEnd);
    peak_ = std::max(peak_, localsEnd_ - SmemLayout::kTiles);
    // A loop inside this one places its own buffers (or locals' bytes) above these.
    loopBuffersEnd_ = buffersEnd;
  }
  if (!ahead.empty()) when(b_.CreateICmpSLT(lo, hi), [&] { prefetchIteration(loopStmt, ahead, lo); });
  if (copies) {
    when(b_.CreateICmpSLT(lo, hi), [&] { copyLoopOperands(loopStmt, ops, lo, nullptr, ci(0), true); });
    env_.target->asyncCopiesCommit(b_);
  }
  loop(lo, hi, ci(loopStmt.step), [&](V i) {
    V next = b_.CreateAdd(i, ci(loopStmt.step));
    if (!ahead.empty()) when(b_.CreateICmpSLT(next, hi), [&] { prefetchIteration(loopStmt, ahead, next); });
    writeScalarLocal(loopStmt.slot, convert(DType::I32, counter, i));
    if (copies) {
      here.turn = b_.CreateAnd(b_.CreateUDiv(b_.CreateSub(i, lo), ci(loopStmt.step)), ci(1));
      when(b_.CreateICmpSLT(next, hi),
           [&] { copyLoopOperands(loopStmt, ops, next, i, b_.CreateXor(here.turn, ci(1)), false); });
      env_.target->asyncCopiesCommit(b_);
      pipeline_ = &here;
    }
    block(loopStmt.body);
    pipeline_ = saved;
  });
  if (!copies) return;
  // Every copy issued was for an iteration that ran and waited for it; none is left in flight.
  env_.target->asyncCopiesWait(b_, 0);
  loopBuffersEnd_ = savedBuffersEnd;
  localsEnd_ = savedEnd;
}

V TileGen::pipelinedOperand(const Expr& x) {
  if (!pipeline_) return nullptr;
  for (const LoopOperand& op : pipeline_->operands)
    if (op.load == &x) return loopOperandBuffer(op, pipeline_->turn);
  return nullptr;
}

}  // namespace mk::backend::tile
