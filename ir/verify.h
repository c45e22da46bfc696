// The megakernel verifier: proves a schedule deadlock-free and race-free before code is emitted,
// plus the per-tensor region index it shares with the scheduler.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "ir/megakernel.h"
#include "support/diagnostics.h"

namespace mk::ir {

// Every task's read (or write) boxes, indexed per tensor by their first dimension, to find the
// boxes overlapping a query box without scanning all pairs. Entries are sorted by their low end
// in dim 0; a query [lo, hi) looks at entries whose low end lies in (lo - longest, hi), so it costs
// O(log n + candidates) where boxes of a tensor have similar lengths (the tiled case).
class RegionIndex {
 public:
  RegionIndex(const std::vector<Task>& tasks, bool writes);
  // Appends to `out` the ids of tasks with id < `before` whose box of r.tensor overlaps r
  // (each at most once; in no particular order).
  void overlapping(const Region& r, int before, std::vector<int>& out) const;
  // Calls f(taskId, box) for the same boxes.
  template <typename F>
  void forEachOverlap(const Region& r, int before, F&& f) const;

 private:
  struct Entry {
    int64_t lo, hi;  // dim 0 (0, 1 for rank-0 tensors)
    int task;
    const Region* box;
  };
  struct PerTensor {
    std::vector<Entry> entries;  // sorted by lo
    int64_t longest = 0;
  };
  std::vector<PerTensor> tensors_;  // by tensor id
};

template <typename F>
void RegionIndex::forEachOverlap(const Region& r, int before, F&& f) const {
  if (r.tensor < 0 || r.tensor >= static_cast<int>(tensors_.size())) return;
  const PerTensor& t = tensors_[r.tensor];
  int64_t lo = r.ranges.empty() ? 0 : r.ranges[0].first;
  int64_t hi = r.ranges.empty() ? 1 : r.ranges[0].second;
  // The first entry whose low end is >= hi cannot overlap; walk back from there.
  auto it = std::lower_bound(t.entries.begin(), t.entries.end(), hi,
                             [](const Entry& e, int64_t v) { return e.lo < v; });
  while (it != t.entries.begin()) {
    --it;
    if (it->lo + t.longest <= lo) break;  // this and all earlier entries end at or before lo
    if (it->task < before && it->hi > lo && it->box->overlaps(r)) f(it->task, *it->box);
  }
}

// How tasks, tensors and regions are named in diagnostics and schedule printouts:
// "matvec#3[2]" (op name, node id, task grid index) and "h[0..2048)" / "k[0..512, 3..4)".
std::string taskName(const Megakernel& mk, int task);
std::string regionName(const Graph& g, const Region& r);

// Checks (a) deadlock freedom: each queue runs its tasks in increasing global order, every
// counter a task waits on has only earlier producers, and producers signal exactly their
// counters; (b) every RAW, WAW and WAR pair on a non-weight tensor is ordered by a direct wait or
// by running on the same SM; (c) every activation region a task reads was written by earlier
// tasks; (d) the shared memory plan fits the target. Reports each failure; true when none.
bool verify(const Megakernel& mk, DiagnosticEngine& diags);

}  // namespace mk::ir
