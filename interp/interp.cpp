#include "interp/interp.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "runtime/safetensors.h"
#include "runtime/weights.h"

namespace mk::interp {

using namespace mk::ir;

namespace {

[[noreturn]] void fail(const std::string& msg) { throw InterpError(msg); }

// The interleaving choices: splitmix64, the same generator as the random weights (runtime/weights.h).
using Rng = runtime::SplitMix64;

int64_t wrap32(int64_t x) { return int32_t(uint32_t(uint64_t(x))); }

// Converts a value of dtype `from` to dtype `to`. Float to integer truncates toward zero and
// saturates, NaN giving 0 (PTX cvt.rzi.sat semantics); integers wrap to 32 bits.
double convert(DType from, DType to, double x) {
  switch (to) {
    case DType::F32: return double(float(x));
    case DType::BF16:
    case DType::F16: return roundTo(to, float(x));
    case DType::Bool: return x != 0 ? 1 : 0;
    case DType::I32:
      if (isFloat(from)) {
        if (std::isnan(x)) return 0;
        return std::clamp(std::trunc(x), -2147483648.0, 2147483647.0);
      }
      return double(wrap32(int64_t(x)));
  }
  return x;
}

double rnd(DType t, double x) { return convert(t, t, x); }

double unaryOp(UnaryOp op, DType t, double a) {
  if (isFloat(t)) {
    float x = float(a), r = 0;
    switch (op) {
      case UnaryOp::Neg: r = -x; break;
      case UnaryOp::Abs: r = std::fabs(x); break;
      case UnaryOp::Exp: r = std::exp(x); break;
      case UnaryOp::Log: r = std::log(x); break;
      case UnaryOp::Sqrt: r = std::sqrt(x); break;
      case UnaryOp::Rsqrt: r = 1.0f / std::sqrt(x); break;
      case UnaryOp::Sin: r = std::sin(x); break;
      case UnaryOp::Cos: r = std::cos(x); break;
      case UnaryOp::Tanh: r = std::tanh(x); break;
      case UnaryOp::Sigmoid: r = 1.0f / (1.0f + std::exp(-x)); break;
      case UnaryOp::Silu: r = x / (1.0f + std::exp(-x)); break;
      case UnaryOp::Not: fail("`not` of a float value");
    }
    return rnd(t, r);
  }
  int64_t x = int64_t(a);
  switch (op) {
    case UnaryOp::Neg: return rnd(t, double(-x));
    case UnaryOp::Abs: return rnd(t, double(x < 0 ? -x : x));
    case UnaryOp::Not: return t == DType::Bool ? double(x == 0) : double(wrap32(~x));
    default: fail(std::string("`") + spelling(op) + "` of an integer value");
  }
}

double binaryOp(BinaryOp op, DType t, DType ta, DType tb, double a, double b) {
  switch (op) {
    case BinaryOp::Lt: case BinaryOp::Le: case BinaryOp::Gt:
    case BinaryOp::Ge: case BinaryOp::Eq: case BinaryOp::Ne: {
      if (isFloat(ta) || isFloat(tb)) a = float(a), b = float(b);  // an i32 side converts to f32
      bool r = op == BinaryOp::Lt ? a < b : op == BinaryOp::Le ? a <= b : op == BinaryOp::Gt ? a > b
             : op == BinaryOp::Ge ? a >= b : op == BinaryOp::Eq ? a == b : a != b;
      return r;
    }
    case BinaryOp::And:
    case BinaryOp::Or:
      if (t == DType::Bool) return op == BinaryOp::And ? (a != 0 && b != 0) : (a != 0 || b != 0);
      if (isFloat(t)) fail("`and`/`or` of float values");
      return double(wrap32(op == BinaryOp::And ? (int64_t(a) & int64_t(b)) : (int64_t(a) | int64_t(b))));
    default: break;
  }
  if (isFloat(t)) {
    float x = float(a), y = float(b), r = 0;
    switch (op) {
      case BinaryOp::Add: r = x + y; break;
      case BinaryOp::Sub: r = x - y; break;
      case BinaryOp::Mul: r = x * y; break;
      case BinaryOp::Div: r = x / y; break;
      case BinaryOp::Mod: r = std::fmod(x, y); break;
      case BinaryOp::Min: r = std::fmin(x, y); break;
      case BinaryOp::Max: r = std::fmax(x, y); break;
      case BinaryOp::Pow: r = std::pow(x, y); break;
      default: break;
    }
    return rnd(t, r);
  }
  // Integers: exact in int64 (the operands are i32), wrapped to i32; C division semantics.
  int64_t x = int64_t(a), y = int64_t(b), r = 0;
  switch (op) {
    case BinaryOp::Add: r = x + y; break;
    case BinaryOp::Sub: r = x - y; break;
    case BinaryOp::Mul: r = x * y; break;
    case BinaryOp::Div:
    case BinaryOp::Mod:
      if (y == 0) fail("integer division by zero");
      r = op == BinaryOp::Div ? x / y : x % y;
      break;
    case BinaryOp::Min: r = std::min(x, y); break;
    case BinaryOp::Max: r = std::max(x, y); break;
    case BinaryOp::Pow:
      if (y < 0) fail("integer power with a negative exponent");
      r = 1;
      for (int64_t i = 0; i < y && i < 64; ++i) r = wrap32(r * x);
      break;
    default: break;
  }
  return rnd(t, double(r));
}

}  // namespace

float roundTo(DType t, float x) {
  if (t == DType::BF16) return runtime::bf16ToF32(runtime::f32ToBf16(x));
  if (t == DType::F16) return runtime::f16ToF32(runtime::f32ToF16(x));
  return x;
}

// A tile value: f32/bf16/f16 values (already rounded), i32 and bool exactly, all held as double.
struct Value {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<double> v;
};

// A region evaluated for one access: per dimension the start and the count (>= 1); `shape` keeps
// the dimensions of non-zero length (a single index drops its dimension).
struct Box {
  std::vector<int64_t> start, count;
  Shape shape;
};

// Calls f(offset into the row-major array of shape `of`, offset into the box, run length) for
// each innermost contiguous run of the box.
template <class F>
void forEachRun(const Shape& of, const Box& b, F&& f) {
  const size_t n = of.size();
  if (n == 0) return f(int64_t(0), int64_t(0), int64_t(1));
  std::vector<int64_t> stride(n, 1), idx(n - 1, 0);
  for (size_t d = n - 1; d > 0; --d) stride[d - 1] = stride[d] * of[d];
  const int64_t inner = b.count[n - 1];
  for (int64_t k = 0;; k += inner) {
    int64_t off = b.start[n - 1];
    for (size_t d = 0; d + 1 < n; ++d) off += (b.start[d] + idx[d]) * stride[d];
    f(off, k, inner);
    size_t d = n - 1;
    while (d > 0 && ++idx[d - 1] == b.count[d - 1]) idx[--d] = 0;
    if (d == 0) return;
  }
}

// Runs one task's TileFunc body.
struct TaskRunner {
  Interpreter& in;
  const Task& task;
  const Node& node;
  const TileFunc& fn;
  const std::vector<int64_t>& inputs;
  std::vector<Value> locals;

