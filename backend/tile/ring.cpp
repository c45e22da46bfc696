// The compute side of the weight ring: wait for a statement's tiles to land in their slots,
// free the slots once read, and leave together when a ring wait failed.
#include "backend/backend.h"
#include "backend/tile/tile_gen.h"

namespace mk::backend::tile {

// Traced kernels: adds the time since `since` to the i64 at `acc` (on chip) and returns the time now.
V TileGen::addElapsed(V acc, V since) {
  V now = env_.target->globalTimerNs(b_);
  b_.CreateStore(b_.CreateAdd(b_.CreateLoad(b_.getInt64Ty(), acc), b_.CreateSub(now, since)), acc);
  return now;
}

// The compute side's half of the ring: wait until the statement's weight tiles are in their
// slots (every thread observes the mbarrier phase itself).
std::vector<V> TileGen::acquireSlots(const Stmt& s) {
  std::vector<V> slots;
  for (const Expr* load : streamedOf(s, v_.streamed)) {
    V since = env_.ringWaitNs ? env_.target->globalTimerNs(b_) : nullptr;
    V seq = b_.CreateLoad(i32(), env_.seq);
    V slot = b_.CreateURem(seq, env_.ringSlots);
    V parity = b_.CreateAnd(b_.CreateUDiv(seq, env_.ringSlots), ci(1));
    V full = smemPtr(env_, b_.CreateAdd(ci(SmemLayout::kBarriers), b_.CreateMul(slot, ci(8))));
    V failed = boundedWait(env_, [&](V& seen) {
      V ok = env_.target->mbarrierTryWait(b_, full, parity);
      seen = b_.CreateZExt(ok, i32());
      return ok;
    }, abi::ErrRingFull, slot, parity, /*quickPoll=*/false);  // a second poll here costs sm_80 spills in the matvec loops
    when(failed, [&] { b_.CreateStore(ci(1), smemPtr(env_, ci(SmemLayout::kAbortFlag))); });
    if (since) when(b_.CreateICmpEQ(env_.tid, ci(0)), [&] { addElapsed(env_.ringWaitNs, since); });
    b_.CreateStore(b_.CreateAdd(seq, ci(1)), env_.seq);
    ring_[load] = smemPtr(env_, b_.CreateAdd(env_.ringBase, b_.CreateMul(slot, ci(env_.slotBytes))));
    slots.push_back(slot);
  }
  // No barrier here: each thread has seen the tile land itself; whether a wait failed is
  // decided after the statement's closing barrier (finishStatement).
  return slots;
}

// Each compute warp arrives once on a slot's `empty` barrier (its count is the number of
// compute warps). After the statement's closing barrier (`blockDone`) every thread is done
// with the slot; otherwise the warp syncs first so all its lanes have read it.
void TileGen::releaseSlots(const std::vector<V>& slots, bool blockDone) {
  if (slots.empty()) return;
  if (!blockDone) env_.target->warpSync(b_);
  when(b_.CreateICmpEQ(b_.CreateURem(env_.tid, ci(32)), ci(0)), [&] {
    for (V slot : slots)
      env_.target->mbarrierArrive(b_, smemPtr(env_, b_.CreateAdd(ci(SmemLayout::kBarriers + SmemLayout::kMaxSlots * 8), b_.CreateMul(slot, ci(8)))));
  });
}

// After the statement's closing barrier: leave if a ring wait of this statement failed (every
// compute thread has passed the barrier, so they all leave together), else free its slots.
void TileGen::finishStatement(const std::vector<V>& slots) {
  if (slots.empty()) return;
  V abort = b_.CreateLoad(i32(), smemPtr(env_, ci(SmemLayout::kAbortFlag)));
  auto* go = newBlock("ring.ok");
  b_.CreateCondBr(b_.CreateICmpNE(abort, ci(0)), env_.exit, go);
  b_.SetInsertPoint(go);
  releaseSlots(slots);
}

}  // namespace mk::backend::tile
