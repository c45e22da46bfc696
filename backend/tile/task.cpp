// TileGen's entry and the statements of an op body: control flow, lets and assignments of tiles
// and scalars, stores; each statement ends with a barrier of the compute threads.
#include <algorithm>

#include "backend/tile/tile_gen.h"

namespace mk::backend::tile {

void TileGen::run() {
  // Tile locals get places for the whole task (shared where their live ranges are apart, a
  // row-owned run counting as one statement); temporaries stack above them.
  findRowRuns(fn_.body);
  findFragmentStatements(fn_.body);
  placeLocals();
  // Every private local's registers start undefined here, at the task's start: where warps skip
  // a fragment run, a read could otherwise seem to see the previous task's values, which would
  // then stay live (and take registers) through every task of the kernel.
  for (const auto& [slot, owned] : private_) {
    auto& slots = privateSlots_[slot];
    for (int64_t j = 0; j < owned; ++j) {
      slots.push_back(entryAlloca(repr(fn_.locals.at(size_t(slot)).dtype)));
      b_.CreateStore(llvm::UndefValue::get(slots.back()->getAllocatedType()), slots.back());
    }
  }
  top_ = localsEnd_;
  peak_ = localsEnd_ - SmemLayout::kTiles;
  while (env_.scalarSlots->size() < fn_.locals.size()) {
    llvm::IRBuilder<> eb(&env_.fn->getEntryBlock(), env_.fn->getEntryBlock().begin());
    env_.scalarSlots->push_back(eb.CreateAlloca(b_.getInt32Ty(), nullptr, "local"));
  }
  if (side_ == Side::Compute) prefetchLoads();
  block(fn_.body);
  *env_.tilePeak = std::max(*env_.tilePeak, peak_);
}

// Every element index 0 .. n-1 of a tile, spread over the compute threads. The rounds in which
// every thread has an element are straight-line code, so their global loads are in flight
// together (a loop would wait out each round's load latency before the next); longer tiles
// loop, unrolled by as many rounds.
void TileGen::forEachElement(int64_t n, const std::function<void(V)>& body) {
  const int64_t full = n / T();
  if (full > kStraightRounds) {
    loop(env_.tid, ci(n), ci(T()), body, int(kStraightRounds));
    return;
  }
  for (int64_t j = 0; j < full; ++j) body(b_.CreateAdd(env_.tid, ci(j * T())));
  if (n % T() == 0) return;
  V last = b_.CreateAdd(env_.tid, ci(full * T()));
  when(b_.CreateICmpULT(last, ci(n)), [&] { body(last); });
}

// The same, for an element's value and then what is done with it: the straight-line rounds
// compute every value before the first `put`, so no load waits behind another round's store.
void TileGen::forEachElement(int64_t n, const std::function<V(V)>& value, const std::function<void(V, V)>& put) {
  const int64_t full = n / T();
  if (full > kStraightRounds) {
    forEachElement(n, [&](V i) { put(i, value(i)); });
    return;
  }
  valuesThenPuts(env_.tid, full, value, put);
  if (n % T() == 0) return;
  V last = b_.CreateAdd(env_.tid, ci(full * T()));
  when(b_.CreateICmpULT(last, ci(n)), [&] { put(last, value(last)); });
}

// Elements first, first + T, ... (`rounds` of them): every value, then every put.
void TileGen::valuesThenPuts(V first, int64_t rounds, const std::function<V(V)>& value,
                             const std::function<void(V, V)>& put) {
  std::vector<std::pair<V, V>> done;
  for (int64_t j = 0; j < rounds; ++j) {
    V i = b_.CreateAdd(first, ci(j * T()));
    done.emplace_back(i, value(i));
  }
  for (auto& [i, x] : done) put(i, x);
}

// A statement's elements. Where its value reads global memory, past the straight-line rounds it
// takes groups of kStraightRounds rounds, each computing its values first, so that a group's loads
// are in flight together (forEachElement's loop issues them a round at a time); a value without
// global loads gains nothing from it and only holds more registers (it spilled the 8B's prefill).
void TileGen::forEachStatementElement(int64_t n, const Expr* value, const std::function<V(V)>& valueAt,
                                      const std::function<void(V, V)>& put) {
  const int64_t full = n / T(), groups = full / kStraightRounds;
  if (groups < 2 || !value || !readsGlobal(*value)) return forEachElement(n, valueAt, put);
  const int64_t group = kStraightRounds * T();
  loop(env_.tid, ci(groups * group), ci(group), [&](V first) { valuesThenPuts(first, kStraightRounds, valueAt, put); });
  const int64_t rest = groups * group;
  forEachElement(n - rest, [&](V i) { return valueAt(b_.CreateAdd(i, ci(rest))); },
                 [&](V i, V x) { put(b_.CreateAdd(i, ci(rest)), x); });
}

bool TileGen::readsGlobal(const Expr& e) {
  if (e.kind == ExprKind::Load) return true;
  for (const auto& o : e.operands)
    if (o && readsGlobal(*o)) return true;
  for (const auto& r : e.region)
    if (r.start && readsGlobal(*r.start)) return true;
  return false;
}

// Whether `e` reads local `slot` at another element than the one being written.
bool TileGen::readsShifted(const Expr& e, int slot, bool shifted) {
  if (e.kind == ExprKind::Local && e.index == slot) return shifted;
  bool s = shifted || e.kind == ExprKind::Slice || e.kind == ExprKind::Concat || e.kind == ExprKind::RowDot ||
           e.kind == ExprKind::ColDot || e.kind == ExprKind::Mma || e.kind == ExprKind::MmaNt || e.kind == ExprKind::Reduce ||
           e.kind == ExprKind::Dot || e.kind == ExprKind::RowReduce || e.kind == ExprKind::RepeatRows ||
           e.kind == ExprKind::RepeatCols;
  for (const auto& o : e.operands)
    if (o && readsShifted(*o, slot, s)) return true;
  return false;
}

void TileGen::beginStatement() {
  scalars_.clear();
  tiles_.clear();
  ring_.clear();
  // Within a row-owned run a thread may still read an earlier statement's temporaries (no
  // barrier between them): they stay until the run ends.
  if (!run_ || run_->first) top_ = localsEnd_;
  fragments_.clear();
  ownedHalf_ = 0;
}

void TileGen::block(const ir::Block& stmts) {
  for (const auto& s : stmts) statement(*s);
}

void TileGen::statement(const Stmt& s) {
  if (side_ == Side::Loader) return loaderStatement(s);
  run_ = rowRunOf(s);
  beginStatement();
  switch (s.kind) {
    case StmtKind::For: {
      if (!s.lo || !s.hi || s.step <= 0) unsupported("a loop without bounds or with a step <= 0");
      if (fusedRowdotLoop(s) || mmaAccumulatingLoop(s)) return;
      V lo = convert(s.lo->dtype, DType::I32, scalar(*s.lo)), hi = convert(s.hi->dtype, DType::I32, scalar(*s.hi));
      return pipelinedLoop(s, lo, hi, loopOperands(s, lo), iterationLoads(s));
    }
    case StmtKind::If: {
      if (!s.value || !s.value->shape.empty()) unsupported("an `if` whose condition is not a scalar");
      prepare(*s.value);
      V c = b_.CreateICmpNE(convert(s.value->dtype, DType::Bool, scalar(*s.value)), ci(0));
      auto* t = newBlock("if.then");
      auto* e = newBlock("if.else");
      auto* j = newBlock("if.end");
      b_.CreateCondBr(c, t, e);
      b_.SetInsertPoint(t);
      block(s.body);
      b_.CreateBr(j);
      b_.SetInsertPoint(e);
      block(s.otherwise);
      b_.CreateBr(j);
      b_.SetInsertPoint(j);
      return;
    }
    default: break;
  }
  if (run_ && run_->fragment && run_->first) {
    stageRunProducts(s);
    // A fragment run of fewer rows than the warps have strips: the other warps skip to its end.
    if (run_->rows < 16 * (T() / 32)) {
      auto* body = newBlock("run.strips");
      runEnd_ = newBlock("run.end");
      b_.CreateCondBr(b_.CreateICmpULT(env_.tid, ci(run_->rows * 2)), body, runEnd_);
      b_.SetInsertPoint(body);
    }
  }
  std::vector<V> slots = acquireSlots(s);
  if (accumulatesRowdot(s)) {
    const Expr& rd = *s.value;
    for (const auto& o : rd.operands) prepare(*o);
    TileRef acc = localTile(s.slot);
    rowdot(rd, &acc);  // ends with a barrier
    finishStatement(slots);
    return;
  }
  if (accumulatesMma(s)) return accumulateMmaStatement(s, slots);
  if (s.value) prepare(*s.value);
  bool tiles = false;
  switch (s.kind) {
    case StmtKind::Let:
    case StmtKind::Assign: {
      const auto& L = fn_.locals.at(size_t(s.slot));
      if (L.shape.empty()) {
        if (!s.value) {
          writeScalarLocal(s.slot, isFloat(L.dtype) ? cf(0) : ci(0));
        } else if (s.kind == StmtKind::Let || s.assign == ir::AssignOp::Set) {
          writeScalarLocal(s.slot, convert(s.value->dtype, L.dtype, scalar(*s.value)));
        } else {
          V cur = readScalarLocal(s.slot);
          writeScalarLocal(s.slot, binary(compound(s.assign), L.dtype, L.dtype, s.value->dtype, cur, scalar(*s.value)));
        }
        break;
      }
      tiles = true;
      const int64_t n = abi::shapeElements(L.shape);
      TileRef dst = localTile(s.slot);
      // In a row-owned run, the elements this thread owns; else element i by thread i % T.
      auto each = [&](const std::function<V(V)>& value, const std::function<void(V, V)>& put) {
        if (run_) forEachOwnedElement(L.shape, value, put);
        else forEachStatementElement(n, s.value.get(), value, put);
      };
      auto write = [&](V i, V x) {
        if (privateLocal(s.slot)) writePrivate(s.slot, x);
        else writeTile(dst, i, x);
      };
      auto read = [&](V i) { return privateLocal(s.slot) ? readPrivate(s.slot) : readTile(dst, i); };
      if (!s.value) {
        each([&](V) { return isFloat(L.dtype) ? cf(0) : ci(0); }, write);
        break;
      }
      const Expr& val = *s.value;
      const bool set = s.kind == StmtKind::Let || s.assign == ir::AssignOp::Set;
      // A value that reads this local at other elements is computed in full first.
      auto value = [&](V i) { return elem(val, val.shape.empty() ? ci(0) : i); };
      if (!run_ && readsShifted(val, s.slot, false)) {
        TileRef tmp = allocTemp(n, val.dtype);
        forEachElement(n, value, [&](V i, V x) { writeTile(tmp, i, x); });
        barrier();
        tiles_[&val] = tmp;
      }
      each(value, [&](V i, V x) {
        if (set) write(i, convert(val.dtype, L.dtype, x));
        else write(i, binary(compound(s.assign), L.dtype, L.dtype, val.dtype, read(i), x));
      });
      break;
    }
    case StmtKind::Store: {
      if (!s.value) unsupported("a store without a value");
      const ir::Tensor& t = tensorOf(s.tensor);
      std::vector<V> st = starts(s.region);
      const int64_t n = regionElements(s.region);
      const Expr& val = *s.value;
      auto value = [&](V i) { return convert(val.dtype, t.dtype, elem(val, val.shape.empty() ? ci(0) : i)); };
      auto put = [&](V i, V x) {
        storeStorage(t.dtype, at(t.dtype, args_.params[size_t(s.tensor)], physOffset(t, coordsOf(s.region, st, i))), x);
      };
      tiles = true;
      if (run_) forEachOwnedElement(val.shape, value, put);
      else if (n == 1) when(b_.CreateICmpEQ(env_.tid, ci(0)), [&] { put(ci(0), value(ci(0))); });
      else forEachStatementElement(n, &val, value, put);
      break;
    }
    default: break;
  }
  if (run_ && run_->last && runEnd_) {
    b_.CreateBr(runEnd_);
    b_.SetInsertPoint(runEnd_);
    runEnd_ = nullptr;
  }
  // A run's statements before its last read only what their own thread wrote: the warp's
  // lanes are ordered, the block is not. (A fragment run's lanes share nothing through shared
  // memory: its row reductions are shuffles.)
  if (run_ && !run_->last) {
    if (!run_->fragment) env_.target->warpSync(b_);
  } else if (tiles || !slots.empty()) {
    barrier();
  }
  finishStatement(slots);
}

// `acc += rowdot(A, x)` on an f32 tile local that the operands do not read.
bool TileGen::accumulatesRowdot(const Stmt& s) const {
  if (s.kind != StmtKind::Assign || s.assign != ir::AssignOp::Add || !s.value || s.value->kind != ExprKind::RowDot) return false;
  const auto& L = fn_.locals.at(size_t(s.slot));
  if (L.shape.empty() || L.dtype != DType::F32 || s.value->dtype != DType::F32 || L.shape != s.value->shape) return false;
  return !reads(*s.value, s.slot);
}

bool TileGen::reads(const Expr& e, int slot) {
  if (e.kind == ExprKind::Local && e.index == slot) return true;
  for (const auto& o : e.operands)
    if (o && reads(*o, slot)) return true;
  for (const auto& r : e.region)
    if (r.start && reads(*r.start, slot)) return true;
  return false;
}

BinaryOp TileGen::compound(ir::AssignOp a) {
  return a == ir::AssignOp::Add ? BinaryOp::Add : a == ir::AssignOp::Sub ? BinaryOp::Sub
       : a == ir::AssignOp::Mul ? BinaryOp::Mul : BinaryOp::Div;
}

}  // namespace mk::backend::tile

namespace mk::backend {

void emitTask(const TaskEnv& env, const Variant& v, const TaskArgs& args, Side side) {
  tile::TileGen(env, v, args, side).run();
}

}  // namespace mk::backend