  std::string where() const {
    std::string idx;
    for (size_t i = 0; i < task.index.size(); ++i) idx += (i ? ", " : "") + std::to_string(task.index[i]);
    return "task " + std::to_string(task.id) + " (`" + fn.name + "` [" + idx + "], node " +
           std::to_string(node.id) + ", SM " + std::to_string(in.taskSm_[task.id]) + ", step " +
           std::to_string(in.steps_ + 1) + ")";
  }

  const Tensor& tensorOfParam(int param) const {
    if (param < 0 || size_t(param) >= node.tensors.size() || node.tensors[param] < 0)
      fail("parameter " + std::to_string(param) + " of `" + fn.name + "` is not bound to a tensor");
    return in.mk_.graph.tensors[node.tensors[param]];
  }

  static Value zeros(DType t, const Shape& s) { return {t, s, std::vector<double>(size_t(abi::shapeElements(s)), 0.0)}; }
  static Value scalar(DType t, double x) { return {t, {}, {x}}; }

  int64_t scalarInt(const Value& v, const char* what) {
    if (!v.shape.empty()) fail(std::string(what) + " is not a scalar (shape " + abi::shapeString(v.shape) + ")");
    if (v.v[0] != std::trunc(v.v[0])) fail(std::string(what) + " is not an integer");
    return int64_t(v.v[0]);
  }

  // Fits a value to a local's (or tensor's) dtype and shape: scalars broadcast.
  Value conform(const Value& v, DType t, const Shape& s, const std::string& what) {
    if (v.shape != s && !v.shape.empty())
      fail("a value of shape " + abi::shapeString(v.shape) + " assigned to " + what + " of shape " + abi::shapeString(s));
    Value r{t, s, std::vector<double>(size_t(abi::shapeElements(s)))};
    for (size_t k = 0; k < r.v.size(); ++k) r.v[k] = convert(v.dtype, t, v.v[v.shape.empty() ? 0 : k]);
    return r;
  }

