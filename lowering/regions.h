// Which tensor regions one task of a node touches: an interval (abstract) interpretation of the
// node's TileFunc with the task's grid indices known and runtime scalars unknown.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "ir/megakernel.h"

namespace mk::lowering {

struct TaskAccess {
  // Per tensor per direction, up to four disjoint boxes covering everything the task may touch,
  // clamped to the tensor's shape. Scalar parameters have none.
  std::vector<ir::Region> reads, writes;  // sorted by tensor id, then by box
  int64_t bytes = 0;  // sum over the boxes of elements * dtype bytes
  // False when a tensor touched in a loop whose trip count is known only at run time (an
  // attention loop up to `pos`) was counted by its whole boxes: `bytes` is then an upper bound.
  bool bytesExact = true;
  // The bytes moved with every step input at zero (a prompt's first chunk, at position 0), where
  // each loop's trip count is known then (an attention's keys up to `pos0 + b * BQ`); else -1.
  // Tasks whose `bytes` is only a bound differ by this much in what they do.
  int64_t bytesAtZero = -1;
  int64_t flops = 0;  // 2 * matrix-operand elements of Dot/RowDot/ColDot (2 M N K of Mma/MmaNt), times known trip counts
};

// `index` is the task's position in node.func->taskGrid (one entry per dimension).
TaskAccess analyzeTask(const ir::Graph& graph, const ir::Node& node,
                       const std::vector<int64_t>& index);

// The largest single Load tile of `func` in bytes (elements of the loaded tile * dtype bytes).
int64_t largestLoadBytes(const ir::TileFunc& func);

}  // namespace mk::lowering
