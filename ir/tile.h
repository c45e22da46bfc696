// The tile IR: one op body, specialized to concrete generic values. Every value has a static
// dtype and shape; task indices and runtime scalars (e.g. the step's `pos`) are the only values
// that vary between tasks and steps. The interpreter runs it; the backends compile it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "abi/dtype.h"
#include "abi/layout.h"
#include "support/source.h"

namespace mk::ir {

using Shape = std::vector<int64_t>;  // empty: a scalar; abi::shapeElements, abi::shapeString

enum class UnaryOp { Neg, Not, Exp, Log, Sqrt, Rsqrt, Sin, Cos, Tanh, Sigmoid, Silu, Abs };
enum class BinaryOp { Add, Sub, Mul, Div, Mod, Min, Max, Pow, Lt, Le, Gt, Ge, Eq, Ne, And, Or };
enum class ReduceOp { Sum, Max, Min, Mean, Argmax };
const char* spelling(UnaryOp op);
const char* spelling(BinaryOp op);
const char* spelling(ReduceOp op);

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

// One dimension of a region: `start : +length`, or a single index (length 0: the dim goes away).
struct RegionDim {
  ExprPtr start;  // a scalar i32 expression
  int64_t length = 0;
};

enum class ExprKind {
  Const,     // a scalar constant: `value`
  Local,     // a let/var/loop variable: `slot`
  TaskIndex, // the task's index along task grid dimension `index`
  Scalar,    // a scalar parameter of the op (e.g. pos): `index` into TileFunc::params
  Load,      // a region of tensor parameter `index`
  Slice,     // a region of the tile value operands[0]
  Unary,
  Binary,    // elementwise with scalar broadcast
  Select,    // operands: cond, a, b (elementwise, broadcast)
  Cast,      // operands[0] converted to `dtype`
  Reduce,    // operands[0] reduced to a scalar
  RowReduce, // each row of the 2-D operands[0] reduced: [M, N] -> [M]
  Dot,       // a[K] . b[K] -> f32
  RowDot,    // A[M, K] x[K] -> f32[M]
  ColDot,    // A[M, K]^T y[M] -> f32[K]
  Mma,       // a[M, K] b[K, N] -> f32[M, N]
  MmaNt,     // a[M, K] b[N, K]^T -> f32[M, N]
  Iota,      // i32[n]: 0 .. n-1
  Concat,    // 1-D a ++ b
  RepeatRows, // [M, N] whose every row is the 1-D operands[0] (of N); M is the shape's
  RepeatCols, // [M, N] whose every column is the 1-D operands[0] (of M); N is the shape's
};

struct Expr {
  ExprKind kind;
  DType dtype;
  Shape shape;
  double value = 0;  // Const
  int index = 0;     // Local slot, TaskIndex dimension, Scalar or Load parameter index
  UnaryOp unary = UnaryOp::Neg;
  BinaryOp binary = BinaryOp::Add;
  ReduceOp reduce = ReduceOp::Sum;
  std::vector<ExprPtr> operands;
  std::vector<RegionDim> region;  // Load and Slice
  SourceRange range;
};

enum class StmtKind { Let, Assign, Store, For, If };
enum class AssignOp { Set, Add, Sub, Mul, Div };

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Block = std::vector<StmtPtr>;

// Let and Assign of a scalar value to a slot whose Local has a shape broadcast it to that shape
// (`var acc: f32[16] = 0;`).
struct Stmt {
  StmtKind kind;
  int slot = 0;      // Let / Assign / For: the local written
  AssignOp assign = AssignOp::Set;
  int tensor = 0;    // Store: the parameter (an inout tensor or a result) written
  std::vector<RegionDim> region;  // Store
  ExprPtr value;     // Let / Assign / Store: the value; If: the condition
  ExprPtr lo, hi;    // For: i32 bounds, hi exclusive
  int64_t step = 1;  // For
  Block body;        // For / If: then
  Block otherwise;   // If
  SourceRange range;
};

struct Local {
  std::string name;
  DType dtype;
  Shape shape;
};

struct Param {
  std::string name;
  enum Kind { Tensor, Scalar, Result } kind = Tensor;
  bool inout = false;  // Tensor parameters the op writes
  DType dtype;
  Shape shape;
};

// One op at one set of generic values.
struct TileFunc {
  std::string name;      // e.g. "matvec<N=2048, K=2048, R=16>"
  std::string opName;    // "matvec"
  std::vector<Param> params;  // the op's parameters, then its results
  Shape taskGrid;        // extents; the task count is their product
  std::vector<std::string> taskVars;
  std::vector<Local> locals;  // slots
  Block body;
  SourceRange range;     // the op declaration
  int64_t taskCount() const;
};

}  // namespace mk::ir
