// Builders for hand-made IR in the unit tests: expressions, regions, statements, tile functions,
// parameters, tensors, tasks and graphs (mk::ir, see ir/tile.h, ir/graph.h, ir/megakernel.h).
// Shapes follow the operands where the IR says they do (a load's tile is its region's non-zero
// lengths, a unary or cast keeps its operand's shape, a binary takes the shape of its non-scalar
// side); dtypes are given where they are not obvious, and default to i32 for index arithmetic
// and f32 for tensor parameters.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/megakernel.h"
#include "ir/tile.h"

namespace mk::ir::build {

// ---- Expressions -------------------------------------------------------------------------------

// An expression of kind `k` with no operands; the caller fills in the rest.
inline ExprPtr expr(ExprKind k, DType t = DType::I32, Shape s = {}) {
  auto e = std::make_unique<Expr>();
  e->kind = k;
  e->dtype = t;
  e->shape = std::move(s);
  return e;
}
inline ExprPtr constant(double v, DType t = DType::I32) {
  auto e = expr(ExprKind::Const, t);
  e->value = v;
  return e;
}
// The task's index along task grid dimension `d`.
inline ExprPtr taskIndex(int d = 0) {
  auto e = expr(ExprKind::TaskIndex, DType::I32);
  e->index = d;
  return e;
}
// Scalar parameter `param` of the tile function.
inline ExprPtr scalar(int param, DType t = DType::I32) {
  auto e = expr(ExprKind::Scalar, t);
  e->index = param;
  return e;
}
inline ExprPtr local(int slot, DType t = DType::I32, Shape s = {}) {
  auto e = expr(ExprKind::Local, t, std::move(s));
  e->index = slot;
  return e;
}
inline ExprPtr iota(int64_t n) { return expr(ExprKind::Iota, DType::I32, {n}); }

inline ExprPtr unary(UnaryOp op, ExprPtr a, DType t) {
  Shape s = a->shape;
  auto e = expr(ExprKind::Unary, t, std::move(s));
  e->unary = op;
  e->operands.push_back(std::move(a));
  return e;
}
// Elementwise with scalar broadcast: the shape of `a`, or of `b` where `a` is a scalar.
inline ExprPtr binary(BinaryOp op, ExprPtr a, ExprPtr b, DType t) {
  Shape s = a->shape.empty() ? b->shape : a->shape;
  auto e = expr(ExprKind::Binary, t, std::move(s));
  e->binary = op;
  e->operands.push_back(std::move(a));
  e->operands.push_back(std::move(b));
  return e;
}
// The same, in the dtype of `a`.
inline ExprPtr binary(BinaryOp op, ExprPtr a, ExprPtr b) {
  DType t = a->dtype;
  return binary(op, std::move(a), std::move(b), t);
}
inline ExprPtr add(ExprPtr a, ExprPtr b) { return binary(BinaryOp::Add, std::move(a), std::move(b)); }
inline ExprPtr mul(ExprPtr a, ExprPtr b) { return binary(BinaryOp::Mul, std::move(a), std::move(b)); }
inline ExprPtr cast(ExprPtr a, DType t) {
  Shape s = a->shape;
  auto e = expr(ExprKind::Cast, t, std::move(s));
  e->operands.push_back(std::move(a));
  return e;
}
// `a` reduced to a scalar.
inline ExprPtr reduce(ReduceOp op, ExprPtr a, DType t) {
  auto e = expr(ExprKind::Reduce, t);
  e->reduce = op;
  e->operands.push_back(std::move(a));
  return e;
}
inline ExprPtr sum(ExprPtr a, DType t = DType::F32) { return reduce(ReduceOp::Sum, std::move(a), t); }
// Any kind, with its operands (ExprPtrs) given.
template <typename... Operands>
ExprPtr ops(ExprKind k, DType t, Shape s, Operands... operands) {
  auto e = expr(k, t, std::move(s));
  (e->operands.push_back(std::move(operands)), ...);
  return e;
}

// ---- Regions and memory ------------------------------------------------------------------------

// One region dimension `start : +length`; length 0 is a single index (the dim goes away).
inline RegionDim dim(ExprPtr start, int64_t length) { return RegionDim{std::move(start), length}; }

// A load of tensor parameter `param` over `dims` (RegionDims); its tile shape is their non-zero
// lengths.
template <typename... Dims>
ExprPtr load(int param, DType t, Dims... dims) {
  auto e = expr(ExprKind::Load, t);
  e->index = param;
  (e->region.push_back(std::move(dims)), ...);
  for (const RegionDim& d : e->region)
    if (d.length > 0) e->shape.push_back(d.length);
  return e;
}

// ---- Statements --------------------------------------------------------------------------------

template <typename... Dims>
StmtPtr store(int param, ExprPtr value, Dims... dims) {
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::Store;
  s->tensor = param;
  s->value = std::move(value);
  (s->region.push_back(std::move(dims)), ...);
  return s;
}
inline StmtPtr let(int slot, ExprPtr v) {
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::Let;
  s->slot = slot;
  s->value = std::move(v);
  return s;
}
inline StmtPtr assign(int slot, AssignOp op, ExprPtr v) {
  auto s = let(slot, std::move(v));
  s->kind = StmtKind::Assign;
  s->assign = op;
  return s;
}
// for slot in lo .. hi step step { body }
template <typename... Body>
StmtPtr loop(int slot, ExprPtr lo, ExprPtr hi, int64_t step, Body... body) {
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::For;
  s->slot = slot;
  s->lo = std::move(lo);
  s->hi = std::move(hi);
  s->step = step;
  (s->body.push_back(std::move(body)), ...);
  return s;
}

// ---- Tile functions and their parameters -------------------------------------------------------

inline Param inParam(std::string name, Shape s, DType t = DType::F32) { return {std::move(name), Param::Tensor, false, t, std::move(s)}; }
inline Param outParam(std::string name, Shape s, DType t = DType::F32) { return {std::move(name), Param::Result, false, t, std::move(s)}; }
inline Param inoutParam(std::string name, Shape s, DType t = DType::F32) { return {std::move(name), Param::Tensor, true, t, std::move(s)}; }
inline Param scalarParam(std::string name, DType t = DType::I32) { return {std::move(name), Param::Scalar, false, t, {}}; }

// `n` scalar i32 locals l0 .. l{n-1}.
inline std::vector<Local> i32Locals(int n) {
  std::vector<Local> ls;
  for (int i = 0; i < n; ++i) ls.push_back({"l" + std::to_string(i), DType::I32, {}});
  return ls;
}

// A tile function of op `op` (also its name) over task grid `grid`.
template <typename... Stmts>
std::shared_ptr<TileFunc> func(std::string op, std::vector<Param> params, Shape grid, std::vector<Local> locals, Stmts... body) {
  auto f = std::make_shared<TileFunc>();
  f->name = op;
  f->opName = op;
  f->params = std::move(params);
  f->taskGrid = std::move(grid);
  f->locals = std::move(locals);
  (f->body.push_back(std::move(body)), ...);
  return f;
}

// ---- Graphs and megakernels --------------------------------------------------------------------

inline Tensor tensor(int id, std::string name, Tensor::Kind k, DType t, Shape s) {
  Tensor x;
  x.id = id;
  x.name = std::move(name);
  x.kind = k;
  x.dtype = t;
  x.shape = std::move(s);
  return x;
}

inline Task task(int id, int node, std::vector<int64_t> index, std::vector<int> waits = {}, std::vector<int> signals = {}) {
  Task t;
  t.id = id;
  t.node = node;
  t.index = std::move(index);
  t.waits = std::move(waits);
  t.signals = std::move(signals);
  return t;
}

// A graph built tensor by tensor and node by node, ids in order.
struct GraphBuilder {
  Graph g;
  int tensor(std::string name, Tensor::Kind kind, Shape shape, DType t = DType::F32) {
    g.tensors.push_back(build::tensor(static_cast<int>(g.tensors.size()), std::move(name), kind, t, std::move(shape)));
    return g.tensors.back().id;
  }
  // A node calling `f` on `tensors` (one per parameter; scalars all Const 0).
  Node& node(std::shared_ptr<TileFunc> f, std::vector<int> tensors) {
    Node n;
    n.id = static_cast<int>(g.nodes.size());
    n.func = std::move(f);
    n.tensors = std::move(tensors);
    n.scalars.resize(n.tensors.size());
    g.nodes.push_back(n);
    return g.nodes.back();
  }
};

}  // namespace mk::ir::build
