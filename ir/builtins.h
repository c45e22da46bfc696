// The tile IR expression each builtin of support/builtins.def lowers to: lowering/ builds it from
// a call's name, the printer spells a call from it.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "ir/tile.h"

namespace mk::ir {

struct BuiltinIr {
  const char* name;
  size_t arity;
  ExprKind kind;
  UnaryOp unary = UnaryOp::Neg;     // kind Unary
  BinaryOp binary = BinaryOp::Add;  // kind Binary
  ReduceOp reduce = ReduceOp::Sum;  // kind Reduce
};

inline const std::vector<BuiltinIr>& builtinIrs() {
  static const std::vector<BuiltinIr> kBuiltins = {
#define IR_UNARY(OP) ExprKind::Unary, UnaryOp::OP
#define IR_BINARY(OP) ExprKind::Binary, UnaryOp::Neg, BinaryOp::OP
#define IR_REDUCE(OP) ExprKind::Reduce, UnaryOp::Neg, BinaryOp::Add, ReduceOp::OP
#define IR_ROW_REDUCE(OP) ExprKind::RowReduce, UnaryOp::Neg, BinaryOp::Add, ReduceOp::OP
#define IR_EXPR(KIND) ExprKind::KIND
#define MK_BUILTIN(NAME, ARITY, RULE, IR, SIGNATURE, DOC) {NAME, ARITY, IR},
#include "support/builtins.def"
#undef MK_BUILTIN
#undef IR_EXPR
#undef IR_ROW_REDUCE
#undef IR_REDUCE
#undef IR_BINARY
#undef IR_UNARY
  };
  return kBuiltins;
}

// The form of builtin `name` that takes `nargs` arguments; null if there is none.
inline const BuiltinIr* findBuiltinIr(std::string_view name, size_t nargs) {
  for (const BuiltinIr& b : builtinIrs())
    if (b.name == name && b.arity == nargs) return &b;
  return nullptr;
}

// The name of the builtin that `e` is a call of; null if it is none (an operator, a load, ...).
inline const char* builtinName(const Expr& e) {
  for (const BuiltinIr& b : builtinIrs()) {
    if (b.kind != e.kind) continue;
    if ((e.kind == ExprKind::Unary && b.unary != e.unary) || (e.kind == ExprKind::Binary && b.binary != e.binary) ||
        ((e.kind == ExprKind::Reduce || e.kind == ExprKind::RowReduce) && b.reduce != e.reduce))
      continue;
    return b.name;
  }
  return nullptr;
}

}  // namespace mk::ir
