#include "frontend/ast.h"

namespace mk::ast {

const char* spelling(BinaryOp op) {
  switch (op) {
    case BinaryOp::Mul: return "*";
    case BinaryOp::Div: return "/";
    case BinaryOp::Mod: return "%";
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Lt: return "<";
    case BinaryOp::Le: return "<=";
    case BinaryOp::Gt: return ">";
    case BinaryOp::Ge: return ">=";
    case BinaryOp::Eq: return "==";
    case BinaryOp::Ne: return "!=";
    case BinaryOp::And: return "&&";
    case BinaryOp::Or: return "||";
  }
  return "?";
}

const char* spelling(UnaryOp op) { return op == UnaryOp::Neg ? "-" : "!"; }

const char* spelling(AssignOp op) {
  switch (op) {
    case AssignOp::Set: return "=";
    case AssignOp::Add: return "+=";
    case AssignOp::Sub: return "-=";
    case AssignOp::Mul: return "*=";
    case AssignOp::Div: return "/=";
  }
  return "=";
}

std::string ImportDecl::dotted() const {
  std::string s;
  for (const Ident& p : path) s += (s.empty() ? "" : ".") + p.name;
  return s;
}

}  // namespace mk::ast
