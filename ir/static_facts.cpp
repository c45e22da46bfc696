// The static facts of an op body (see static_facts.h).
#include "ir/static_facts.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>

namespace mk::ir {

namespace {

void collect(const Block& block, std::vector<int>& assignments, std::map<int, const Stmt*>& loopOf,
             std::map<int, const Expr*>& letValue) {
  for (const auto& s : block) {
    if (s->kind == StmtKind::Let || s->kind == StmtKind::Assign || s->kind == StmtKind::For) {
      if (size_t(s->slot) >= assignments.size()) assignments.resize(size_t(s->slot) + 1);
      ++assignments[size_t(s->slot)];
    }
    if (s->kind == StmtKind::For) loopOf[s->slot] = s.get();
    if (s->kind == StmtKind::Let && s->value) letValue[s->slot] = s->value.get();
    collect(s->body, assignments, loopOf, letValue);
    collect(s->otherwise, assignments, loopOf, letValue);
  }
}

}  // namespace

StaticFacts::StaticFacts(const TileFunc& fn) : fn_(fn) { collect(fn.body, assignments_, loopOf_, letValue_); }

bool StaticFacts::isStatic(const Expr& e) const {
  switch (e.kind) {
    case ExprKind::Const:
    case ExprKind::TaskIndex: return true;
    case ExprKind::Local: return staticSlot(e.index);
    case ExprKind::Unary:
    case ExprKind::Binary:
    case ExprKind::Select:
    case ExprKind::Cast:
      if (!e.shape.empty()) return false;
      for (const auto& o : e.operands)
        if (!o || !isStatic(*o)) return false;
      return true;
    default: return false;
  }
}

bool StaticFacts::staticSlot(int slot) const {
  if (slot < 0 || size_t(slot) >= fn_.locals.size() || !fn_.locals[size_t(slot)].shape.empty()) return false;
  if (size_t(slot) >= assignments_.size() || assignments_[size_t(slot)] != 1) return false;
  if (auto it = loopOf_.find(slot); it != loopOf_.end())
    return it->second->lo && it->second->hi && isStatic(*it->second->lo) && isStatic(*it->second->hi);
  auto it = letValue_.find(slot);
  return it != letValue_.end() && isStatic(*it->second);
}

int64_t StaticFacts::multipleOf(const Expr& e, int depth) const {
  constexpr int64_t kLarge = int64_t(1) << 30;
  if (depth > 64 || !e.shape.empty()) return 1;
  auto op = [&](size_t i) { return i < e.operands.size() && e.operands[i] ? multipleOf(*e.operands[i], depth + 1) : 1; };
  switch (e.kind) {
    case ExprKind::Const: {
      int64_t v = std::llabs(int64_t(e.value));
      return double(int64_t(e.value)) != e.value ? 1 : v == 0 ? kLarge : std::min(v, kLarge);
    }
    case ExprKind::Local: {
      if (size_t(e.index) >= assignments_.size() || assignments_[size_t(e.index)] != 1) return 1;
      if (auto it = loopOf_.find(e.index); it != loopOf_.end())
        return it->second->lo ? std::gcd(multipleOf(*it->second->lo, depth + 1), it->second->step) : 1;
      if (auto it = letValue_.find(e.index); it != letValue_.end()) return multipleOf(*it->second, depth + 1);
      return 1;
    }
    case ExprKind::Binary:
      if (e.binary == BinaryOp::Add || e.binary == BinaryOp::Sub) return std::gcd(op(0), op(1));
      if (e.binary == BinaryOp::Mul) return std::min(op(0) * op(1), kLarge);
      // a % c = a - c * (a / c): a multiple of what divides both (`t * 32 % 64` of 32).
      if (e.binary == BinaryOp::Mod) return std::gcd(op(0), op(1));
      return 1;
    case ExprKind::Cast: return e.dtype == DType::I32 && !e.operands.empty() && e.operands[0] && e.operands[0]->dtype == DType::I32 ? op(0) : 1;
    default: return 1;
  }
}

const Expr* StaticFacts::letValue(int slot) const {
  if (slot < 0 || size_t(slot) >= assignments_.size() || assignments_[size_t(slot)] != 1) return nullptr;
  auto it = letValue_.find(slot);
  return it == letValue_.end() ? nullptr : it->second;
}

std::optional<int64_t> StaticFacts::largestValue(const Expr& e, int depth) const {
  if (depth > 64 || !e.shape.empty()) return std::nullopt;
  switch (e.kind) {
    case ExprKind::Const:
      if (e.value >= 0 && double(int64_t(e.value)) == e.value) return int64_t(e.value);
      return std::nullopt;
    case ExprKind::TaskIndex:
      if (e.index >= 0 && size_t(e.index) < fn_.taskGrid.size()) return fn_.taskGrid[size_t(e.index)] - 1;
      return std::nullopt;
    case ExprKind::Local:
      if (const Expr* v = letValue(e.index)) return largestValue(*v, depth + 1);
      return std::nullopt;
    case ExprKind::Cast:
      if (e.dtype == DType::I32 && !e.operands.empty() && e.operands[0]) return largestValue(*e.operands[0], depth + 1);
      return std::nullopt;
    case ExprKind::Binary: {
      if (e.operands.size() != 2 || !e.operands[0] || !e.operands[1] ||
          (e.binary != BinaryOp::Add && e.binary != BinaryOp::Mul))
        return std::nullopt;
      auto a = largestValue(*e.operands[0], depth + 1), b = largestValue(*e.operands[1], depth + 1);
      if (!a || !b) return std::nullopt;
      return e.binary == BinaryOp::Add ? *a + *b : *a * *b;
    }
    default: return std::nullopt;
  }
}

}  // namespace mk::ir