  Box box(const std::vector<RegionDim>& dims, const Shape& of, const std::string& what) {
    if (dims.size() != of.size())
      fail(what + ": a region of " + std::to_string(dims.size()) + " dimensions into shape " + abi::shapeString(of));
    Box b;
    bool inside = true;
    std::string text;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d].length < 0) fail(what + ": negative region length");
      Value tmp;
      int64_t s = scalarInt(ref(*dims[d].start, tmp), "a region start");
      int64_t c = std::max<int64_t>(dims[d].length, 1);
      b.start.push_back(s);
      b.count.push_back(c);
      if (dims[d].length > 0) b.shape.push_back(dims[d].length);
      if (s < 0 || s + c > of[d]) inside = false;
      text += (d ? ", " : "") + std::to_string(s) + (dims[d].length > 0 ? ":+" + std::to_string(dims[d].length) : "");
    }
    if (!inside) fail(what + "[" + text + "] is outside its shape " + abi::shapeString(of));
    return b;
  }

  // With checkAccesses on: the box must lie inside the union of the task's declared regions.
  void checkDeclared(const std::vector<Region>& declared, const Tensor& t, const Box& b, bool write) {
    auto covers = [&](const std::vector<int64_t>& lo, const std::vector<int64_t>& cnt) {
      for (const Region& r : declared) {
        if (r.tensor != t.id) continue;
        bool ok = true;
        for (size_t d = 0; d < lo.size() && d < r.ranges.size() && ok; ++d)
          ok = r.ranges[d].first <= lo[d] && lo[d] + cnt[d] <= r.ranges[d].second;
        if (ok) return true;
      }
      return false;
    };
    if (covers(b.start, b.count)) return;
    // Maybe covered by several regions together: check element by element.
    const size_t n = b.start.size();
    std::vector<int64_t> idx(n, 0), at(n), one(n, 1);
    bool ok = true;
    for (;;) {
      for (size_t d = 0; d < n; ++d) at[d] = b.start[d] + idx[d];
      if (!covers(at, one)) {
        ok = false;
        break;
      }
      size_t d = n;
      while (d > 0 && ++idx[d - 1] == b.count[d - 1]) idx[--d] = 0;
      if (d == 0) break;
    }
    if (ok) return;
    std::string region, decl;
    for (size_t d = 0; d < n; ++d)
      region += (d ? ", " : "") + std::to_string(b.start[d]) + ":" + std::to_string(b.start[d] + b.count[d]);
    for (const Region& r : declared) {
      if (r.tensor != t.id) continue;
      decl += decl.empty() ? " [" : " [";
      for (size_t d = 0; d < r.ranges.size(); ++d)
        decl += (d ? ", " : "") + std::to_string(r.ranges[d].first) + ":" + std::to_string(r.ranges[d].second);
      decl += "]";
    }
    fail(std::string(write ? "store to " : "load of ") + "'" + t.name + "'[" + region + "] is outside the task's declared " +
         (write ? "writes" : "reads") + " of it:" + (decl.empty() ? " none" : decl));
  }

  // Evaluates an operand without copying when it is a local.
  const Value& ref(const Expr& e, Value& tmp) {
    if (e.kind == ExprKind::Local) return local(e.index);
    tmp = eval(e);
    return tmp;
  }

  Value& local(int slot) {
    if (slot < 0 || size_t(slot) >= locals.size()) fail("local slot " + std::to_string(slot) + " out of range");
    return locals[slot];
  }

  Value eval(const Expr& e) {
    Value r = evalRaw(e);
    if (r.shape != e.shape)
      fail("IR inconsistency: an expression typed " + std::string(dtypeName(e.dtype)) + abi::shapeString(e.shape) +
           " evaluates to shape " + abi::shapeString(r.shape));
    r.dtype = e.dtype;
    return r;
  }

  Value evalRaw(const Expr& e) {
    auto operand = [&](size_t i) -> const Expr& {
      if (e.operands.size() <= i || !e.operands[i]) fail("IR inconsistency: a missing operand");
      return *e.operands[i];
    };
    switch (e.kind) {
      case ExprKind::Const: return {e.dtype, e.shape, std::vector<double>(size_t(abi::shapeElements(e.shape)), rnd(e.dtype, e.value))};
      case ExprKind::Local: return local(e.index);
      case ExprKind::TaskIndex:
        if (e.index < 0 || size_t(e.index) >= task.index.size())
          fail("task index dimension " + std::to_string(e.index) + " out of range");
        return scalar(e.dtype, rnd(e.dtype, double(task.index[e.index])));
      case ExprKind::Scalar: return scalar(e.dtype, rnd(e.dtype, scalarParam(e.index)));
      case ExprKind::Load: {
        const Tensor& t = tensorOfParam(e.index);
        Box b = box(e.region, t.shape, "load of '" + t.name + "'");
        if (in.checkAccesses_ && t.kind != Tensor::Weight) checkDeclared(task.reads, t, b, false);
        const auto& st = in.store_[t.id];
        const bool ints = in.isInt(t.id);
        Value r{e.dtype, b.shape, std::vector<double>(size_t(abi::shapeElements(b.shape)))};
        const bool same = t.dtype == e.dtype;  // stored values are already rounded to t.dtype
        forEachRun(t.shape, b, [&](int64_t off, int64_t k, int64_t n) {
          for (int64_t j = 0; j < n; ++j) {
            const double x = ints ? double(st.i[off + j]) : double(st.f[off + j]);
            r.v[k + j] = same ? x : convert(t.dtype, e.dtype, x);
          }
        });
        return r;
      }
      case ExprKind::Slice: {
        Value tmp;
        const Value& a = ref(operand(0), tmp);
        Box b = box(e.region, a.shape, "slice of a tile");
        Value r{e.dtype, b.shape, std::vector<double>(size_t(abi::shapeElements(b.shape)))};
        forEachRun(a.shape, b, [&](int64_t off, int64_t k, int64_t n) {
          for (int64_t j = 0; j < n; ++j) r.v[k + j] = convert(a.dtype, e.dtype, a.v[off + j]);
        });
        return r;
      }
      case ExprKind::Unary: {
        Value tmp;
        const Value& a = ref(operand(0), tmp);
        Value r{e.dtype, a.shape, std::vector<double>(a.v.size())};
        for (size_t k = 0; k < a.v.size(); ++k) r.v[k] = unaryOp(e.unary, e.dtype, a.v[k]);
        return r;
      }
      case ExprKind::Binary: {
        Value ta, tb;
        const Value& a = ref(operand(0), ta);
        const Value& b = ref(operand(1), tb);
        Value r{e.dtype, broadcastShape({&a, &b}), {}};
        r.v.resize(size_t(abi::shapeElements(r.shape)));
        const bool sa = a.shape.empty(), sb = b.shape.empty();
        for (size_t k = 0; k < r.v.size(); ++k)
          r.v[k] = binaryOp(e.binary, e.dtype, a.dtype, b.dtype, a.v[sa ? 0 : k], b.v[sb ? 0 : k]);
        return r;
      }
      case ExprKind::Select: {
        Value tc, ta, tb;
        const Value& c = ref(operand(0), tc);
        const Value& a = ref(operand(1), ta);
        const Value& b = ref(operand(2), tb);
        Value r{e.dtype, broadcastShape({&c, &a, &b}), {}};
        r.v.resize(size_t(abi::shapeElements(r.shape)));
        auto at = [](const Value& v, size_t k) { return v.v[v.shape.empty() ? 0 : k]; };
        for (size_t k = 0; k < r.v.size(); ++k)
          r.v[k] = at(c, k) != 0 ? convert(a.dtype, e.dtype, at(a, k)) : convert(b.dtype, e.dtype, at(b, k));
        return r;
      }
      case ExprKind::Cast: {
        Value tmp;
        const Value& a = ref(operand(0), tmp);
        Value r{e.dtype, a.shape, std::vector<double>(a.v.size())};
        for (size_t k = 0; k < a.v.size(); ++k) r.v[k] = convert(a.dtype, e.dtype, a.v[k]);
        return r;
      }
      case ExprKind::Reduce: return scalar(e.dtype, reduce(e, operand(0)));
      case ExprKind::RowReduce: {
        Value ta;
        const Value& a = ref(operand(0), ta);
        if (a.shape.size() != 2 || a.shape[1] <= 0) fail(std::string("row_") + spelling(e.reduce) + " of shape " + abi::shapeString(a.shape));
        const int64_t M = a.shape[0], N = a.shape[1];
        Value r{e.dtype, {M}, {}};
        for (int64_t m = 0; m < M; ++m) r.v.push_back(reduceValues(e.reduce, e.dtype, a.dtype, a.v.data() + m * N, size_t(N)));
        return r;
      }
      case ExprKind::RepeatRows:
      case ExprKind::RepeatCols: {
        Value ta;
        const Value& a = ref(operand(0), ta);
        const bool rows = e.kind == ExprKind::RepeatRows;
        if (a.shape.size() != 1 || e.shape.size() != 2 || a.shape[0] != e.shape[rows ? 1 : 0])
          fail(std::string(rows ? "repeat_rows" : "repeat_cols") + " of shape " + abi::shapeString(a.shape) + " to " + abi::shapeString(e.shape));
        const int64_t M = e.shape[0], N = e.shape[1];
        Value r{e.dtype, e.shape, std::vector<double>(size_t(M * N))};
        for (int64_t m = 0; m < M; ++m)
          for (int64_t n = 0; n < N; ++n) r.v[size_t(m * N + n)] = convert(a.dtype, e.dtype, a.v[size_t(rows ? n : m)]);
        return r;
      }
      case ExprKind::Dot: {
        Value ta, tb;
        const Value& a = ref(operand(0), ta);
        const Value& b = ref(operand(1), tb);
        if (a.shape.size() != 1 || a.shape != b.shape)
          fail("dot of shapes " + abi::shapeString(a.shape) + " and " + abi::shapeString(b.shape));
        float acc = 0;
        for (size_t k = 0; k < a.v.size(); ++k) acc = std::fma(float(a.v[k]), float(b.v[k]), acc);
        return scalar(e.dtype, rnd(e.dtype, acc));
      }
      case ExprKind::RowDot:
      case ExprKind::ColDot: {
        Value ta, tb;
        const Value& a = ref(operand(0), ta);
        const Value& x = ref(operand(1), tb);
        const bool row = e.kind == ExprKind::RowDot;
        if (a.shape.size() != 2 || x.shape.size() != 1 || x.shape[0] != a.shape[row ? 1 : 0])
          fail(std::string(row ? "rowdot" : "coldot") + " of shapes " + abi::shapeString(a.shape) + " and " + abi::shapeString(x.shape));
        const int64_t M = a.shape[0], K = a.shape[1];
        Value r{e.dtype, {row ? M : K}, {}};
        std::vector<float> acc(size_t(row ? M : K), 0.0f);
        // Sequential f32 accumulation over the contracted dimension, one fma per term.
        if (row) {
          for (int64_t m = 0; m < M; ++m)
            for (int64_t k = 0; k < K; ++k) acc[m] = std::fma(float(a.v[m * K + k]), float(x.v[k]), acc[m]);
        } else {
          for (int64_t m = 0; m < M; ++m)
            for (int64_t k = 0; k < K; ++k) acc[k] = std::fma(float(a.v[m * K + k]), float(x.v[m]), acc[k]);
        }
        for (float v : acc) r.v.push_back(rnd(e.dtype, v));
        return r;
      }
      case ExprKind::Mma:
      case ExprKind::MmaNt: {
        Value ta, tb;
        const Value& a = ref(operand(0), ta);
        const Value& b = ref(operand(1), tb);
        const bool nt = e.kind == ExprKind::MmaNt;
        if (a.shape.size() != 2 || b.shape.size() != 2 || a.shape[1] != b.shape[nt ? 1 : 0])
          fail(std::string(nt ? "mma_nt" : "mma") + " of shapes " + abi::shapeString(a.shape) + " and " + abi::shapeString(b.shape));
        const int64_t M = a.shape[0], K = a.shape[1], N = b.shape[nt ? 0 : 1];
        Value r{e.dtype, {M, N}, std::vector<double>(size_t(M * N))};
        // The order docs/language.md states: for each (m, n), from 0.0f, k increasing, one f32
        // fma per term of the operands' values (already at their dtype).
        for (int64_t m = 0; m < M; ++m)
          for (int64_t n = 0; n < N; ++n) {
            float acc = 0.0f;
            for (int64_t k = 0; k < K; ++k)
              acc = std::fma(float(a.v[m * K + k]), float(b.v[nt ? n * K + k : k * N + n]), acc);
            r.v[size_t(m * N + n)] = rnd(e.dtype, acc);
          }
        return r;
      }
      case ExprKind::Iota: {
        if (e.shape.size() != 1) fail("iota of shape " + abi::shapeString(e.shape));
        Value r{e.dtype, e.shape, {}};
        for (int64_t k = 0; k < e.shape[0]; ++k) r.v.push_back(rnd(e.dtype, double(k)));
        return r;
      }
      case ExprKind::Concat: {
        Value ta, tb;
        const Value& a = ref(operand(0), ta);
        const Value& b = ref(operand(1), tb);
        if (a.shape.size() > 1 || b.shape.size() > 1)
          fail("concat of shapes " + abi::shapeString(a.shape) + " and " + abi::shapeString(b.shape) + " (1-D only)");
        Value r{e.dtype, {int64_t(a.v.size() + b.v.size())}, {}};
        for (double x : a.v) r.v.push_back(convert(a.dtype, e.dtype, x));
        for (double x : b.v) r.v.push_back(convert(b.dtype, e.dtype, x));
        return r;
      }
    }
    fail("unknown expression kind");
  }

  static Shape broadcastShape(std::initializer_list<const Value*> vs) {
    Shape s;
    for (const Value* v : vs) {
      if (v->shape.empty()) continue;
      if (!s.empty() && s != v->shape) fail("elementwise operands of shapes " + abi::shapeString(s) + " and " + abi::shapeString(v->shape));
      s = v->shape;
    }
    return s;
  }

  double reduce(const Expr& e, const Expr& operandExpr) {
    Value tmp;
    const Value& a = ref(operandExpr, tmp);
    if (a.v.empty()) fail(std::string(spelling(e.reduce)) + " of an empty tile");
    return reduceValues(e.reduce, e.dtype, a.dtype, a.v.data(), a.v.size());
  }

  // `op` over the n (> 0) values v of dtype `from`, to a value of dtype `to`: the one definition
  // of a reduction's order and rounding, for `sum`-like builtins and each row of `row_sum`-like ones.
  double reduceValues(ReduceOp op, DType to, DType from, const double* v, size_t n) {
    switch (op) {
      case ReduceOp::Sum:
      case ReduceOp::Mean: {
        if (!isFloat(to)) {
          int64_t acc = 0;
          for (size_t k = 0; k < n; ++k) acc = wrap32(acc + int64_t(v[k]));
          return rnd(to, double(op == ReduceOp::Mean ? acc / int64_t(n) : acc));
        }
        float acc = 0;  // sequential f32 accumulation
        for (size_t k = 0; k < n; ++k) acc += float(v[k]);
        if (op == ReduceOp::Mean) acc /= float(n);
        return rnd(to, acc);
      }
      case ReduceOp::Max:
      case ReduceOp::Min:
      case ReduceOp::Argmax: {
        size_t best = 0;
        for (size_t k = 1; k < n; ++k)
          if (op == ReduceOp::Min ? v[k] < v[best] : v[k] > v[best]) best = k;  // strict: the FIRST extreme
        return op == ReduceOp::Argmax ? rnd(to, double(best)) : convert(from, to, v[best]);
      }
    }
    fail("unknown reduction");
  }

  double scalarParam(int index) {
    if (index < 0 || size_t(index) >= node.scalars.size()) fail("scalar parameter " + std::to_string(index) + " has no argument");
    const ScalarArg& a = node.scalars[index];
    switch (a.kind) {
      case ScalarArg::Const: return a.value;
      case ScalarArg::Input:
        if (a.index < 0 || size_t(a.index) >= inputs.size())
          fail("scalar parameter " + std::to_string(index) + " reads step input " + std::to_string(a.index) + " of " +
               std::to_string(inputs.size()));
        return double(inputs[a.index]);
      case ScalarArg::Tensor: {
        if (a.index < 0 || size_t(a.index) >= in.store_.size()) fail("scalar parameter from a tensor id out of range");
        const Tensor& t = in.mk_.graph.tensors[a.index];
        if (t.elements() != 1) fail("scalar parameter from tensor '" + t.name + "' of shape " + abi::shapeString(t.shape));
        // Reading the tensor is an access like a load: it must be declared, or the schedule
        // may run this task before the tensor's producer.
        if (in.checkAccesses_) checkDeclared(task.reads, t, Box{std::vector<int64_t>(t.shape.size(), 0), t.shape, t.shape}, false);
        return in.isInt(t.id) ? double(in.store_[t.id].i[0]) : double(in.store_[t.id].f[0]);
      }
    }
    return 0;
  }

  void exec(const Block& b) {
    for (const auto& s : b) exec(*s);
  }

  void exec(const Stmt& s) {
    auto value = [&]() -> const Expr& {
      if (!s.value) fail("IR inconsistency: a statement without its value");
      return *s.value;
    };
    switch (s.kind) {
      case StmtKind::Let: {
        const Local& L = fn.locals.at(size_t(s.slot));
        Value& dst = local(s.slot);
        if (!s.value) dst = zeros(L.dtype, L.shape);  // `var x: T;` starts at zero
        else dst = conform(eval(*s.value), L.dtype, L.shape, "local '" + L.name + "'");
        return;
      }
      case StmtKind::Assign: {
        const Local& L = fn.locals.at(size_t(s.slot));
        Value tmp;
        const Value& r = ref(value(), tmp);
        if (s.assign == AssignOp::Set) {
          Value v = conform(r, L.dtype, L.shape, "local '" + L.name + "'");
          local(s.slot) = std::move(v);
          return;
        }
        Value& cur = local(s.slot);
        if (r.shape != cur.shape && !r.shape.empty())
          fail("compound assignment of shape " + abi::shapeString(r.shape) + " to local '" + L.name + "' of shape " + abi::shapeString(cur.shape));
        const BinaryOp op = s.assign == AssignOp::Add ? BinaryOp::Add : s.assign == AssignOp::Sub ? BinaryOp::Sub
                          : s.assign == AssignOp::Mul ? BinaryOp::Mul : BinaryOp::Div;
        for (size_t k = 0; k < cur.v.size(); ++k)
          cur.v[k] = binaryOp(op, L.dtype, L.dtype, r.dtype, cur.v[k], r.v[r.shape.empty() ? 0 : k]);
        return;
      }
      case StmtKind::Store: {
        const Tensor& t = tensorOfParam(s.tensor);
        Box b = box(s.region, t.shape, "store to '" + t.name + "'");
        if (in.checkAccesses_) checkDeclared(task.writes, t, b, true);
        Value tmp;
        const Value& r = ref(value(), tmp);
        if (r.shape != b.shape && !r.shape.empty())
          fail("store of shape " + abi::shapeString(r.shape) + " into a region of shape " + abi::shapeString(b.shape) + " of '" + t.name + "'");
        auto& st = in.store_[t.id];
        const bool ints = in.isInt(t.id), bc = r.shape.empty();
        forEachRun(t.shape, b, [&](int64_t off, int64_t k, int64_t n) {
          for (int64_t j = 0; j < n; ++j) {
            double x = convert(r.dtype, t.dtype, r.v[bc ? 0 : k + j]);
            if (ints) st.i[off + j] = int32_t(x);
            else st.f[off + j] = float(x);
          }
        });
        return;
      }
      case StmtKind::For: {
        if (!s.lo || !s.hi) fail("IR inconsistency: a loop without bounds");
        if (s.step <= 0) fail("loop step " + std::to_string(s.step) + " is not positive");
        Value tl, th;
        const int64_t lo = scalarInt(ref(*s.lo, tl), "a loop bound"), hi = scalarInt(ref(*s.hi, th), "a loop bound");
        const DType t = fn.locals.at(size_t(s.slot)).dtype;
        for (int64_t i = lo; i < hi; i += s.step) {
          local(s.slot) = scalar(t, double(i));
          exec(s.body);
        }
        return;
      }
      case StmtKind::If: {
        Value tmp;
        const Value& c = ref(value(), tmp);
        if (!c.shape.empty()) fail("an `if` condition of shape " + abi::shapeString(c.shape));
        exec(c.v[0] != 0 ? s.body : s.otherwise);
        return;
      }
    }
  }
};

