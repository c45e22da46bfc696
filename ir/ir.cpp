// Small shared pieces of the IR data structures.
#include <algorithm>

#include "ir/graph.h"
#include "ir/megakernel.h"
#include "ir/target.h"
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

namespace {
const std::vector<TargetDesc>& targets() {
  // SM (CU) counts and shared memory (LDS) per block (opt-in maximum) of the shipping parts;
  // bandwidth is the datasheet figure, used only to weigh costs.
  static const std::vector<TargetDesc> kTargets = {
      // L2 look-ahead 8: bench/results/2026-12-01-perf-7, call 4.
      {"h200", "sm_90a", 132, 227 * 1024, 32, 512, 4.8e12, 8},
      {"h100", "sm_90a", 132, 227 * 1024, 32, 512, 3.35e12},
      {"a100", "sm_80", 108, 163 * 1024, 32, 512, 2.0e12},
      {"mi300x", "gfx942", 304, 64 * 1024, 64, 512, 5.3e12},
      // One GCD of an MI250X: the package's two dies (110 CUs and 1.6 TB/s each) are two devices
      // to HIP, and a kernel runs on one.
      {"mi250x", "gfx90a", 110, 64 * 1024, 64, 512, 1.6e12},
  };
  return kTargets;
}
}  // namespace

std::optional<TargetDesc> findTarget(const std::string& name) {
  for (const auto& t : targets())
    if (t.name == name) return t;
  return std::nullopt;
}

std::vector<std::string> targetNames() {
  std::vector<std::string> out;
  for (const auto& t : targets()) out.push_back(t.name);
  return out;
}

}  // namespace mk::ir
