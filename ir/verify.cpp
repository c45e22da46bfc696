// The megakernel verifier. Deadlock freedom: with blocking, in-order queues, if every queue runs
// its tasks in increasing global order and every wait is on producers earlier in that order, the
// earliest unfinished task can always run (its queue predecessors and its producers are all
// earlier, hence finished), so by induction every task finishes. Race freedom: every conflicting
// pair of tasks is ordered by program order on one SM, or by a wait of the later task or of a
// task before it in its SM's queue on a counter the earlier one produces.
#include "ir/verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

namespace mk::ir {

MK_DIAGNOSTIC(ScheduleMalformed, Error, "malformed megakernel: {0}", std::string);
MK_DIAGNOSTIC(ScheduleQueueOrder, Error,
              "SM {0} runs task {1} before task {2}, against the global order (deadlock risk)", int,
              std::string, std::string);
MK_DIAGNOSTIC(ScheduleQueued, Error, "task {0} {1}", std::string, std::string);
MK_DIAGNOSTIC(ScheduleWaitOrder, Error,
              "task {0} waits on counter {1} whose producer {2} does not run before it in the "
              "global order (deadlock)",
              std::string, int, std::string);
MK_DIAGNOSTIC(ScheduleSignal, Error, "counter {0} ({1}): {2}", int, std::string, std::string);
MK_DIAGNOSTIC(ScheduleRaw, Error, "task {0} reads {1} written by {2} but does not wait for it",
              std::string, std::string, std::string);
MK_DIAGNOSTIC(ScheduleWaw, Error,
              "task {0} writes {1} also written by {2} but does not wait for it", std::string,
              std::string, std::string);
MK_DIAGNOSTIC(ScheduleWar, Error, "task {0} writes {1} read by {2} but does not wait for it",
              std::string, std::string, std::string);
MK_DIAGNOSTIC(ScheduleUncoveredRead, Error,
              "task {0} reads {1} but {2} is written by no earlier task", std::string, std::string,
              std::string);
MK_DIAGNOSTIC(ScheduleSmem, Error,
              "tasks need {0} bytes of shared memory but target '{1}' offers {2} per block",
              int64_t, std::string, int);

RegionIndex::RegionIndex(const std::vector<Task>& tasks, bool writes) {
  for (const Task& t : tasks)
    for (const Region& r : writes ? t.writes : t.reads) {
      if (r.tensor < 0) continue;
      if (r.tensor >= static_cast<int>(tensors_.size())) tensors_.resize(r.tensor + 1);
      Entry e{0, 1, t.id, &r};
      if (!r.ranges.empty()) e.lo = r.ranges[0].first, e.hi = r.ranges[0].second;
      PerTensor& pt = tensors_[r.tensor];
      pt.entries.push_back(e);
      pt.longest = std::max(pt.longest, e.hi - e.lo);
    }
  for (PerTensor& pt : tensors_)
    std::stable_sort(pt.entries.begin(), pt.entries.end(),
                     [](const Entry& a, const Entry& b) { return a.lo < b.lo; });
}

void RegionIndex::overlapping(const Region& r, int before, std::vector<int>& out) const {
  forEachOverlap(r, before, [&](int task, const Region&) { out.push_back(task); });
}

std::string taskName(const Megakernel& mk, int task) {
  if (task < 0 || task >= static_cast<int>(mk.tasks.size())) return fmt::format("<task {}>", task);
  const Task& t = mk.tasks[task];
  std::string op = "?";
  if (t.node >= 0 && t.node < static_cast<int>(mk.graph.nodes.size()) && mk.graph.nodes[t.node].func)
    op = mk.graph.nodes[t.node].func->opName.empty() ? mk.graph.nodes[t.node].func->name
                                                      : mk.graph.nodes[t.node].func->opName;
  return fmt::format("{}#{}[{}]", op, t.node, fmt::join(t.index, ","));
}

std::string regionName(const Graph& g, const Region& r) {
  std::string name = r.tensor >= 0 && r.tensor < static_cast<int>(g.tensors.size())
                         ? g.tensors[r.tensor].name
                         : fmt::format("<tensor {}>", r.tensor);
  if (r.ranges.empty()) return name;
  name += "[";
  for (size_t i = 0; i < r.ranges.size(); ++i)
    name += fmt::format("{}{}..{}", i ? ", " : "", r.ranges[i].first, r.ranges[i].second);
  return name + ")";
}

namespace {

// A part of `want` (dims d.. of it) that no box in `boxes` covers, or nullopt when they cover it
// all. Cuts dimension d at the boxes' ends; each elementary segment must be covered in the
// remaining dims by the boxes spanning it. Each box is handed to the segments it spans, so a
// level costs O(k log k + total spans) rather than segments x boxes.
std::optional<Region> uncovered(const Region& want, const std::vector<const Region*>& boxes,
                                size_t d) {
  if (d == want.ranges.size()) {
    if (boxes.empty()) return want;
    return std::nullopt;
  }
  auto [lo, hi] = want.ranges[d];
  if (d + 1 == want.ranges.size()) {  // the last dimension: a sorted sweep, no recursion
    std::vector<std::pair<int64_t, int64_t>> iv;
    iv.reserve(boxes.size());
    for (const Region* b : boxes) iv.push_back(b->ranges[d]);
    std::sort(iv.begin(), iv.end());
    int64_t reached = lo;
    for (auto [a, e] : iv) {
      if (a > reached) break;
      reached = std::max(reached, e);
    }
    if (reached >= hi) return std::nullopt;
    Region gap = want;
    auto next = std::upper_bound(iv.begin(), iv.end(), std::pair{reached, INT64_MAX});
    gap.ranges[d] = {reached, next == iv.end() ? hi : std::min(hi, next->first)};
    return gap;
  }
  std::vector<int64_t> cuts{lo, hi};
  for (const Region* b : boxes)
    for (int64_t v : {b->ranges[d].first, b->ranges[d].second})
      if (v > lo && v < hi) cuts.push_back(v);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<std::vector<const Region*>> spanning(cuts.size() - 1);
  for (const Region* b : boxes) {
    size_t first = std::lower_bound(cuts.begin(), cuts.end(), std::max(lo, b->ranges[d].first)) - cuts.begin();
    size_t last = std::lower_bound(cuts.begin(), cuts.end(), std::min(hi, b->ranges[d].second)) - cuts.begin();
    for (size_t i = first; i < last; ++i) spanning[i].push_back(b);
  }
  for (size_t i = 0; i < spanning.size(); ++i) {
    Region part = want;
    part.ranges[d] = {cuts[i], cuts[i + 1]};
    if (spanning[i].empty()) {
      // Report the widest gap along d: merge the following empty segments.
      while (i + 1 < spanning.size() && spanning[i + 1].empty()) part.ranges[d].second = cuts[++i + 1];
      return part;
    }
    if (auto gap = uncovered(part, spanning[i], d + 1)) return gap;
  }
  return std::nullopt;
}

}  // namespace

bool verify(const Megakernel& mk, DiagnosticEngine& diags) {
  bool ok = true;  // not diags.errorCount(): the engine may drop errors past its limit
  auto report = [&](SourceRange range, const auto& def, const auto&... args) {
    ok = false;
    diags.emit(range, def, args...);
  };
  const int ntasks = static_cast<int>(mk.tasks.size());
  const int ncounters = static_cast<int>(mk.counters.size());
  // Where to point: the task's line in a parsed schedule, else the call that made its node.
  auto where = [&](int task) {
    const Task& t = mk.tasks[task];
    if (t.range.valid()) return t.range;
    return t.node >= 0 && t.node < static_cast<int>(mk.graph.nodes.size())
               ? mk.graph.nodes[t.node].call
               : SourceRange{};
  };
  auto name = [&](int task) { return taskName(mk, task); };

  // --- Well-formedness: ids, references. Later checks assume it. ---
  for (int i = 0; i < ntasks; ++i) {
    const Task& t = mk.tasks[i];
    if (t.id != i) report({}, ScheduleMalformed, fmt::format("task {} has id {}", i, t.id));
    if (t.node < 0 || t.node >= static_cast<int>(mk.graph.nodes.size()))
      report({}, ScheduleMalformed, fmt::format("task {} belongs to no node ({})", i, t.node));
    for (int c : t.waits)
      if (c < 0 || c >= ncounters)
        report({}, ScheduleMalformed, fmt::format("task {} waits on unknown counter {}", i, c));
    for (int c : t.signals)
      if (c < 0 || c >= ncounters)
        report({}, ScheduleMalformed, fmt::format("task {} signals unknown counter {}", i, c));
  }
  for (int c = 0; c < ncounters; ++c) {
    if (mk.counters[c].id != c)
      report({}, ScheduleMalformed, fmt::format("counter {} has id {}", c, mk.counters[c].id));
    for (int p : mk.counters[c].producers)
      if (p < 0 || p >= ntasks)
        report({}, ScheduleMalformed, fmt::format("counter {} has unknown producer {}", c, p));
  }
  if (!ok) return false;

  // --- (a) Deadlock freedom. ---
  std::vector<int> queuedOn(ntasks, -1), timesQueued(ntasks, 0);
  for (int sm = 0; sm < static_cast<int>(mk.queues.size()); ++sm) {
    const auto& q = mk.queues[sm];
    for (size_t i = 0; i < q.size(); ++i) {
      if (q[i] < 0 || q[i] >= ntasks) {
        report({}, ScheduleMalformed, fmt::format("SM {} queues unknown task {}", sm, q[i]));
        continue;
      }
      ++timesQueued[q[i]];
      queuedOn[q[i]] = sm;
      if (i > 0 && q[i - 1] >= 0 && q[i - 1] < ntasks && q[i - 1] >= q[i])
        report(where(q[i - 1]), ScheduleQueueOrder, sm, name(q[i - 1]), name(q[i]));
    }
  }
  if (static_cast<int>(mk.queues.size()) > mk.target.sms)
    report({}, ScheduleMalformed,
               fmt::format("{} queues for a target with {} SMs", mk.queues.size(), mk.target.sms));
  for (int i = 0; i < ntasks; ++i) {
    const Task& t = mk.tasks[i];
    if (timesQueued[i] != 1)
      report(where(i), ScheduleQueued, name(i),
                 fmt::format("is queued {} times (it must be queued exactly once)", timesQueued[i]));
    else if (queuedOn[i] != t.sm)
      report(where(i), ScheduleQueued, name(i),
                 fmt::format("is placed on SM {} but queued on SM {}", t.sm, queuedOn[i]));
  }
  // Sorted producer lists, for membership tests below.
  std::vector<std::vector<int>> producers(ncounters);
  for (int c = 0; c < ncounters; ++c) {
    producers[c] = mk.counters[c].producers;
    std::sort(producers[c].begin(), producers[c].end());
    if (std::adjacent_find(producers[c].begin(), producers[c].end()) != producers[c].end())
      report(mk.counters[c].range, ScheduleSignal, c, mk.counters[c].why, "lists a producer twice");
  }
  for (int i = 0; i < ntasks; ++i)
    for (int c : mk.tasks[i].waits)
      if (!producers[c].empty() && producers[c].back() >= i)
        report(where(i), ScheduleWaitOrder, name(i), c, name(producers[c].back()));
  // Producers must signal exactly the counters they belong to: a missing signal hangs the
  // waiters, an extra one releases them early in the next step (epoch-based targets).
  std::vector<std::vector<int>> signals(ntasks);  // sorted, to count without scanning
  for (int i = 0; i < ntasks; ++i) {
    signals[i] = mk.tasks[i].signals;
    std::sort(signals[i].begin(), signals[i].end());
  }
  for (int c = 0; c < ncounters; ++c)
    for (int p : producers[c]) {
      auto [b, e] = std::equal_range(signals[p].begin(), signals[p].end(), c);
      if (e - b != 1)
        report(mk.counters[c].range, ScheduleSignal, c, mk.counters[c].why,
               fmt::format("producer {} signals it {} times instead of once", name(p), e - b));
    }
  for (int i = 0; i < ntasks; ++i)
    for (int c : mk.tasks[i].signals)
      if (!std::binary_search(producers[c].begin(), producers[c].end(), i))
        report(mk.counters[c].range, ScheduleSignal, c, mk.counters[c].why,
               fmt::format("signalled by {}, which is not one of its producers", name(i)));

  // --- (b) Every conflicting earlier task is waited for directly or runs on the same SM. ---
  // A task's place in its SM's queue: a producer earlier in the same queue needs no wait.
  std::vector<int> queuePos(ntasks, -1);
  for (const auto& q : mk.queues)
    for (size_t k = 0; k < q.size(); ++k)
      if (q[k] >= 0 && q[k] < ntasks && queuePos[q[k]] < 0) queuePos[q[k]] = static_cast<int>(k);
  // Where in each SM's queue a counter is first waited on: a later task of that queue finds the
  // count reached too (the earlier task's acquire ordered the producers before both).
  std::map<std::pair<int, int>, int> firstWait;  // (sm, counter) -> queue position
  for (int sm = 0; sm < static_cast<int>(mk.queues.size()); ++sm)
    for (size_t k = 0; k < mk.queues[sm].size(); ++k) {
      const int id = mk.queues[sm][k];
      if (id < 0 || id >= ntasks) continue;
      for (int c : mk.tasks[id].waits) firstWait.emplace(std::pair(sm, c), static_cast<int>(k));
    }
  std::vector<std::vector<int>> countersOf(ntasks);  // the counters that list each producer
  for (int c = 0; c < ncounters; ++c)
    for (int p : producers[c])
      if (p >= 0 && p < ntasks) countersOf[p].push_back(c);
  auto ordered = [&](int p, int t) {
    const Task& tt = mk.tasks[t];
    if (mk.tasks[p].sm == tt.sm && tt.sm >= 0 && queuePos[p] < queuePos[t]) return true;
    for (int c : countersOf[p]) {
      auto it = firstWait.find(std::pair(tt.sm, c));
      if (it != firstWait.end() && it->second <= queuePos[t]) return true;
    }
    return false;
  };
  auto isWeight = [&](int tensor) {
    return tensor >= 0 && tensor < static_cast<int>(mk.graph.tensors.size()) &&
           mk.graph.tensors[tensor].kind == Tensor::Weight;
  };
  RegionIndex writes(mk.tasks, true), reads(mk.tasks, false);
  for (int i = 0; i < ntasks; ++i) {
    const Task& t = mk.tasks[i];
    // Conflicting earlier tasks that are not ordered before task i, in increasing id order.
    auto unordered = [&](const RegionIndex& index, const Region& r) {
      std::vector<int> ps;
      index.overlapping(r, i, ps);
      std::erase_if(ps, [&](int p) { return ordered(p, i); });
      std::sort(ps.begin(), ps.end());
      return ps;
    };
    for (const Region& r : t.reads)
      if (!isWeight(r.tensor))
        for (int p : unordered(writes, r))
          report(where(i), ScheduleRaw, name(i), regionName(mk.graph, r), name(p));
    for (const Region& w : t.writes) {
      for (int p : unordered(writes, w))
        report(where(i), ScheduleWaw, name(i), regionName(mk.graph, w), name(p));
      for (int p : unordered(reads, w))
        report(where(i), ScheduleWar, name(i), regionName(mk.graph, w), name(p));
    }
  }

  // --- (c) Activations are written before they are read. ---
  for (int i = 0; i < ntasks; ++i)
    for (const Region& r : mk.tasks[i].reads) {
      if (r.tensor < 0 || r.tensor >= static_cast<int>(mk.graph.tensors.size()) ||
          mk.graph.tensors[r.tensor].kind != Tensor::Activation)
        continue;
      std::vector<const Region*> boxes;
      writes.forEachOverlap(r, i, [&](int, const Region& box) {
        if (box.ranges.size() == r.ranges.size()) boxes.push_back(&box);
      });
      if (auto gap = uncovered(r, boxes, 0))
        report(where(i), ScheduleUncoveredRead, name(i), regionName(mk.graph, r),
                   regionName(mk.graph, *gap));
    }

  // --- (d) Shared memory. ---
  // Point at the schedule's file when it was parsed from one; a compiled kernel has no place.
  if (mk.memory.smemPerTask > mk.target.smemPerBlock) {
    SourceRange file;
    if (ntasks > 0 && mk.tasks[0].range.valid()) file = {mk.tasks[0].range.file, 0, 0};
    report(file, ScheduleSmem, mk.memory.smemPerTask, mk.target.name, mk.target.smemPerBlock);
  }

  return ok;
}

}  // namespace mk::ir