// ---- Interpreter -----------------------------------------------------------------------------

Interpreter::Interpreter(const Megakernel& mk) : mk_(mk) {
  const Graph& g = mk_.graph;
  for (size_t i = 0; i < g.tensors.size(); ++i)
    if (g.tensors[i].id != int(i)) fail("tensor '" + g.tensors[i].name + "' has id " + std::to_string(g.tensors[i].id) + " at position " + std::to_string(i));
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.id != int(i)) fail("node at position " + std::to_string(i) + " has id " + std::to_string(n.id));
    if (!n.func) fail("node " + std::to_string(i) + " has no TileFunc");
    if (n.tensors.size() != n.func->params.size())
      fail("node " + std::to_string(i) + " (`" + n.func->name + "`) binds " + std::to_string(n.tensors.size()) + " of " +
           std::to_string(n.func->params.size()) + " parameters");
    for (int t : n.tensors)
      if (t >= int(g.tensors.size())) fail("node " + std::to_string(i) + " binds tensor id " + std::to_string(t) + " out of range");
  }
  for (size_t i = 0; i < mk_.counters.size(); ++i)
    if (mk_.counters[i].id != int(i)) fail("counter at position " + std::to_string(i) + " has id " + std::to_string(mk_.counters[i].id));
  taskSm_.assign(mk_.tasks.size(), -1);
  for (size_t i = 0; i < mk_.tasks.size(); ++i) {
    const Task& t = mk_.tasks[i];
    if (t.id != int(i)) fail("task at position " + std::to_string(i) + " has id " + std::to_string(t.id));
    if (t.node < 0 || size_t(t.node) >= g.nodes.size()) fail("task " + std::to_string(i) + " has node id out of range");
    for (int c : t.waits)
      if (c < 0 || size_t(c) >= mk_.counters.size()) fail("task " + std::to_string(i) + " waits on counter id " + std::to_string(c) + " out of range");
    for (int c : t.signals)
      if (c < 0 || size_t(c) >= mk_.counters.size()) fail("task " + std::to_string(i) + " signals counter id " + std::to_string(c) + " out of range");
  }
  for (size_t sm = 0; sm < mk_.queues.size(); ++sm)
    for (int id : mk_.queues[sm]) {
      if (id < 0 || size_t(id) >= mk_.tasks.size()) fail("SM " + std::to_string(sm) + " queues task id " + std::to_string(id) + " out of range");
      if (taskSm_[id] >= 0) fail("task " + std::to_string(id) + " is queued twice (SMs " + std::to_string(taskSm_[id]) + " and " + std::to_string(sm) + ")");
      taskSm_[id] = int(sm);
    }
  for (size_t i = 0; i < taskSm_.size(); ++i)
    if (taskSm_[i] < 0) fail("task " + std::to_string(i) + " is in no SM's queue");

  store_.resize(g.tensors.size());
  for (const Tensor& t : g.tensors) {
    if (isInt(t.id)) store_[t.id].i.assign(size_t(t.elements()), 0);
    else store_[t.id].f.assign(size_t(t.elements()), 0.0f);
  }
  counters_.assign(mk_.counters.size(), 0);
}

