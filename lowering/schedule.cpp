// The megakernel scheduler. Costs: region analysis is linear in tasks x body size; dependencies
// use per-tensor interval indexes (ir::RegionIndex), so they cost O(tasks * log n + overlapping
// pairs); grid syncs and whole-node producer sets are never materialized per consumer; placement
// is O(tasks * SMs).
#include "lowering/schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "ir/verify.h"
#include "lowering/regions.h"

namespace mk::lowering {

using namespace mk::ir;

namespace {

constexpr int64_t kBufferAlign = 256;

int64_t alignUp(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

// Why a consumer waits for a producer node: shown in the counter's `why`.
struct Reason {
  enum Kind { Read, Overwrite, OverwriteRead, After, Grid } kind;
  const Region* region = nullptr;  // Read / Overwrite / OverwriteRead
  int tensor = -1;                 // After
  bool operator==(const Reason&) const = default;
};

// One consumer's producers within one producer node.
struct Group {
  std::vector<int> tasks;
  std::vector<Reason> reasons;
  bool whole = false;  // every task of the node (a grid sync)
};

// "0..3, 8, 10..11": a sorted list of ints with runs collapsed (inclusive ends).
std::string runs(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    s += (s.empty() ? "" : ", ") +
         (j == i ? std::to_string(v[i]) : fmt::format("{}..{}", v[i], v[j]));
    i = j + 1;
  }
  return s;
}

class Scheduler {
 public:
  Scheduler(Graph graph, const TargetDesc& target) {
    mk_.graph = std::move(graph);
    mk_.target = target;
  }

  Megakernel run() {
    makeTasks();
    makeDependencies();
    place();
    pruneWaits();
    mk_.memory = planMemory(mk_.graph);
    return std::move(mk_);
  }

 private:
  // Tasks get their ids node by node, in the grid's row-major order, except where a node's tasks
  // move only a bound's worth of bytes known (an attention over keys up to a run-time position,
  // each bounded by the whole cache): they are weighed by their bytes with the step inputs at zero
  // (each query block's keys up to its own rows) and, where those differ, numbered longest first.
  // Ids are the global order every queue follows (ir/verify.h), so placement (place()) then deals
  // the long tasks out first and none of them meets another on one SM late in the node.
  void makeTasks() {
    const Graph& g = mk_.graph;
    for (size_t n = 0; n < g.nodes.size(); ++n) {
      const Node& node = g.nodes[n];
      nodeFirst_.push_back(static_cast<int>(mk_.tasks.size()));
      int64_t count = node.func ? node.func->taskCount() : 0;
      nodeCount_.push_back(static_cast<int>(count));
      const Shape& grid = node.func ? node.func->taskGrid : Shape{};
      std::vector<std::pair<std::vector<int64_t>, TaskAccess>> tasks;
      std::vector<int64_t> index(grid.size(), 0);
      for (int64_t k = 0; k < count; ++k) {
        // Row-major: the last dimension varies fastest.
        for (size_t d = grid.size(), rest = k; d-- > 0;) {
          index[d] = static_cast<int64_t>(rest) % grid[d];
          rest /= grid[d];
        }
        tasks.emplace_back(index, analyzeTask(g, node, index));
      }
      const bool bounded = !tasks.empty() && std::all_of(tasks.begin(), tasks.end(), [](const auto& t) {
        return !t.second.bytesExact && t.second.bytesAtZero >= 0;
      });
      auto weight = [&](const TaskAccess& a) { return std::max<int64_t>(bounded ? a.bytesAtZero : a.bytes, 1); };
      if (bounded)
        std::stable_sort(tasks.begin(), tasks.end(),
                         [&](const auto& x, const auto& y) { return weight(x.second) > weight(y.second); });
      for (auto& [taskIndex, a] : tasks) {
        Task t;
        t.id = static_cast<int>(mk_.tasks.size());
        t.node = static_cast<int>(n);  // a position in graph.nodes (normally equal to node.id)
        t.index = taskIndex;
        t.reads = std::move(a.reads);
        t.writes = std::move(a.writes);
        t.bytes = a.bytes;
        t.bytesExact = a.bytesExact;
        t.flops = a.flops;
        placeWeight_.push_back(weight(a));
        mk_.tasks.push_back(std::move(t));
      }
    }
  }

  bool isWeight(int tensor) const { return mk_.graph.tensors[tensor].kind == Tensor::Weight; }

