// Text forms of the IR, for `mkdsl build --emit=graph|tasks|schedule` and golden tests. All output
// is deterministic (no addresses, no hash order) and line-oriented.
//
//   printGraph     the graph IR: tensors, step inputs/outputs, nodes, then every distinct tile
//                  function once with its body. Read-only (there is no parser for it).
//   printTasks     one line per task: node, grid index, regions read/written, bytes, flops.
//   printSchedule  the whole megakernel minus tile bodies: target, tensors, funcs (signatures),
//                  nodes, memory plan, counters, per-SM queues with every task's fields.
//                  parseSchedule (ir/parse_ir.h) reads it back: print(parse(print(m))) == print(m).
//                  The grammar is documented in ir/parse_ir.h.
//   scheduleJson   the same schedule as one JSON object, for tools.
#pragma once

#include <string>

#include "ir/graph.h"
#include "ir/megakernel.h"
#include "ir/tile.h"

namespace mk::ir {

std::string printGraph(const Graph& graph);
// One tile function: its signature and its body as indented statements.
std::string printTileFunc(const TileFunc& func);
// One expression of `func`, in the compact functional syntax printTileFunc uses.
std::string printExpr(const TileFunc& func, const Expr& expr);

std::string printTasks(const Megakernel& mk);
std::string printSchedule(const Megakernel& mk);
std::string scheduleJson(const Megakernel& mk);

// Helpers shared with the parser and the HTML view.
// `s` bare when it is an identifier ([A-Za-z_][A-Za-z0-9_]*), else a quoted string with \" \\ \n
// \t and \xHH escapes.
std::string quoteName(std::string_view s);
// The shortest text that reads back as exactly `v` ("4.8e+12", "0.5", "-inf").
std::string formatDouble(double v);
// `dtype[d0, d1]`, e.g. "bf16[2048, 64]"; a scalar is "i32[]".
std::string formatType(DType dtype, const Shape& shape);
// Task id lists with consecutive ascending runs folded: "0-3, 7, 9-10".
std::string formatIdRanges(const std::vector<int>& ids);

}  // namespace mk::ir