bool Interpreter::isInt(int tensor) const {
  DType d = mk_.graph.tensors[tensor].dtype;
  return d == DType::I32 || d == DType::Bool;
}

// Weight assembly and random weights live in runtime/weights.h, shared with the GPU runtime so
// both see bit-identical weights.
namespace {

runtime::WeightSpec weightSpec(const Tensor& t) {
  runtime::WeightSpec w;
  w.name = t.name;
  w.dtype = t.dtype;
  w.shape = t.shape;
  w.layout = t.layout;
  w.sources = t.sources;
  return w;
}

}  // namespace

void Interpreter::loadWeights(const runtime::SafetensorsSet& set) {
  for (const Tensor& t : mk_.graph.tensors) {
    if (t.kind != Tensor::Weight) continue;
    try {
      runtime::assembleWeightValues(weightSpec(t), set, store_[t.id].f, store_[t.id].i);
    } catch (const runtime::WeightError& e) {
      fail(e.what());
    }
  }
  weightsLoaded_ = true;
}

void Interpreter::randomWeights(uint64_t seed) {
  for (const Tensor& t : mk_.graph.tensors) {
    if (t.kind != Tensor::Weight) continue;
    if (isInt(t.id)) continue;  // integer weights stay zero
    store_[t.id].f = runtime::randomWeightValues(weightSpec(t), seed);
  }
  weightsLoaded_ = true;
}

