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
#include <algorithm>

#include "backend/tile/tile_gen.h"

namespace mk::backend::tile {

namespace {

// What one statement's value reads and needs, for joining a run of `rows` rows, `lanes` a row.
struct RowCheck {
  int64_t rows = 0;
  int lanes = 0;
  bool ok = true;
  bool blockWide = false;   // holds a product (computed by the whole block first)
  bool rowReduce = false;
  std::set<int> loose;      // tile locals read at other elements (not at the thread's own)

  bool rowsOk(const std::vector<int64_t>& shape) const {
    if (shape.size() == 1) return shape[0] == rows;
    return shape.size() == 2 && shape[0] == rows && shape[1] % lanes == 0;
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
        blockWide = true;
        return children(false);
      }
      case ExprKind::Reduce:
      case ExprKind::Dot:
      case ExprKind::RowDot:
      case ExprKind::ColDot: ok = false; return;
    }
    ok = false;
  }
};

}  // namespace

// Marks the runs of `stmts` and of the blocks inside them (rowRuns_).
void TileGen::findRowRuns(const ir::Block& stmts) {
  const int T = this->T();
  struct Open {
    std::vector<const Stmt*> members;
    int64_t rows = 0;
    int lanes = 0;
    bool rowReduce = false;
    std::set<int> written, loose;
  };
  std::optional<Open> run;
  auto close = [&] {
    if (run && run->members.size() >= 2 && run->rowReduce) {
      for (size_t i = 0; i < run->members.size(); ++i)
        rowRuns_[run->members[i]] = {run->rows, run->lanes, i == 0, i + 1 == run->members.size()};
      // Its lets that it reads only at owned elements may live in registers (placeLocals decides).
      for (const Stmt* m : run->members) {
        const auto& shape = fn_.locals.at(size_t(m->slot)).shape;
        if (m->kind == StmtKind::Let && !shape.empty() && !run->loose.count(m->slot))
          privateCandidates_[m->slot] = shape.size() == 1 ? 1 : shape[1] / run->lanes;
      }
    }
    run.reset();
  };
  // Whether `s` may be a run's statement: its target's rows (0 for a scalar) and its reads.
  auto check = [&](const Stmt& s, int64_t rows, int lanes) -> std::optional<RowCheck> {
    if (s.kind != StmtKind::Let && s.kind != StmtKind::Assign) return std::nullopt;
    if (!streamedOf(s, v_.streamed).empty() || accumulatesRowdot(s) || accumulatesMma(s)) return std::nullopt;
    RowCheck c;
    c.rows = rows, c.lanes = lanes;
    const auto& L = fn_.locals.at(size_t(s.slot));
    if (!L.shape.empty() && !c.rowsOk(L.shape)) return std::nullopt;
    if (s.value) {
      if (!L.shape.empty() && !s.value->shape.empty() && s.value->shape != L.shape) return std::nullopt;
      c.expr(fn_, *s.value, !s.value->shape.empty());
    }
    if (!c.ok || (!L.shape.empty() && c.loose.count(s.slot))) return std::nullopt;
    return c;
  };
  for (const auto& sp : stmts) {
    const Stmt& s = *sp;
    findRowRuns(s.body);
    findRowRuns(s.otherwise);
    const auto& L = (s.kind == StmtKind::Let || s.kind == StmtKind::Assign) ? &fn_.locals.at(size_t(s.slot)) : nullptr;
    // Join the open run.
    if (run && L) {
      if (auto c = check(s, run->rows, run->lanes); c && !c->blockWide) {
        bool clash = run->loose.count(s.slot) > 0;
        for (int x : c->loose) clash = clash || run->written.count(x) > 0;
        if (!clash) {
          run->members.push_back(&s);
          run->rowReduce = run->rowReduce || c->rowReduce;
          if (!L->shape.empty()) run->written.insert(s.slot);
          run->loose.insert(c->loose.begin(), c->loose.end());
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
    if (auto c = check(s, rows, lanes)) {
      run = Open{{&s}, rows, lanes, c->rowReduce, {s.slot}, c->loose};
      if (c->blockWide) run->loose.clear();  // the product is done, with a barrier, before the run writes
    }
  }
  close();
}

// The register of a private local's element that the thread is at: an [R] local's one element
// wherever it is read (a [R, C] statement reads it through repeat_cols at every column).
llvm::AllocaInst* TileGen::privateElement(int slot) {
  const auto& L = fn_.locals.at(size_t(slot));
  auto& slots = privateSlots_[slot];
  if (slots.empty())
    for (int64_t j = 0; j < private_.at(slot); ++j) slots.push_back(entryAlloca(repr(L.dtype)));
  return slots.at(L.shape.size() == 1 ? 0 : size_t(ownedElement_));
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
