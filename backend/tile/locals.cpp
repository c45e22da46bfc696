// Where the tile locals of an op body live in shared memory for a task: each gets bytes of its
// own only while it is live, so locals whose live ranges are apart share bytes (an epilogue's
// chain of lets, the accumulators of a loop and what the loop's results are turned into).
//
// A local is live from its first reference to its last, in the order of the body's statements
// (an `if`'s branches one after the other, which only over-approximates). A loop stretches the
// range of a local over the whole loop when the local is referenced inside the loop and either
// also outside it, or first read there (its value comes from the previous iteration). Two locals
// touched by one statement never share bytes: a statement may write one while it still reads the
// other. A row-owned run (rows.cpp) is one statement here: its threads are not ordered between
// its statements.
#include <algorithm>

#include "backend/tile/tile_gen.h"

namespace mk::backend::tile {

namespace {

struct Walk {
  std::vector<TileGen::LiveRange>& live;
  std::vector<TileGen::LoopSpan>& loops;  // in the order they end: inner loops first
  const std::set<const Stmt*>& joined;    // statements of a row-owned run after its first
  int64_t at = 0;

  void touch(int slot, bool write) {
    TileGen::LiveRange& r = live.at(size_t(slot));
    if (r.first < 0) r.first = at, r.definedFirst = write;
    r.last = at;
  }
  void expr(const Expr& e) {
    if (e.kind == ExprKind::Local) touch(e.index, false);
    for (const auto& o : e.operands)
      if (o) expr(*o);
    for (const auto& d : e.region)
      if (d.start) expr(*d.start);
  }
  void block(const ir::Block& b) {
    for (const auto& s : b) stmt(*s);
  }
  void stmt(const Stmt& s) {
    if (joined.count(&s)) --at;  // the run is one statement
    const int64_t here = at;
    if (s.value) expr(*s.value);
    for (const auto& d : s.region)
      if (d.start) expr(*d.start);
    if (s.lo) expr(*s.lo);
    if (s.hi) expr(*s.hi);
    if (s.kind == StmtKind::Let || s.kind == StmtKind::For)
      touch(s.slot, true);
    else if (s.kind == StmtKind::Assign)
      touch(s.slot, s.assign == ir::AssignOp::Set && !(s.value && TileGen::reads(*s.value, s.slot)));
    at = here + 1;
    block(s.body);
    block(s.otherwise);
    if (s.kind == StmtKind::For) loops.push_back({&s, here, at - 1});
  }
};

bool overlaps(int64_t a0, int64_t a1, int64_t b0, int64_t b1) { return a0 <= b1 && b0 <= a1; }

}  // namespace

void TileGen::placeLocals() {
  live_.assign(fn_.locals.size(), LiveRange{});
  loops_.clear();
  std::set<const Stmt*> joined;
  for (const auto& [s, run] : rowRuns_)
    if (!run.first) joined.insert(s);
  Walk w{live_, loops_, joined, 0};
  w.block(fn_.body);
  for (const auto& [loop, head, end] : loops_)
    for (LiveRange& r : live_) {
      if (r.first < 0 || !overlaps(r.first, r.last, head, end)) continue;
      const bool inside = r.first > head && r.last <= end;
      if (inside && r.definedFirst) continue;
      r.first = std::min(r.first, head), r.last = std::max(r.last, end);
    }
  // A run is one statement here, so a local all of whose references are in one run and that its
  // let defines first has one point of life: it stays in registers (rows.cpp).
  for (const auto& [slot, owned] : privateCandidates_) {
    const LiveRange& r = live_[size_t(slot)];
    if (r.first == r.last && r.definedFirst) private_[slot] = owned;
  }
  for (const auto& [slot, owned] : fragmentPrivate_) private_[slot] = owned;

  // First fit, largest first, among the locals already placed whose ranges overlap.
  std::vector<int> order;
  for (size_t s = 0; s < fn_.locals.size(); ++s)
    if (!fn_.locals[s].shape.empty() && live_[s].first >= 0 && !privateLocal(int(s))) order.push_back(int(s));
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return localBytes(x) > localBytes(y); });
  tileOffset_.assign(fn_.locals.size(), SmemLayout::kTiles);
  localsEnd_ = SmemLayout::kTiles;
  std::vector<int> placed;
  for (int s : order) {
    std::vector<std::pair<int64_t, int64_t>> taken;
    for (int p : placed)
      if (overlaps(live_[size_t(s)].first, live_[size_t(s)].last, live_[size_t(p)].first, live_[size_t(p)].last))
        taken.emplace_back(tileOffset_[size_t(p)], tileOffset_[size_t(p)] + localBytes(p));
    std::sort(taken.begin(), taken.end());
    int64_t at = SmemLayout::kTiles;
    for (auto [lo, hi] : taken) {
      if (at + localBytes(s) <= lo) break;
      at = std::max(at, hi);
    }
    tileOffset_[size_t(s)] = at;
    localsEnd_ = std::max(localsEnd_, at + localBytes(s));
    placed.push_back(s);
  }
}

int64_t TileGen::localBytes(int slot) const {
  return align16(abi::shapeElements(fn_.locals.at(size_t(slot)).shape) * 4);
}

// The end of the bytes of the tile locals live during `loop` (a `for` of the body), but for
// `except`'s, and of the buffers an enclosing loop keeps over it (pipeline.cpp).
int64_t TileGen::liveLocalsEnd(const Stmt& loop, const std::vector<int>& except) {
  const auto it = std::find_if(loops_.begin(), loops_.end(), [&](const LoopSpan& l) { return l.loop == &loop; });
  const int64_t head = it->head, end = it->end;
  int64_t top = std::max<int64_t>(SmemLayout::kTiles, loopBuffersEnd_);
  for (size_t slot = 0; slot < fn_.locals.size(); ++slot) {
    const LiveRange& r = live_[slot];
    if (fn_.locals[slot].shape.empty() || privateLocal(int(slot)) || r.first < 0 || !overlaps(r.first, r.last, head, end)) continue;
    if (std::find(except.begin(), except.end(), int(slot)) != except.end()) continue;
    top = std::max(top, tileOffset_[slot] + localBytes(int(slot)));
  }
  return top;
}

}  // namespace mk::backend::tile