void Interpreter::step(const std::vector<int64_t>& inputs, uint64_t interleaveSeed) {
  const Graph& g = mk_.graph;
  if (!weightsLoaded_)
    for (const Tensor& t : g.tensors)
      if (t.kind == Tensor::Weight) fail("no weights: call loadWeights or randomWeights before step");
  if (!g.inputs.empty() && inputs.size() != g.inputs.size())
    fail("step takes " + std::to_string(g.inputs.size()) + " inputs; got " + std::to_string(inputs.size()));

  const int64_t epoch = steps_ + 1;
  auto ready = [&](const Task& t) {
    for (int c : t.waits)
      if (counters_[c] < epoch * mk_.counters[c].expected()) return false;
    return true;
  };
  std::vector<size_t> cursor(mk_.queues.size(), 0);
  std::vector<int> runnable;
  Rng rng{interleaveSeed};
  order_.clear();
  for (size_t left = mk_.tasks.size(); left > 0; --left) {
    runnable.clear();
    for (size_t sm = 0; sm < mk_.queues.size(); ++sm)
      if (cursor[sm] < mk_.queues[sm].size() && ready(mk_.tasks[mk_.queues[sm][cursor[sm]]])) runnable.push_back(int(sm));
    if (runnable.empty()) {
      std::string msg = "deadlock in step " + std::to_string(epoch) + ": no SM can run its next task (" +
                        std::to_string(mk_.tasks.size() - left) + " of " + std::to_string(mk_.tasks.size()) + " tasks done)";
      for (size_t sm = 0; sm < mk_.queues.size(); ++sm) {
        if (cursor[sm] >= mk_.queues[sm].size()) continue;
        const Task& t = mk_.tasks[mk_.queues[sm][cursor[sm]]];
        for (int c : t.waits) {
          const Counter& ctr = mk_.counters[c];
          if (counters_[c] >= epoch * ctr.expected()) continue;
          msg += "\n  SM " + std::to_string(sm) + ": task " + std::to_string(t.id) + " (`" + g.nodes[t.node].func->name +
                 "`) waits on counter " + std::to_string(c) + (ctr.why.empty() ? "" : " (" + ctr.why + ")") + ": expected " +
                 std::to_string(epoch * ctr.expected()) + ", seen " + std::to_string(counters_[c]);
        }
      }
      fail(msg);
    }
    const int sm = runnable[rng.below(runnable.size())];
    const Task& t = mk_.tasks[mk_.queues[sm][cursor[sm]++]];
    runTask(t, inputs);
    for (int c : t.signals) ++counters_[c];
    order_.push_back(t.id);
  }
  ++steps_;
}

