// The megakernel IR: the step's tasks with the exact regions they touch, the sync counters
// between them, and each SM's ordered queue.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/target.h"

namespace mk::ir {

// A box in one tensor: per dimension the half-open range [lo, hi). Where a dimension's start
// is a step input plus an offset known per task (a cache row `pos0 + b * 16`), `relative` says so:
// the dimension then lies in [input + lo, input + hi) as well, and two boxes relative to the same
// input are apart where those offsets are (every task of a step sees one value of the input),
// whatever the input's value.
struct RelativeRange {
  int input = -1;  // a step input (Graph::inputs); -1: none
  int64_t lo = 0, hi = 0;
  bool operator==(const RelativeRange&) const = default;
};
struct Region {
  int tensor = 0;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  std::vector<RelativeRange> relative = {};  // empty, or one per dimension
  bool overlaps(const Region& o) const;
  int64_t elements() const;
};

struct Task {
  int id = 0;
  int node = 0;
  std::vector<int64_t> index;   // its position in the node's task grid
  std::vector<Region> reads;    // what it may read (a superset where indices depend on run time)
  std::vector<Region> writes;   // what it may write
  int64_t bytes = 0;            // estimated bytes moved
  bool bytesExact = true;       // false: `bytes` is an upper bound (lowering::TaskAccess)
  int64_t flops = 0;
  int sm = -1;
  std::vector<int> waits;       // counters to wait on before running
  std::vector<int> signals;     // counters to increment when done
  SourceRange range;            // its line when read by parseSchedule (ir/parse_ir.h); else invalid
};

// Producers increment it when done; a consumer of step `epoch` (1-based) waits until it reads
// epoch * expected(), so counters never need resetting between steps.
struct Counter {
  int id = 0;
  std::vector<int> producers;  // task ids
  std::string why;             // for the schedule printout: what the waiters need
  SourceRange range;           // its line when read by parseSchedule (ir/parse_ir.h); else invalid
  int64_t expected() const { return static_cast<int64_t>(producers.size()); }
};

struct Buffer {
  int tensor = 0;
  int64_t offset = 0;  // bytes, within its arena (weights, state or activations)
  int64_t bytes = 0;
};

struct MemoryPlan {
  std::vector<Buffer> weights, state, activations;
  int64_t weightBytes = 0, stateBytes = 0, activationBytes = 0;
  int64_t smemPerTask = 0;  // the largest shared-memory need of any task
};

struct Megakernel {
  Graph graph;
  TargetDesc target;
  std::vector<Task> tasks;                 // in the global topological order
  std::vector<Counter> counters;
  std::vector<std::vector<int>> queues;    // per SM: task ids in run order
  MemoryPlan memory;
};

}  // namespace mk::ir
