// AST -> graph IR: the step elaborated with every value concrete (fns inlined, layer loops
// unrolled), each op call one node whose body is lowered to the tile IR.
#pragma once

#include <optional>
#include <vector>

#include "frontend/sema.h"
#include "ir/graph.h"

namespace mk::lowering {

// Checks the program and builds one graph per step, in program order, over the same weights and
// state (ir::Graph::tensors); nullopt (with diagnostics) when it has errors or no step.
std::optional<std::vector<ir::Graph>> buildGraphs(SourceManager& sources, DiagnosticEngine& diags, FileId root,
                                                  const CheckOptions& options);

}  // namespace mk::lowering
