// Row-owned runs: statements over tiles of R rows evaluated so that the `lanes` = T / R threads
// of one warp's group own one row: element (r, c) of every [R, C] tile of the run by lane c %
// lanes of group r, element r of every [R] tile by all of group r's lanes alike. A statement of
// the run then reads only what its own thread wrote earlier in the run (or what was written before
// it), and its row reductions combine the group's lanes by shuffles, so only the run's last
// statement ends with a barrier. An online softmax over a block of scores (scale, mask, row max,
// exp, row sum) is such a run: six statement barriers and two block-wide row reductions a key block
// become one barrier and shuffles.
//
// What may join a run (findRowRuns): a let or assignment of a scalar, an [R] or an [R, C] local
// (C a multiple of lanes) whose value is elementwise over tiles of its own shape, with row
// reductions of [R, N] trees, repeat_cols of [R] trees, and any read of what the run does not
// write (loads, iota, locals written before it, repeat_rows of them). Only the run's first
// statement may hold a product (mma, mma_nt), computed block-wide before its elementwise part. A
// local the run reads other than at the thread's own element is not written in the run. Runs
// contain a row reduction (that is where they pay) and at least two statements.
//
// Fragment runs (RowRun::fragment): a run whose first statement holds a product of R rows (a
// multiple of 16, at most 16 a warp; the warps past its strips skip the run) on a target whose accumulators can feed its a operand (Target::mmaFragmentRuns) owns its
// elements as the product's accumulators lie instead, so that the product needs no shared-memory
// tile: each warp computes its 16-row strip, and the run's later products may join it (their
// staged operands read nothing the run writes; an a that reads tile locals is taken from the
// owned elements in registers). Then the statements outside runs that reference the locals such
// runs write (an accumulator's declarations before a loop, the store after it) become fragment
// runs where they can, and a local that only fragment runs of its rows
// reference, defined first, lives in registers across them (findFragmentStatements).
#include <algorithm>

#include "backend/tile/tile_gen.h"

namespace mk::backend::tile {

bool readsTileLocal(const ir::TileFunc& fn, const Expr& e);

// What one statement's value reads and needs, for joining a run of `rows` rows, `lanes` a row.
struct RowCheck {
  int64_t rows = 0;
  int lanes = 0;
  const Target* fragment = nullptr;  // a fragment run's: rows owned as the accumulators lie
  std::vector<const Expr*> products;  // a fragment run's
  bool ok = true;
  bool blockWide = false;   // holds a product (computed by the whole block first)
  bool rowReduce = false;
  std::set<int> loose;      // tile locals read at other elements (not at the thread's own)

