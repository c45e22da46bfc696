// Small shared pieces of the IR data structures.
#include <algorithm>

#include "ir/graph.h"
#include "ir/megakernel.h"
#include "ir/tile.h"

namespace mk::ir {

const char* spelling(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: return "neg";
    case UnaryOp::Not: return "not";
    case UnaryOp::Exp: return "exp";
    case UnaryOp::Log: return "log";
    case UnaryOp::Sqrt: return "sqrt";
    case UnaryOp::Rsqrt: return "rsqrt";
    case UnaryOp::Sin: return "sin";
    case UnaryOp::Cos: return "cos";
    case UnaryOp::Tanh: return "tanh";
    case UnaryOp::Sigmoid: return "sigmoid";
    case UnaryOp::Silu: return "silu";
    case UnaryOp::Abs: return "abs";
  }
  return "?";
}

const char* spelling(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "add";
    case BinaryOp::Sub: return "sub";
    case BinaryOp::Mul: return "mul";
    case BinaryOp::Div: return "div";
    case BinaryOp::Mod: return "mod";
    case BinaryOp::Min: return "min";
    case BinaryOp::Max: return "max";
    case BinaryOp::Pow: return "pow";
    case BinaryOp::Lt: return "lt";
    case BinaryOp::Le: return "le";
    case BinaryOp::Gt: return "gt";
    case BinaryOp::Ge: return "ge";
    case BinaryOp::Eq: return "eq";
    case BinaryOp::Ne: return "ne";
    case BinaryOp::And: return "and";
    case BinaryOp::Or: return "or";
  }
  return "?";
}

const char* spelling(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min";
    case ReduceOp::Mean: return "mean";
    case ReduceOp::Argmax: return "argmax";
  }
  return "?";
}

int64_t elementCount(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string shapeText(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

int64_t TileFunc::taskCount() const { return elementCount(taskGrid); }

int64_t Tensor::elements() const { return elementCount(shape); }

int64_t Tensor::storageElements() const { return abi::storageElements(layout, shape); }

int64_t Tensor::bytes() const { return storageElements() * dtypeBytes(dtype); }

bool Region::overlaps(const Region& o) const {
  if (tensor != o.tensor) return false;
  size_t n = std::min(ranges.size(), o.ranges.size());
  for (size_t i = 0; i < n; ++i)
    if (ranges[i].second <= o.ranges[i].first || o.ranges[i].second <= ranges[i].first) return false;
  return true;
}

int64_t Region::elements() const {
  int64_t n = 1;
  for (auto [lo, hi] : ranges) n *= std::max<int64_t>(0, hi - lo);
  return n;
}

}  // namespace mk::ir
