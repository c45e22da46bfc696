// Graph IR -> megakernel IR: tile every node into tasks, derive dependencies from the regions the
// tasks touch, plan sync counters, place tasks on SMs and plan memory.
#pragma once

#include "ir/graph.h"
#include "ir/megakernel.h"
#include "ir/target.h"

namespace mk::lowering {

// Tasks: every node's task grid in row-major order, nodes in program order; that is the global
// order (task ids increase along it). Dependencies: RAW on non-weight tensors, WAW, WAR, @after
// and `sync grid`, each producer set of one producer node shared as one counter. Placement: in
// global order, each task to the SM with the fewest estimated bytes so far, so every queue is a
// subsequence of the global order (deadlock-free with in-order queues and blocking waits). Waits
// on counters whose producers all run earlier on the waiter's SM are dropped. The result passes
// ir::verify.
ir::Megakernel schedule(ir::Graph graph, const ir::TargetDesc& target);

// Each weight, state and activation (and step input) tensor gets a 256-byte aligned buffer in its
// arena (step inputs live in the activation arena); smemPerTask is twice the largest Load tile of
// any node's TileFunc (double buffering).
ir::MemoryPlan planMemory(const ir::Graph& graph);

}  // namespace mk::lowering