  void makeDependencies() {
    const Graph& g = mk_.graph;
    RegionIndex writes(mk_.tasks, true), reads(mk_.tasks, false);
    std::vector<std::vector<int>> writers(g.tensors.size());  // task ids, increasing
    for (const Task& t : mk_.tasks)
      for (const Region& w : t.writes) writers[w.tensor].push_back(t.id);
    wholeCounter_.assign(g.nodes.size(), -1);

    int lastSync = 0;  // the first node after the latest grid sync
    std::map<int, Group> groups;  // producer node -> producers
    for (size_t n = 0; n < g.nodes.size(); ++n) {
      const Node& node = g.nodes[n];
      // Tasks before the previous grid sync are covered through the tasks after it.
      int syncFrom = lastSync;
      if (node.gridSyncBefore) lastSync = static_cast<int>(n);
      for (int k = 0; k < nodeCount_[n]; ++k) {
        const int id = nodeFirst_[n] + k;
        const Task& t = mk_.tasks[id];
        groups.clear();
        auto add = [&](int p, Reason why) {
          Group& gr = groups[mk_.tasks[p].node];
          gr.tasks.push_back(p);
          if (std::find(gr.reasons.begin(), gr.reasons.end(), why) == gr.reasons.end())
            gr.reasons.push_back(why);
        };
        for (const Region& r : t.reads)
          if (!isWeight(r.tensor))
            writes.forEachOverlap(r, id, [&](int p, const Region&) { add(p, {Reason::Read, &r}); });
        for (const Region& w : t.writes) {
          writes.forEachOverlap(w, id, [&](int p, const Region&) { add(p, {Reason::Overwrite, &w}); });
          reads.forEachOverlap(w, id, [&](int p, const Region&) { add(p, {Reason::OverwriteRead, &w}); });
        }
        for (int x : node.after) {
          if (x < 0 || x >= static_cast<int>(writers.size())) continue;
          for (int p : writers[x]) {
            if (p >= id) break;
            add(p, {Reason::After, nullptr, x});
          }
        }
        if (node.gridSyncBefore)
          for (int m = syncFrom; m < static_cast<int>(n); ++m)
            if (nodeCount_[m] > 0) {
              Group& gr = groups[m];
              gr.whole = true;
              gr.reasons.push_back({Reason::Grid});
            }
        for (auto& [pn, gr] : groups) mk_.tasks[id].waits.push_back(counterFor(pn, gr));
      }
    }
  }

  // The counter for one consumer's producers in node `pn`, shared with every consumer that waits
  // for the same set.
  int counterFor(int pn, Group& gr) {
    std::sort(gr.tasks.begin(), gr.tasks.end());
    gr.tasks.erase(std::unique(gr.tasks.begin(), gr.tasks.end()), gr.tasks.end());
    bool whole = gr.whole || static_cast<int>(gr.tasks.size()) == nodeCount_[pn];
    if (whole && wholeCounter_[pn] >= 0) return wholeCounter_[pn];
    if (!whole)
      if (auto it = interned_.find(gr.tasks); it != interned_.end()) return it->second;
    Counter c;
    c.id = static_cast<int>(mk_.counters.size());
    if (whole) {
      c.producers.resize(nodeCount_[pn]);
      for (int i = 0; i < nodeCount_[pn]; ++i) c.producers[i] = nodeFirst_[pn] + i;
      wholeCounter_[pn] = c.id;
    } else {
      c.producers = gr.tasks;
      interned_.emplace(gr.tasks, c.id);
    }
    c.why = describe(pn, c.producers, gr.reasons);
    mk_.counters.push_back(std::move(c));
    return mk_.counters.back().id;
  }

  // "qkv#12 tasks 0..11 -> q[0..256)"
  std::string describe(int pn, const std::vector<int>& producers, const std::vector<Reason>& why) {
    const Graph& g = mk_.graph;
    std::vector<int64_t> local;
    for (int p : producers) local.push_back(p - nodeFirst_[pn]);
    const auto& f = g.nodes[pn].func;
    std::string s = fmt::format("{}#{} task{} {} ->", f->opName.empty() ? f->name : f->opName, pn,
                                local.size() == 1 ? "" : "s", runs(local));
    for (size_t i = 0; i < why.size(); ++i) {
      const Reason& r = why[i];
      s += i ? ", " : " ";
      switch (r.kind) {
        case Reason::Read: s += regionName(g, *r.region); break;
        case Reason::Overwrite: s += "overwrite " + regionName(g, *r.region); break;
        case Reason::OverwriteRead: s += "overwrite read " + regionName(g, *r.region); break;
        case Reason::After: s += "@after " + g.tensors[r.tensor].name; break;
        case Reason::Grid: s += "sync grid"; break;
      }
    }
    return s;
  }

