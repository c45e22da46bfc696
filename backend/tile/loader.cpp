// The loader warp's program: the op body's static loops walked again, issuing the streamed
// weight loads into the ring's slots in the order the compute threads consume them.
#include "backend/backend.h"
#include "backend/tile/tile_gen.h"

namespace mk::backend::tile {

// Walks the same static loops and issues the same streamed loads, in the same order, as the
// compute threads consume them; the ring's mbarriers keep the two sides in step.
void TileGen::loaderStatement(const Stmt& s) {
  scalars_.clear();
  switch (s.kind) {
    case StmtKind::Let:
      if (statics_.staticSlot(s.slot) && s.value) writeScalarLocal(s.slot, convert(s.value->dtype, fn_.locals[size_t(s.slot)].dtype, scalar(*s.value)));
      break;
    case StmtKind::For: {
      if (!containsStreamed(s.body, v_.streamed)) return;
      V lo = convert(s.lo->dtype, DType::I32, scalar(*s.lo)), hi = convert(s.hi->dtype, DType::I32, scalar(*s.hi));
      const DType t = fn_.locals.at(size_t(s.slot)).dtype;
      LoaderLoop here{&s, hi, nullptr, nullptr};
      if (env_.l2AheadTiles > 0) {
        here.ahead = entryAlloca(i32());
        b_.CreateStore(lo, here.ahead);
      }
      loaderLoops_.push_back(&here);
      loop(lo, hi, ci(s.step), [&](V i) {
        here.now = i;
        writeScalarLocal(s.slot, convert(DType::I32, t, i));
        block(s.body);
      });
      loaderLoops_.pop_back();
      return;
    }
    default: break;
  }
  if (s.kind == StmtKind::If) return;
  for (const Expr* load : streamedOf(s, v_.streamed)) issue(*load);
}

// One poll's worth of look-ahead while the loader waits for a slot: the tile of the next loop
// value not yet prefetched, if within l2AheadTiles iterations of the one being issued, goes to
// L2 one 128-byte line per lane and round.
void TileGen::prefetchAhead(const Expr& load, const LoaderLoop& l, int64_t bytes) {
  const Stmt& s = *l.stmt;
  V next = b_.CreateLoad(i32(), l.ahead);
  V limit = b_.CreateAdd(l.now, ci(int64_t(env_.l2AheadTiles) * s.step));
  V go = b_.CreateAnd(b_.CreateICmpSLT(next, l.hi), b_.CreateICmpSLT(next, limit));
  when(go, [&] {
    V base = nullptr;
    atLoopValue(s, next, l.now, [&] {
      const ir::Tensor& tensor = tensorOf(load.index);
      base = at(tensor.dtype, args_.params[size_t(load.index)], physOffset(tensor, starts(load.region)));
    });
    for (int64_t line = 0; line * 128 < bytes; line += 32) {
      V off = b_.CreateMul(b_.CreateAdd(env_.tid, ci(line)), ci(128));
      when(b_.CreateICmpULT(off, ci(bytes)), [&] { env_.target->prefetchLineL2(b_, b_.CreateGEP(b_.getInt8Ty(), base, off)); });
    }
    b_.CreateStore(b_.CreateAdd(next, ci(s.step)), l.ahead);
  });
}

void TileGen::issue(const Expr& load) {
  const ir::Tensor& t = tensorOf(load.index);
  const int64_t eb = dtypeBytes(t.dtype);
  const bool whole = v_.contiguous.count(&load) > 0;  // one tile of a tiled layout: one block
  const int64_t bytes = regionElements(load.region) * eb;
  const int64_t rowBytes = whole ? bytes : load.region.back().length * eb;
  const int64_t rows = bytes / rowBytes;
  V lane = env_.tid;  // the loader's lanes count from 0
  std::vector<V> st = starts(load.region);
  // The global address of row r: outer coordinates from r, the last dim at its start.
  auto rowSrc = [&](V r) {
    if (whole) return at(t.dtype, args_.params[size_t(load.index)], physOffset(t, st));
    std::vector<V> c(load.region.size());
    V rest = r;
    for (size_t d = load.region.size(); d-- > 0;) {
      if (d + 1 == load.region.size() || load.region[d].length <= 0) {
        c[d] = st[d];
        continue;
      }
      c[d] = b_.CreateAdd(st[d], b_.CreateURem(rest, ci(load.region[d].length)));
      rest = b_.CreateUDiv(rest, ci(load.region[d].length));
    }
    return at(t.dtype, args_.params[size_t(load.index)], physOffset(t, c));
  };
  V since = env_.loaderWaitNs ? env_.target->globalTimerNs(b_) : nullptr;
  V seq = b_.CreateLoad(i32(), env_.seq);
  V slot = b_.CreateURem(seq, env_.ringSlots);
  V use = b_.CreateUDiv(seq, env_.ringSlots);
  V full = smemPtr(env_, b_.CreateAdd(ci(SmemLayout::kBarriers), b_.CreateMul(slot, ci(8))));
  V empty = smemPtr(env_, b_.CreateAdd(ci(SmemLayout::kBarriers + SmemLayout::kMaxSlots * 8), b_.CreateMul(slot, ci(8))));
  // The slot's previous tile must have been consumed (no wait for a slot's first use).
  const LoaderLoop* ahead = whole && env_.l2AheadTiles > 0 && !loaderLoops_.empty() ? loaderLoops_.back() : nullptr;
  if (ahead)
    b_.CreateStore(binary(BinaryOp::Max, DType::I32, DType::I32, DType::I32, b_.CreateLoad(i32(), ahead->ahead), ahead->now),
                   ahead->ahead);
  when(b_.CreateICmpUGT(use, ci(0)), [&] {
    V parity = b_.CreateAnd(b_.CreateSub(use, ci(1)), ci(1));
    bool firstPoll = true;  // boundedWait's quick poll: the slot may be free already
    V failed = boundedWait(env_, [&](V& seen) {
      if (ahead && !firstPoll) prefetchAhead(load, *ahead, bytes);
      firstPoll = false;
      V ok = env_.target->mbarrierTryWait(b_, empty, parity);
      seen = b_.CreateZExt(ok, i32());
      return ok;
    }, abi::ErrRingEmpty, slot, parity);
    auto* go = newBlock("loader.ok");
    b_.CreateCondBr(failed, env_.exit, go);
    b_.SetInsertPoint(go);
  });
  if (since) {
    when(b_.CreateICmpEQ(lane, ci(0)), [&] {
      V now = addElapsed(env_.loaderWaitNs, since);
      V first = b_.CreateLoad(b_.getInt64Ty(), env_.loaderFirst);
      b_.CreateStore(b_.CreateSelect(b_.CreateICmpEQ(first, b_.getInt64(0)), now, first), env_.loaderFirst);
      b_.CreateStore(now, env_.loaderLast);
    });
  }
  V dst = smemPtr(env_, b_.CreateAdd(env_.ringBase, b_.CreateMul(slot, ci(env_.slotBytes))));
  if (env_.ablateCopies) {
    // The slot is handed over as it is (the phase completes without data).
    if (env_.target->bulkCopy()) when(b_.CreateICmpEQ(lane, ci(0)), [&] { env_.target->mbarrierArrive(b_, full); });
    else env_.target->mbarrierArrive(b_, full);
  } else if (env_.target->bulkCopy()) {
    when(b_.CreateICmpEQ(lane, ci(0)), [&] { env_.target->mbarrierArriveExpectTx(b_, full, ci(bytes)); });
    loop(lane, ci(rows), ci(32), [&](V r) {
      V d = b_.CreateGEP(b_.getInt8Ty(), dst, b_.CreateMul(r, ci(rowBytes)));
      env_.target->copyBulk(b_, d, rowSrc(r), ci(rowBytes), full);
    }, /*unroll=*/1);
  } else {
    // Row by row, 16 bytes per lane and copy; unrolling this loop only keeps more addresses live.
    const int64_t perRow = rowBytes / 16;
    loop(ci(0), ci(rows), ci(1), [&](V r) {
      V src = rowSrc(r);
      V d = b_.CreateGEP(b_.getInt8Ty(), dst, b_.CreateMul(r, ci(rowBytes)));
      loop(lane, ci(perRow), ci(32), [&](V k) {
        V off = b_.CreateMul(k, ci(16));
        env_.target->copy16(b_, b_.CreateGEP(b_.getInt8Ty(), d, off), b_.CreateGEP(b_.getInt8Ty(), src, off));
      }, /*unroll=*/2);
    }, /*unroll=*/1);
    env_.target->copyArriveOnComplete(b_, full);
  }
  b_.CreateStore(b_.CreateAdd(seq, ci(1)), env_.seq);
}

}  // namespace mk::backend::tile
