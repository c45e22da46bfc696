// Small shared pieces of the IR data structures.
#include <algorithm>

#include "ir/builtins.h"
#include "ir/graph.h"
#include "ir/megakernel.h"
#include "ir/tile.h"

namespace mk::ir {

// A builtin's op is spelled as its name in support/builtins.def; the switches spell only the
// operators, which no builtin lowers to.
const char* spelling(UnaryOp op) {
  for (const BuiltinIr& b : builtinIrs())
    if (b.kind == ExprKind::Unary && b.unary == op) return b.name;
  switch (op) {
    case UnaryOp::Neg: return "neg";
    case UnaryOp::Not: return "not";
    default: return "?";
  }
}

const char* spelling(BinaryOp op) {
  for (const BuiltinIr& b : builtinIrs())
    if (b.kind == ExprKind::Binary && b.binary == op) return b.name;
  switch (op) {
    case BinaryOp::Add: return "add";
    case BinaryOp::Sub: return "sub";
    case BinaryOp::Mul: return "mul";
    case BinaryOp::Div: return "div";
    case BinaryOp::Mod: return "mod";
    case BinaryOp::Lt: return "lt";
    case BinaryOp::Le: return "le";
    case BinaryOp::Gt: return "gt";
    case BinaryOp::Ge: return "ge";
    case BinaryOp::Eq: return "eq";
    case BinaryOp::Ne: return "ne";
    case BinaryOp::And: return "and";
    case BinaryOp::Or: return "or";
    default: return "?";
  }
}

// Every reduction is a builtin.
const char* spelling(ReduceOp op) {
  for (const BuiltinIr& b : builtinIrs())
    if (b.kind == ExprKind::Reduce && b.reduce == op) return b.name;
  return "?";
}

int64_t TileFunc::taskCount() const { return abi::shapeElements(taskGrid); }

int64_t Tensor::elements() const { return abi::shapeElements(shape); }

int64_t Tensor::storageElements() const { return abi::storageElements(layout, shape); }

int64_t Tensor::bytes() const { return storageElements() * dtypeBytes(dtype); }

bool Region::overlaps(const Region& o) const {
  if (tensor != o.tensor) return false;
  size_t n = std::min(ranges.size(), o.ranges.size());
  for (size_t i = 0; i < n; ++i)
    if (ranges[i].second <= o.ranges[i].first || o.ranges[i].second <= ranges[i].first) return false;
  for (size_t i = 0; i < std::min(relative.size(), o.relative.size()); ++i) {
    const RelativeRange &a = relative[i], &b = o.relative[i];
    if (a.input >= 0 && a.input == b.input && (a.hi <= b.lo || b.hi <= a.lo)) return false;
  }
  return true;
}

int64_t Region::elements() const {
  int64_t n = 1;
  for (auto [lo, hi] : ranges) n *= std::max<int64_t>(0, hi - lo);
  return n;
}

}  // namespace mk::ir