  // Node by node, each task goes to the SM with the least weight (makeTasks: its bytes, or its
  // bytes with the inputs at zero) of this node so far, then the fewest bytes of the whole step so
  // far, then the lowest number. The tasks of one op mostly wait for the previous op and are
  // waited for by the next as a whole, so what bounds a step is each op's busiest SM: balancing
  // only the step's total would let one SM take two tasks of an op while another takes none.
  void place() {
    const int sms = std::max(1, mk_.target.sms);
    std::vector<int64_t> total(sms, 0), here(sms, 0);
    mk_.queues.assign(sms, {});
    int node = -1;
    for (Task& t : mk_.tasks) {
      if (t.node != node) {
        node = t.node;
        std::fill(here.begin(), here.end(), 0);
      }
      int best = 0;
      for (int sm = 1; sm < sms; ++sm)
        if (std::pair(here[sm], total[sm]) < std::pair(here[best], total[best])) best = sm;
      t.sm = best;
      here[best] += placeWeight_[size_t(t.id)];
      total[best] += std::max<int64_t>(t.bytes, 1);
      mk_.queues[best].push_back(t.id);
    }
  }

  // Drops waits on counters whose producers all run earlier on the waiter's own SM (queue order
  // already orders them) and waits that an earlier task of the same SM already did (counters only
  // grow within a step, so the second wait would find its count reached), then counters nobody
  // waits on; renumbers the rest and sets signals.
  void pruneWaits() {
    std::vector<int> counterSm(mk_.counters.size(), -1);  // the one SM of all producers, or -1
    for (const Counter& c : mk_.counters) {
      int sm = c.producers.empty() ? -1 : mk_.tasks[c.producers[0]].sm;
      for (int p : c.producers)
        if (mk_.tasks[p].sm != sm) sm = -1;
      counterSm[c.id] = sm;
    }
    std::vector<int> used(mk_.counters.size(), 0);
    std::vector<int> waitedOn(mk_.counters.size(), -1);  // the SM whose queue walk waited on it last
    for (int sm = 0; sm < static_cast<int>(mk_.queues.size()); ++sm)
      for (int id : mk_.queues[sm]) {
        Task& t = mk_.tasks[id];
        std::erase_if(t.waits, [&](int c) { return counterSm[c] == t.sm || waitedOn[c] == sm; });
        for (int c : t.waits) used[c] = 1, waitedOn[c] = sm;
      }
    std::vector<int> renumber(mk_.counters.size(), -1);
    std::vector<Counter> kept;
    for (Counter& c : mk_.counters)
      if (used[c.id]) {
        renumber[c.id] = static_cast<int>(kept.size());
        c.id = static_cast<int>(kept.size());
        kept.push_back(std::move(c));
      }
    mk_.counters = std::move(kept);
    for (Task& t : mk_.tasks)
      for (int& c : t.waits) c = renumber[c];
    for (const Counter& c : mk_.counters)
      for (int p : c.producers) mk_.tasks[p].signals.push_back(c.id);
  }

  Megakernel mk_;
  std::vector<int> nodeFirst_, nodeCount_;  // per node: its first task id and task count
  std::vector<int64_t> placeWeight_;        // per task: what place() balances within a node
  std::vector<int> wholeCounter_;           // per node: the counter of all its tasks, or -1
  std::map<std::vector<int>, int> interned_;  // producer set -> counter
};

}  // namespace

MemoryPlan planMemory(const Graph& graph) {
  MemoryPlan plan;
  for (const Tensor& t : graph.tensors) {
    auto [arena, size] =
        t.kind == Tensor::Weight  ? std::pair{&plan.weights, &plan.weightBytes}
        : t.kind == Tensor::State ? std::pair{&plan.state, &plan.stateBytes}
                                  : std::pair{&plan.activations, &plan.activationBytes};
    Buffer b{t.id, alignUp(*size, kBufferAlign), t.bytes()};
    *size = b.offset + b.bytes;
    arena->push_back(b);
  }
  for (int64_t* size : {&plan.weightBytes, &plan.stateBytes, &plan.activationBytes})
    *size = alignUp(*size, kBufferAlign);
  int64_t largest = 0;
  for (const Node& n : graph.nodes)
    if (n.func) largest = std::max(largest, largestLoadBytes(*n.func));
  plan.smemPerTask = 2 * largest;
  return plan;
}

Megakernel schedule(Graph graph, const TargetDesc& target) {
  return Scheduler(std::move(graph), target).run();
}

}  // namespace mk::lowering