void Interpreter::runTask(const Task& task, const std::vector<int64_t>& inputs) {
  const Node& node = mk_.graph.nodes[task.node];
  const TileFunc& fn = *node.func;
  TaskRunner r{*this, task, node, fn, inputs, {}};
  r.locals.reserve(fn.locals.size());
  for (const Local& l : fn.locals) r.locals.push_back(TaskRunner::zeros(l.dtype, l.shape));
  try {
    r.exec(fn.body);
  } catch (const InterpError& e) {
    throw InterpError(r.where() + ": " + e.what());
  } catch (const std::out_of_range& e) {
    throw InterpError(r.where() + ": IR inconsistency (" + e.what() + ")");
  }
}

std::vector<float> Interpreter::tensor(int id) const {
  if (id < 0 || size_t(id) >= store_.size()) fail("tensor id " + std::to_string(id) + " out of range");
  if (!isInt(id)) return store_[id].f;
  return std::vector<float>(store_[id].i.begin(), store_[id].i.end());
}

std::vector<int32_t> Interpreter::tensorInts(int id) const {
  if (id < 0 || size_t(id) >= store_.size()) fail("tensor id " + std::to_string(id) + " out of range");
  if (isInt(id)) return store_[id].i;
  std::vector<int32_t> out;
  for (float x : store_[id].f) out.push_back(int32_t(convert(DType::F32, DType::I32, x)));
  return out;
}

void Interpreter::setTensor(int id, const std::vector<float>& values) {
  if (id < 0 || size_t(id) >= store_.size()) fail("tensor id " + std::to_string(id) + " out of range");
  const Tensor& t = mk_.graph.tensors[id];
  if (int64_t(values.size()) != t.elements())
    fail("setTensor: " + std::to_string(values.size()) + " values for '" + t.name + "' of shape " + abi::shapeString(t.shape));
  for (size_t k = 0; k < values.size(); ++k) {
    if (isInt(id)) store_[id].i[k] = int32_t(convert(DType::F32, t.dtype, values[k]));
    else store_[id].f[k] = float(rnd(t.dtype, values[k]));
  }
}

std::map<std::string, std::vector<float>> Interpreter::outputs() const {
  std::map<std::string, std::vector<float>> out;
  for (const auto& [name, id] : mk_.graph.outputs) out[name] = tensor(id);
  return out;
}

}  // namespace mk::interp