  bool rowsOk(const std::vector<int64_t>& shape) const {
    if (shape.size() == 1) return shape[0] == rows;
    return shape.size() == 2 && shape[0] == rows && shape[1] % (fragment ? 8 : lanes) == 0;
  }
  // `own`: the node is evaluated at the element its thread owns.
  void expr(const ir::TileFunc& fn, const Expr& e, bool own) {
    if (!ok) return;
    auto children = [&](bool childOwn) {
      for (const auto& o : e.operands)
        if (o) expr(fn, *o, childOwn);
      for (const auto& r : e.region)
        if (r.start) expr(fn, *r.start, false);
    };
    switch (e.kind) {
      case ExprKind::Const:
      case ExprKind::TaskIndex:
      case ExprKind::Scalar:
      case ExprKind::Iota: return;
      case ExprKind::Local: {
        if (fn.locals.at(size_t(e.index)).shape.empty()) return;
        if (!own) loose.insert(e.index);
        return;
      }
      case ExprKind::Load: return children(false);
      case ExprKind::Unary:
      case ExprKind::Binary:
      case ExprKind::Select:
      case ExprKind::Cast: {
        // Elementwise: tile operands have the node's shape (scalars broadcast).
        if (own && !e.shape.empty() && !rowsOk(e.shape)) ok = false;
        for (const auto& o : e.operands)
          if (o && !o->shape.empty() && o->shape != e.shape) ok = false;
        return children(own);
      }
      case ExprKind::RepeatCols: {  // element (r, c) is v[r]: the group's own row
        if (!own || e.operands.at(0)->shape != std::vector<int64_t>{rows}) ok = false;
        return children(own);
      }
      case ExprKind::RepeatRows:
      case ExprKind::Slice:
      case ExprKind::Concat: return children(false);
      case ExprKind::RowReduce: {
        if (!own || !rowsOk(e.operands.at(0)->shape) || e.operands.at(0)->shape.size() != 2) ok = false;
        rowReduce = true;
        return children(true);
      }
      case ExprKind::Mma:
      case ExprKind::MmaNt: {
        if (!fragment) {
          blockWide = true;
          return children(false);
        }
        const Expr& a = *e.operands.at(0);
        const Expr& b = *e.operands.at(1);
        const int64_t N = b.shape.at(e.kind == ExprKind::MmaNt ? 0 : 1);
        // At most 64 columns and 64 of K: N / 2 accumulators a lane and the k steps' fragments
        // then fit beside the run's other registers (128 a thread of 512); the 8B's head size of
        // 128 spilled a kilobyte on sm_90a.
        constexpr int64_t kMaxFragmentColumns = 64;
        if (!onMatrixInstruction(*fragment, e) || a.shape.at(0) != rows || N % 8 != 0 || a.shape.at(1) % 16 != 0 ||
            N > kMaxFragmentColumns || a.shape.at(1) > kMaxFragmentColumns) {
          ok = false;
          return;
        }
        products.push_back(&e);
        expr(fn, a, readsTileLocal(fn, a));  // in registers from the owned elements, or staged
        return expr(fn, b, false);
      }
      case ExprKind::Reduce:
      case ExprKind::Dot:
      case ExprKind::RowDot:
      case ExprKind::ColDot: ok = false; return;
    }
    ok = false;
  }
};

// Whether `e` reads a tile local (a fragment run's product takes such an a from registers).
bool readsTileLocal(const ir::TileFunc& fn, const Expr& e) {
  if (e.kind == ExprKind::Local && !fn.locals.at(size_t(e.index)).shape.empty()) return true;
  for (const auto& o : e.operands)
    if (o && readsTileLocal(fn, *o)) return true;
  return false;
}

// Whether `s` may be a statement of a run of `rows` rows (`lanes` a row, or a fragment run): a
// let or assignment of a scalar or a local of those rows, or, in a fragment run, a store of such
// a value; its value elementwise over owned elements as RowCheck sees it.
std::optional<RowCheck> TileGen::checkStatement(const Stmt& s, int64_t rows, int lanes, bool fragment) {
  const bool store = s.kind == StmtKind::Store;
  if (s.kind != StmtKind::Let && s.kind != StmtKind::Assign && !(store && fragment)) return std::nullopt;
  if (!streamedOf(s, v_.streamed).empty() || accumulatesRowdot(s) || accumulatesMma(s)) return std::nullopt;
  RowCheck c;
  c.rows = rows, c.lanes = lanes;
  if (fragment) c.fragment = env_.target;
  if (store) {
    if (!s.value || !c.rowsOk(s.value->shape)) return std::nullopt;
    c.expr(fn_, *s.value, true);
    for (const auto& d : s.region)
      if (d.start) c.expr(fn_, *d.start, false);
    if (!c.ok) return std::nullopt;
    return c;
  }
  const auto& L = fn_.locals.at(size_t(s.slot));
  if (!L.shape.empty() && !c.rowsOk(L.shape)) return std::nullopt;
  if (s.value) {
    if (!L.shape.empty() && !s.value->shape.empty() && s.value->shape != L.shape) return std::nullopt;
    c.expr(fn_, *s.value, !s.value->shape.empty());
  }
  if (!c.ok || (!L.shape.empty() && c.loose.count(s.slot))) return std::nullopt;
  return c;
}

bool TileGen::fragmentRows(int64_t rows) const {
  const Target& tg = *env_.target;
  const ir::MmaShape& m = tg.arch().mma;
  return tg.mmaFragmentRuns() && tg.warpSize() == 32 && m.m == 16 && m.n == 8 && m.k == 16 && T() % 32 == 0 &&
         rows > 0 && rows % 16 == 0 && rows <= 16 * (T() / 32);
}

// Marks the runs of `stmts` and of the blocks inside them (rowRuns_).
void TileGen::findRowRuns(const ir::Block& stmts) {
  const int T = this->T();
  struct Open {
    std::vector<const Stmt*> members;
    int64_t rows = 0;
    int lanes = 0;
    bool rowReduce = false;
    std::set<int> written, loose;
    bool fragment = false;
    std::vector<const Expr*> products;
  };
  std::optional<Open> run;
  auto close = [&] {
    if (run && run->members.size() >= 2 && run->rowReduce) {
      for (size_t i = 0; i < run->members.size(); ++i)
        rowRuns_[run->members[i]] = {run->rows, run->lanes, i == 0, i + 1 == run->members.size(), run->fragment};
      // Its lets that it reads only at owned elements may live in registers (placeLocals decides).
      for (const Stmt* m : run->members) {
        const auto& shape = fn_.locals.at(size_t(m->slot)).shape;
        if (m->kind == StmtKind::Let && !shape.empty() && !run->loose.count(m->slot))
          privateCandidates_[m->slot] = run->fragment ? (shape.size() == 1 ? 2 : shape[1] / 2)
                                                      : shape.size() == 1 ? 1 : shape[1] / run->lanes;
      }
      if (run->fragment) {
        fragmentProducts_.insert(run->products.begin(), run->products.end());
        runMembers_[run->members.front()] = run->members;
      }
    }
    run.reset();
  };
  // Whether `s` may be a run's statement: its target's rows (0 for a scalar) and its reads.
  auto check = [&](const Stmt& s, int64_t rows, int lanes, bool fragment) -> std::optional<RowCheck> {
    if (s.kind == StmtKind::Store) return std::nullopt;
    return checkStatement(s, rows, lanes, fragment);
  };
  for (const auto& sp : stmts) {
    const Stmt& s = *sp;
    findRowRuns(s.body);
    findRowRuns(s.otherwise);
    const auto& L = (s.kind == StmtKind::Let || s.kind == StmtKind::Assign) ? &fn_.locals.at(size_t(s.slot)) : nullptr;
    // Join the open run.
    if (run && L) {
      // A fragment run has no scalar statements: its warps without a strip skip it.
      if (auto c = check(s, run->rows, run->lanes, run->fragment);
          c && !c->blockWide && !(run->fragment && L->shape.empty())) {
        bool clash = run->loose.count(s.slot) > 0;
        for (int x : c->loose) clash = clash || run->written.count(x) > 0;
        if (!clash) {
          run->members.push_back(&s);
          run->rowReduce = run->rowReduce || c->rowReduce;
          if (!L->shape.empty()) run->written.insert(s.slot);
          run->loose.insert(c->loose.begin(), c->loose.end());
          run->products.insert(run->products.end(), c->products.begin(), c->products.end());
          continue;
        }
      }
    }
    close();
    // Open one at a statement whose target has rows.
    if (!L || L->shape.empty() || L->shape.size() > 2) continue;
    const int64_t rows = L->shape[0];
    if (rows <= 0 || T % rows != 0) continue;
    const int lanes = int(T / rows);
    if (lanes > 32 || (lanes & (lanes - 1)) != 0) continue;
    // A fragment run where it starts with a product that takes one; its products' operands are
    // staged, with a barrier, before the run writes.
    if (fragmentRows(rows))
      if (auto c = check(s, rows, lanes, true); c && !c->products.empty()) {
        run = Open{{&s}, rows, lanes, c->rowReduce, {s.slot}, c->loose, true, c->products};
        continue;
      }
    if (auto c = check(s, rows, lanes, false)) {
      run = Open{{&s}, rows, lanes, c->rowReduce, {s.slot}, c->loose, false, {}};
      if (c->blockWide) run->loose.clear();  // the product is done, with a barrier, before the run writes
    }
  }
  close();
}

// The register of a private local's element that the thread is at: an [R] local's one element
// (in a fragment run, the one of its two rows) wherever it is read (a [R, C] statement reads it
// through repeat_cols at every column).
llvm::AllocaInst* TileGen::privateElement(int slot) {
  const auto& L = fn_.locals.at(size_t(slot));
  const auto& slots = privateSlots_.at(slot);  // made at the task's start (TileGen::run)
  return slots.at(L.shape.size() == 1 ? size_t(ownedHalf_) : size_t(ownedElement_));
}

V TileGen::readPrivate(int slot) {
  return b_.CreateLoad(repr(fn_.locals.at(size_t(slot)).dtype), privateElement(slot));
}

void TileGen::writePrivate(int slot, V x) { b_.CreateStore(x, privateElement(slot)); }

const TileGen::RowRun* TileGen::rowRunOf(const Stmt& s) const {
  auto it = rowRuns_.find(&s);
  return it == rowRuns_.end() ? nullptr : &it->second;
}

void TileGen::forEachOwnedElement(const std::vector<int64_t>& shape, const std::function<V(V)>& value,
                                  const std::function<void(V, V)>& put) {
  if (run_->fragment) {
    const int64_t owned = shape.size() == 1 ? 2 : shape[1] / 2;
    std::vector<std::pair<V, V>> done;
    std::vector<int> halves;
    for (int64_t j = 0; j < owned; ++j) {
      int half = 0;
      V i = fragmentIndex(shape, j, &half);
      ownedElement_ = j, ownedHalf_ = half;
      done.emplace_back(i, value(i));
      halves.push_back(half);
    }
    for (int64_t j = 0; j < owned; ++j) {
      ownedElement_ = j, ownedHalf_ = halves[size_t(j)];
      put(done[size_t(j)].first, done[size_t(j)].second);
    }
    return;
  }
  ownedHalf_ = 0;
  const int lanes = run_->lanes;
  V row = b_.CreateUDiv(env_.tid, ci(lanes));
  if (shape.size() == 1) {
    ownedElement_ = 0;
    put(row, value(row));
    return;
  }
  const int64_t C = shape[1], per = C / lanes;
  V first = b_.CreateAdd(b_.CreateMul(row, ci(C)), b_.CreateURem(env_.tid, ci(lanes)));
  // Values first, then the stores, as forEachElement's straight-line rounds.
  std::vector<std::pair<V, V>> done;
  for (int64_t j = 0; j < per; ++j) {
    V i = b_.CreateAdd(first, ci(j * lanes));
    ownedElement_ = j;
    done.emplace_back(i, value(i));
  }
  for (int64_t j = 0; j < per; ++j) {
    ownedElement_ = j;
    put(done[size_t(j)].first, done[size_t(j)].second);
  }
}

// Owned element j: of an [R] tile, row j of the thread's two (rows g and g + 8 of its warp's
// strip); of an [R, C] tile, accumulator j % perBlock of the block of columns 8 (j / perBlock)
// in the strip.
V TileGen::fragmentIndex(const std::vector<int64_t>& shape, int64_t j, int* half) {
  const Target& tg = *env_.target;
  const int per = tg.mmaAccumulators();
  V lane = b_.CreateURem(runTid_, ci(32));
  V strip = b_.CreateMul(b_.CreateUDiv(runTid_, ci(32)), ci(16));
  const int q = shape.size() == 1 ? int(j) * 2 : int(j % per);
  *half = q / 2;
  auto [row, col] = tg.mmaAccumulatorAt(b_, lane, q);
  row = b_.CreateAdd(strip, row);
  if (shape.size() == 1) return row;
  col = b_.CreateAdd(col, ci(j / per * 8));
  return b_.CreateAdd(b_.CreateMul(row, ci(shape[1])), col);
}

// row_sum/row_max/row_min of x[R, N] in a fragment run: each lane combines its N / 4 elements of
// each of its two rows, then the row's four lanes (lane bits 0 and 1) by a butterfly.
std::vector<V> TileGen::fragmentRowReduce(const Expr& e) {
  const Expr& a = operand(e, 0);
  const int per = env_.target->mmaAccumulators();
  const DType accT = isFloat(a.dtype) ? DType::F32 : DType::I32;
  std::vector<V> out;
  for (int half = 0; half < 2; ++half) {
    V r = reduceIdentity(e.reduce, accT);
    for (int64_t j = 0; j < a.shape.at(1) / 8 * per; ++j) {
      int h = 0;
      V i = fragmentIndex(a.shape, j, &h);
      if (h != half) continue;
      ownedElement_ = j, ownedHalf_ = h;
      r = combineRow(e.reduce, accT, r, convert(a.dtype, accT, elem(a, i)));
    }
    for (int k = 1; k <= 2; k *= 2) r = combineRow(e.reduce, accT, r, env_.target->shuffleXor(b_, r, k));
    out.push_back(convert(accT, e.dtype, r));
  }
  return out;
}

// At a fragment run's first statement, while the block is still in step: every product's staged
// operands (an a that reads tile locals comes from registers), copied by the whole block or
// already copied by the enclosing loop's pipeline, then one barrier.
void TileGen::stageRunProducts(const Stmt& first) {
  runOperands_.clear();
  runTid_ = env_.target->pinned(b_, env_.tid);
  auto members = runMembers_.find(&first);
  if (members == runMembers_.end()) return;
  bool copiedAhead = false, staged = false;
  std::function<void(const Expr&)> visit = [&](const Expr& e) {
    for (const auto& o : e.operands)
      if (o) visit(*o);
    if (!fragmentProducts_.count(&e)) return;
    const MmaTiling t = fragmentTiling(e);
    const Expr& a = operand(e, 0);
    const Expr& b = operand(e, 1);
    Target::MmaOperands ops{a.dtype, nullptr, t.ld, nullptr, t.ldB(), t.bNMajor};
    if (!readsTileLocal(fn_, a)) {
      ops.a = pipelinedOperand(a);
      copiedAhead = copiedAhead || ops.a;
      if (!ops.a) stageMmaA(a, t, ops.a = allocBytes(t.stagedRowsBytes(t.M))), staged = true;
    }
    ops.b = pipelinedOperand(b);
    copiedAhead = copiedAhead || ops.b;
    if (!ops.b) stageMmaB(b, t, ops.b = allocBytes(t.stagedBBytes())), staged = true;
    runOperands_[&e] = ops;
  };
  for (const Stmt* m : members->second)
    if (m->value) visit(*m->value);
  if (copiedAhead) env_.target->asyncCopiesWait(b_, 1);
  if (copiedAhead || staged) barrier();
}

// One-statement fragment runs, and the locals that live in registers across fragment runs (see
// the head of this file). After findRowRuns.
void TileGen::findFragmentStatements(const ir::Block& body) {
  // The rows of the tile locals that fragment runs write (0: runs of different rows).
  std::map<int, int64_t> rowsOf;
  for (const auto& [st, run] : rowRuns_)
    if (run.fragment && (st->kind == StmtKind::Let || st->kind == StmtKind::Assign) &&
        !fn_.locals.at(size_t(st->slot)).shape.empty()) {
      auto [it, fresh] = rowsOf.emplace(st->slot, run.rows);
      if (!fresh && it->second != run.rows) it->second = 0;
    }
  if (rowsOf.empty()) return;
  std::vector<const Stmt*> order;
  std::function<void(const ir::Block&)> walk = [&](const ir::Block& b) {
    for (const auto& sp : b) {
      order.push_back(sp.get());
      walk(sp->body);
      walk(sp->otherwise);
    }
  };
  walk(body);
  // The tile locals a statement itself references (not its blocks').
  auto refs = [&](const Stmt& s) {
    std::set<int> out;
    std::function<void(const Expr&)> visit = [&](const Expr& e) {
      if (e.kind == ExprKind::Local && !fn_.locals.at(size_t(e.index)).shape.empty()) out.insert(e.index);
      for (const auto& o : e.operands)
        if (o) visit(*o);
      for (const auto& r : e.region)
        if (r.start) visit(*r.start);
    };
    for (const Expr* x : {s.value.get(), s.lo.get(), s.hi.get()})
      if (x) visit(*x);
    for (const auto& d : s.region)
      if (d.start) visit(*d.start);
    if ((s.kind == StmtKind::Let || s.kind == StmtKind::Assign) && !fn_.locals.at(size_t(s.slot)).shape.empty())
      out.insert(s.slot);
    return out;
  };
  // Consecutive ones of a block (an accumulator's declarations) make one run, one barrier, as
  // long as none reads at another thread's element what an earlier one of them wrote.
  std::function<void(const ir::Block&)> mark = [&](const ir::Block& b) {
    const Stmt* open = nullptr;  // the previous statement, when it is such a run
    std::set<int> written, loose;  // the open run's
    for (const auto& sp : b) {
      const Stmt* s = sp.get();
      mark(s->body);
      mark(s->otherwise);
      int64_t rows = 0;
      for (int x : refs(*s))
        if (auto it = rowsOf.find(x); it != rowsOf.end() && it->second > 0) rows = it->second;
      const bool tile = s->kind == StmtKind::Store || ((s->kind == StmtKind::Let || s->kind == StmtKind::Assign) &&
                                                       !fn_.locals.at(size_t(s->slot)).shape.empty());
      std::optional<RowCheck> c;
      if (rows > 0 && tile && !rowRuns_.count(s)) c = checkStatement(*s, rows, int(T() / rows), true);
      if (!c || !c->products.empty()) {
        open = nullptr;
        continue;
      }
      bool clash = s->kind != StmtKind::Store && loose.count(s->slot);
      for (int x : c->loose) clash = clash || written.count(x);
      if (open && !clash && rowRuns_.at(open).rows == rows) {
        rowRuns_[open].last = false;
        rowRuns_[s] = {rows, int(T() / rows), false, true, true};
      } else {
        rowRuns_[s] = {rows, int(T() / rows), true, true, true};
        written.clear(), loose.clear();
      }
      if (s->kind != StmtKind::Store) written.insert(s->slot);
      loose.insert(c->loose.begin(), c->loose.end());
      open = s;
    }
  };
  mark(body);
  // Every reference in a fragment run of the local's rows, at owned elements; the first a
  // definition of the whole local.
  std::map<int, bool> good;
  for (const Stmt* s : order) {
    const RowRun* run = rowRunOf(*s);
    std::optional<RowCheck> c;
    if (run && run->fragment) c = checkStatement(*s, run->rows, run->lanes, true);
    for (int x : refs(*s)) {
      auto it = rowsOf.find(x);
      if (it == rowsOf.end()) continue;
      bool ok = it->second > 0 && c && run->rows == it->second && !c->loose.count(x);
      if (!good.count(x)) {
        const bool defines = s->slot == x && (s->kind == StmtKind::Let ||
                             (s->kind == StmtKind::Assign && s->assign == ir::AssignOp::Set && !reads(*s->value, x)));
        good[x] = ok && defines;
      } else {
        good[x] = good[x] && ok;
      }
    }
  }
  for (const auto& [x, ok] : good)
    if (ok) {
      const auto& shape = fn_.locals.at(size_t(x)).shape;
      fragmentPrivate_[x] = shape.size() == 1 ? 2 : shape[1] / 2;
    }
}

// row_sum/row_max/row_min of x[R, N] in a run: each lane combines its columns, then the group's
// lanes by a butterfly; every lane writes its row's result (the same value), so each reads back
// its own write.
TileGen::TileRef TileGen::ownedRowReduce(const Expr& e) {
  const Expr& a = operand(e, 0);
  const int64_t N = a.shape.at(1);
  const int lanes = run_->lanes;
  const DType accT = isFloat(a.dtype) ? DType::F32 : DType::I32;
  auto combine = [&](V x, V y) { return combineRow(e.reduce, accT, x, y); };
  TileRef out = allocTemp(run_->rows, e.dtype);
  V row = b_.CreateUDiv(env_.tid, ci(lanes));
  V first = b_.CreateAdd(b_.CreateMul(row, ci(N)), b_.CreateURem(env_.tid, ci(lanes)));
  V r = reduceIdentity(e.reduce, accT);
  for (int64_t j = 0; j < N / lanes; ++j) {
    ownedElement_ = j;
    r = combine(r, convert(a.dtype, accT, elem(a, b_.CreateAdd(first, ci(j * lanes)))));
  }
  for (int k = lanes / 2; k >= 1; k /= 2) r = combine(r, env_.target->shuffleXor(b_, r, k));
  writeTile(out, row, convert(accT, e.dtype, r));
  return out;
}

}  // namespace mk::backend::tile
