// Interval interpretation of a TileFunc body for one task. Every scalar i32 value is tracked as an
// interval [lo, hi] (infinite ends saturate at +-kInf); every Load and Store adds its box to the
// task's boxes of the tensor it names (Analyzer::addBox). The result is a superset of what the
// task can touch at run time, which is all dependency analysis needs.
//
// Not ir/static_facts.h's analysis (the backend's): that one holds for every task of an op at
// once (indices unknown) and only for locals written once; this one is per task, flow-sensitive.
#include "lowering/regions.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>

namespace mk::lowering {

using namespace mk::ir;

namespace {

constexpr int64_t kInf = int64_t(1) << 62;

struct Interval {
  int64_t lo = -kInf, hi = kInf;
  static Interval point(int64_t v) { return {v, v}; }
  bool exact() const { return lo == hi; }
  bool finite() const { return lo > -kInf && hi < kInf; }
  bool operator==(const Interval&) const = default;
};
const Interval kTop{};

Interval hull(Interval a, Interval b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }

int64_t saturate(__int128 v) {
  return v <= -kInf ? -kInf : v >= kInf ? kInf : static_cast<int64_t>(v);
}
bool infinite(int64_t v) { return v <= -kInf || v >= kInf; }

// End-point arithmetic where +-kInf stands for infinity.
int64_t addEnd(int64_t a, int64_t b) {
  if (infinite(a)) return a;
  if (infinite(b)) return b;
  return saturate(__int128(a) + b);
}
int64_t mulEnd(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (infinite(a) || infinite(b)) return (a < 0) != (b < 0) ? -kInf : kInf;
  return saturate(__int128(a) * b);
}

Interval add(Interval a, Interval b) { return {addEnd(a.lo, b.lo), addEnd(a.hi, b.hi)}; }
Interval neg(Interval a) { return {infinite(a.hi) ? -kInf : -a.hi, infinite(a.lo) ? kInf : -a.lo}; }
Interval mul(Interval a, Interval b) {
  int64_t p[] = {mulEnd(a.lo, b.lo), mulEnd(a.lo, b.hi), mulEnd(a.hi, b.lo), mulEnd(a.hi, b.hi)};
  return {*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
}
// Division by a positive constant is monotone; taking the floor at the low end and truncation at
// the high end is sound whichever rounding the language uses for negative operands.
Interval divConst(Interval a, int64_t c) {
  auto floorDiv = [&](int64_t v) { return infinite(v) ? v : (v >= 0 ? v / c : -((-v + c - 1) / c)); };
  auto truncDiv = [&](int64_t v) { return infinite(v) ? v : v / c; };
  return {floorDiv(a.lo), truncDiv(a.hi)};
}
Interval modConst(Interval a, int64_t c) {
  if (a.lo >= 0 && a.finite()) {
    if (a.hi - a.lo < c && a.lo % c <= a.hi % c) return {a.lo % c, a.hi % c};
    return {0, c - 1};
  }
  return {-(c - 1), c - 1};
}

// A scalar i32 value: its interval and, where known, where it lies relative to a step input
// (`pos0 + b * 16` is input pos0 plus [16 b, 16 b]), which every task of a step sees alike, so
// that boxes starting there are compared by their offsets (ir::RelativeRange).
struct Value {
  Interval v = kTop;
  int input = -1;  // a step input, or -1
  Interval rel;    // the value minus the input's, where input >= 0
  Value() = default;
  Value(Interval i) : v(i) {}
  static Value relative(int input, Interval v, Interval rel) {
    Value x(v);
    if (rel.finite()) x.input = input, x.rel = rel;
    return x;
  }
  bool operator==(const Value&) const = default;
};

Value join(const Value& a, const Value& b) {
  if (a.input >= 0 && a.input == b.input) return Value::relative(a.input, hull(a.v, b.v), hull(a.rel, b.rel));
  return hull(a.v, b.v);
}

class Analyzer {
 public:
  Analyzer(const Graph& g, const Node& n, const std::vector<int64_t>& index)
      : graph_(g), node_(n), func_(*n.func), index_(index), env_(func_.locals.size(), Value(kTop)) {}

  TaskAccess run() {
    exec(func_.body);
    TaskAccess out;
    int64_t zeroBytes = 0;
    bool zeroUnknown = false;
    // Bytes moved: the tiles actually loaded and stored, counted per loop trip, where every
    // enclosing trip count is known; otherwise the whole box. A lookup at a run-time index (an
    // embedding row, a cache position) moves its tile, not the region it might touch.
    for (auto* side : {&reads_, &writes_})
      for (auto& [tensor, boxes] : *side) {
        std::sort(boxes.begin(), boxes.end(), [](const Region& a, const Region& b) { return a.ranges < b.ranges; });
        int64_t elements = 0;
        for (const Region& box : boxes) elements += box.elements();
        const auto& traffic = side == &reads_ ? readTraffic_ : writeTraffic_;
        const auto t = traffic.find(tensor);
        if (t != traffic.end() && t->second.elements >= 0) elements = std::min(elements, t->second.elements);
        else if (t != traffic.end()) out.bytesExact = false;
        out.bytes += elements * dtypeBytes(graph_.tensors[tensor].dtype);
        if (t == traffic.end() || t->second.atZero < 0) zeroUnknown = true;
        else zeroBytes += std::min(elements, t->second.atZero) * dtypeBytes(graph_.tensors[tensor].dtype);
        auto& regions = side == &reads_ ? out.reads : out.writes;
        regions.insert(regions.end(), boxes.begin(), boxes.end());
      }
    out.bytesAtZero = zeroUnknown ? -1 : zeroBytes;
    out.flops = flops_;
    return out;
  }

 private:
  bool isScalarInt(const Expr& e) const {
    return e.shape.empty() && (e.dtype == DType::I32 || e.dtype == DType::Bool);
  }

  // Evaluates `e`, recording every Load in it (also those whose value is not an i32 scalar).
  Value eval(const Expr& e) {
    std::vector<Value> ops;
    ops.reserve(e.operands.size());
    for (const auto& op : e.operands) ops.push_back(op ? eval(*op) : Value(kTop));
    if (e.kind == ExprKind::Load || e.kind == ExprKind::Slice) {
      std::vector<Value> starts;
      for (const auto& d : e.region) starts.push_back(d.start ? eval(*d.start) : kTop);
      if (e.kind == ExprKind::Load) access(e.index, e.region, starts, false);
    }
    if (e.kind == ExprKind::Dot || e.kind == ExprKind::RowDot || e.kind == ExprKind::ColDot) {
      int64_t elements = 1;
      if (!e.operands.empty() && e.operands[0])
        for (int64_t d : e.operands[0]->shape) elements *= d;
      flops_ += 2 * elements * trips_;
    }
    // A matrix product a[M, K] b: 2 M K N, N being the result's last dimension.
    if ((e.kind == ExprKind::Mma || e.kind == ExprKind::MmaNt) && !e.operands.empty() && e.operands[0] && e.shape.size() == 2) {
      int64_t elements = e.shape[1];
      for (int64_t d : e.operands[0]->shape) elements *= d;
      flops_ += 2 * elements * trips_;
    }
    // A scalar parameter bound to a 0-d tensor reads that tensor: a dependency like any other.
    if (e.kind == ExprKind::Scalar && e.index >= 0 && e.index < static_cast<int>(node_.scalars.size()) &&
        node_.scalars[e.index].kind == ScalarArg::Tensor)
      readWhole(node_.scalars[e.index].index);
    if (!isScalarInt(e)) return kTop;
    auto value = [&](size_t i) { return i < ops.size() ? ops[i] : Value(kTop); };
    auto at = [&](size_t i) { return value(i).v; };
    switch (e.kind) {
      case ExprKind::Const: return Interval::point(static_cast<int64_t>(e.value));
      case ExprKind::TaskIndex:
        return e.index >= 0 && e.index < static_cast<int>(index_.size())
                   ? Interval::point(index_[e.index])
                   : kTop;
      case ExprKind::Local:
        return e.index >= 0 && e.index < static_cast<int>(env_.size()) ? env_[e.index] : Value(kTop);
      case ExprKind::Scalar:  // a runtime value such as pos: a step input's is known relative to itself
        if (e.index >= 0 && e.index < static_cast<int>(node_.scalars.size()) &&
            node_.scalars[e.index].kind == ScalarArg::Input)
          return Value::relative(node_.scalars[e.index].index, kTop, Interval::point(0));
        return kTop;
      case ExprKind::Cast:
        if (!e.operands.empty() && e.operands[0] && isScalarInt(*e.operands[0])) return value(0);
        return kTop;
      case ExprKind::Select: return join(value(1), value(2));
      case ExprKind::Unary:
        if (e.unary == UnaryOp::Neg) return neg(at(0));
        if (e.unary == UnaryOp::Abs) {
          Interval a = at(0);
          if (a.lo >= 0) return a;
          if (a.hi <= 0) return neg(a);
          return Interval{0, std::max(neg(a).hi, a.hi)};
        }
        if (e.unary == UnaryOp::Not) return Interval{0, 1};
        return kTop;
      case ExprKind::Binary: {
        const Value a = value(0), b = value(1);
        // An input plus or minus an offset stays relative to it.
        if (e.binary == BinaryOp::Add && (a.input >= 0) != (b.input >= 0)) {
          const Value& x = a.input >= 0 ? a : b;
          const Interval y = a.input >= 0 ? b.v : a.v;
          return Value::relative(x.input, add(a.v, b.v), add(x.rel, y));
        }
        if (e.binary == BinaryOp::Sub && a.input >= 0 && b.input < 0)
          return Value::relative(a.input, add(a.v, neg(b.v)), add(a.rel, neg(b.v)));
        return binary(e.binary, a.v, b.v);
      }
      default: return kTop;
    }
  }

  static Interval decided(bool alwaysTrue, bool alwaysFalse) {
    return alwaysTrue ? Interval::point(1) : alwaysFalse ? Interval::point(0) : Interval{0, 1};
  }

  Interval binary(BinaryOp op, Interval a, Interval b) {
    switch (op) {
      case BinaryOp::Add: return add(a, b);
      case BinaryOp::Sub: return add(a, neg(b));
      case BinaryOp::Mul: return mul(a, b);
      case BinaryOp::Div: return b.exact() && b.lo > 0 ? divConst(a, b.lo) : kTop;
      case BinaryOp::Mod: return b.exact() && b.lo > 0 ? modConst(a, b.lo) : kTop;
      case BinaryOp::Min: return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
      case BinaryOp::Max: return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
      // Comparisons and logic decide when the operands' intervals do (a task-index test, say),
      // so branches a task never takes add nothing to its regions.
      case BinaryOp::Lt: return decided(a.hi < b.lo, a.lo >= b.hi);
      case BinaryOp::Le: return decided(a.hi <= b.lo, a.lo > b.hi);
      case BinaryOp::Gt: return decided(b.hi < a.lo, b.lo >= a.hi);
      case BinaryOp::Ge: return decided(b.hi <= a.lo, b.lo > a.hi);
      case BinaryOp::Eq: return decided(a.exact() && b.exact() && a.lo == b.lo, a.hi < b.lo || b.hi < a.lo);
      case BinaryOp::Ne: return decided(a.hi < b.lo || b.hi < a.lo, a.exact() && b.exact() && a.lo == b.lo);
      case BinaryOp::And: return decided(a.lo == 1 && b.lo == 1, a.hi == 0 || b.hi == 0);
      case BinaryOp::Or: return decided(a.lo == 1 || b.lo == 1, a.hi == 0 && b.hi == 0);
      default: return kTop;
    }
  }

  // Adds to the task's boxes of the tensor bound to `param` the box [min start, max start +
  // max(len, 1)) per dimension, clamped to the tensor's extent. Dimensions the region omits are
  // taken whole.
  void access(int param, const std::vector<RegionDim>& region, const std::vector<Value>& starts,
              bool write) {
    if (param < 0 || param >= static_cast<int>(node_.tensors.size())) return;
    int tensor = node_.tensors[param];
    if (tensor < 0 || tensor >= static_cast<int>(graph_.tensors.size())) return;
    const Shape& shape = graph_.tensors[tensor].shape;
    Region box{tensor, {}, {}};
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t lo = 0, hi = shape[d];
      RelativeRange rel;
      if (d < region.size()) {
        Interval s = starts[d].v;
        const int64_t length = std::max<int64_t>(region[d].length, 1);
        lo = std::max<int64_t>(lo, s.lo);
        hi = std::min<int64_t>(hi, addEnd(s.hi, length));
        if (starts[d].input >= 0) rel = {starts[d].input, starts[d].rel.lo, starts[d].rel.hi + length};
      }
      if (lo >= hi) return;  // provably out of bounds (or dead code): touches nothing
      box.ranges.push_back({lo, hi});
      if (rel.input >= 0) {
        box.relative.resize(shape.size());
        box.relative[d] = rel;
      }
    }
    int64_t tile = 1;
    for (size_t d = 0; d < region.size(); ++d) tile *= std::max<int64_t>(region[d].length, 1);
    auto& traffic = write ? writeTraffic_ : readTraffic_;
    Traffic& t = traffic[tensor];
    // -1 marks a tensor touched inside a loop of unknown length: fall back to its box.
    if (!tripsKnown_ || t.elements < 0) t.elements = -1;
    else t.elements = saturate(__int128(t.elements) + __int128(tile) * trips_);
    if (tripsAtZero_ < 0 || t.atZero < 0) t.atZero = -1;
    else t.atZero = saturate(__int128(t.atZero) + __int128(tile) * tripsAtZero_);
    addBox((write ? writes_ : reads_)[tensor], std::move(box));
  }

  // Adds `box` to a tensor's boxes. Disjoint boxes stay apart, so that tasks writing interleaved
  // parts of one tensor (the two RoPE halves of a head) do not seem to overlap; a box that
  // overlaps or abuts another merges with it into their hull, and past kMaxBoxes all fold into one.
  static void addBox(std::vector<Region>& boxes, Region box) {
    for (;;) {
      auto joins = std::find_if(boxes.begin(), boxes.end(), [&](const Region& b) { return touches(b, box); });
      if (joins == boxes.end()) break;
      box = hullOf(*joins, box);
      boxes.erase(joins);
    }
    boxes.push_back(std::move(box));
    if (boxes.size() > kMaxBoxes) {
      Region all = boxes[0];
      for (const Region& b : boxes) all = hullOf(all, b);
      boxes.assign(1, std::move(all));
    }
  }
  static constexpr size_t kMaxBoxes = 4;

  // Whether the boxes overlap or share a face (their hull then adds nothing in one dimension).
  static bool touches(const Region& a, const Region& b) {
    int abutting = 0;          // dimensions in which they only share an end
    bool otherwiseEqual = true;  // whether the other dimensions are the same range
    for (size_t d = 0; d < a.ranges.size(); ++d) {
      const auto [alo, ahi] = a.ranges[d];
      const auto [blo, bhi] = b.ranges[d];
      if (ahi < blo || bhi < alo) return false;  // a gap
      if (ahi == blo || bhi == alo) ++abutting;
      else if (a.ranges[d] != b.ranges[d]) otherwiseEqual = false;
    }
    // Overlapping in every dimension, or sharing one face exactly (the hull adds nothing).
    return abutting == 0 || (abutting == 1 && otherwiseEqual);
  }

  // Relative ranges survive where both boxes have one from the same input.
  static Region hullOf(const Region& a, const Region& b) {
    Region h = a;
    for (size_t d = 0; d < h.ranges.size(); ++d) {
      h.ranges[d].first = std::min(h.ranges[d].first, b.ranges[d].first);
      h.ranges[d].second = std::max(h.ranges[d].second, b.ranges[d].second);
    }
    h.relative.clear();
    for (size_t d = 0; d < std::min(a.relative.size(), b.relative.size()); ++d) {
      const RelativeRange &x = a.relative[d], &y = b.relative[d];
      if (x.input < 0 || x.input != y.input) continue;
      h.relative.resize(h.ranges.size());
      h.relative[d] = {x.input, std::min(x.lo, y.lo), std::max(x.hi, y.hi)};
    }
    return h;
  }

  void readWhole(int tensor) {
    if (tensor < 0 || tensor >= static_cast<int>(graph_.tensors.size())) return;
    Region box{tensor, {}, {}};
    for (int64_t d : graph_.tensors[tensor].shape) box.ranges.push_back({0, d});
    addBox(reads_[tensor], std::move(box));
    readTraffic_.try_emplace(tensor, Traffic{1, 1});
  }

  void set(int slot, Value v, bool merge) {
    if (slot < 0 || slot >= static_cast<int>(env_.size())) return;
    env_[slot] = merge ? join(env_[slot], v) : v;
  }

  void exec(const Block& block) {
    for (const auto& s : block)
      if (s) exec(*s);
  }

  void exec(const Stmt& s) {
    switch (s.kind) {
      case StmtKind::Let: set(s.slot, s.value ? eval(*s.value) : Value(kTop), false); break;
      case StmtKind::Assign: {
        Value v = s.value ? eval(*s.value) : Value(kTop);  // `=` keeps a value relative to an input
        Interval old = s.slot >= 0 && s.slot < static_cast<int>(env_.size()) ? env_[s.slot].v : kTop;
        switch (s.assign) {
          case AssignOp::Set: break;
          case AssignOp::Add: v = add(old, v.v); break;
          case AssignOp::Sub: v = add(old, neg(v.v)); break;
          case AssignOp::Mul: v = mul(old, v.v); break;
          case AssignOp::Div: v = binary(BinaryOp::Div, old, v.v); break;
        }
        // Merge with the old value: the assignment may sit in a branch or a loop.
        set(s.slot, v, true);
        break;
      }
      case StmtKind::Store: {
        if (s.value) eval(*s.value);
        std::vector<Value> starts;
        for (const auto& d : s.region) starts.push_back(d.start ? eval(*d.start) : Value(kTop));
        access(s.tensor, s.region, starts, true);
        break;
      }
      case StmtKind::If: {
        Interval cond = s.value ? eval(*s.value).v : Interval{0, 1};
        if (cond == Interval::point(1)) {
          exec(s.body);
          break;
        }
        if (cond == Interval::point(0)) {
          exec(s.otherwise);
          break;
        }
        // Either branch may run: regions join, costs take the larger branch.
        std::vector<Value> entry = env_;
        int64_t f0 = flops_;
        auto r0 = readTraffic_, w0 = writeTraffic_;
        exec(s.body);
        std::vector<Value> then = std::move(env_);
        int64_t fThen = flops_ - f0;
        auto rThen = std::move(readTraffic_), wThen = std::move(writeTraffic_);
        env_ = std::move(entry);
        flops_ = f0;
        readTraffic_ = std::move(r0);
        writeTraffic_ = std::move(w0);
        exec(s.otherwise);
        for (size_t i = 0; i < env_.size(); ++i) env_[i] = join(env_[i], then[i]);
        flops_ = f0 + std::max(fThen, flops_ - f0);
        auto larger = [](std::map<int, Traffic>& into, const std::map<int, Traffic>& other) {
          auto most = [](int64_t a, int64_t b) { return a < 0 || b < 0 ? -1 : std::max(a, b); };
          for (auto [tensor, n] : other) {
            auto [it, fresh] = into.try_emplace(tensor, n);
            if (!fresh) it->second = {most(it->second.elements, n.elements), most(it->second.atZero, n.atZero)};
          }
        };
        larger(readTraffic_, rThen);
        larger(writeTraffic_, wThen);
        break;
      }
      case StmtKind::For: execFor(s); break;
    }
  }

  // The loop variable ranges over [lo.min, hi.max - 1]. The body runs abstractly from the join
  // of the loop's entry state and the state after the previous pass until that join is stable;
  // from the second pass on, a local that still changes is widened to unknown, so this ends after
  // at most (locals + 2) passes. Flops count from the last (stable) pass only.
  void execFor(const Stmt& s) {
    const Value from = s.lo ? eval(*s.lo) : Value(kTop), to = s.hi ? eval(*s.hi) : Value(kTop);
    const Interval lo = from.v, hi = to.v;
    Value var = s.step > 0 ? Value(Interval{lo.lo, infinite(hi.hi) ? kInf : hi.hi - 1}) : Value(kTop);
    if (s.step > 0 && from.input >= 0 && from.input == to.input)  // `for p in pos .. pos + 16`
      var = Value::relative(from.input, var.v, {from.rel.lo, addEnd(to.rel.hi, -1)});
    int64_t trips = 1;  // the most iterations, where the bounds are known
    if (s.step > 0 && !infinite(lo.lo) && !infinite(hi.hi))
      trips = std::max<int64_t>(0, (hi.hi - lo.lo + s.step - 1) / s.step);
    // With the step inputs at zero a bound relative to one is its offset.
    auto atZero = [](const Value& x) -> std::optional<int64_t> {
      if (x.input >= 0 && x.rel.exact()) return x.rel.lo;
      if (x.input < 0 && x.v.exact()) return x.v.lo;
      return std::nullopt;
    };
    const std::optional<int64_t> lo0 = atZero(from), hi0 = atZero(to);
    int64_t savedTrips = trips_, f0 = flops_, savedTripsAtZero = tripsAtZero_;
    bool savedKnown = tripsKnown_;
    auto r0 = readTraffic_, w0 = writeTraffic_;
    trips_ = trips_ * std::max<int64_t>(trips, 1);
    tripsKnown_ = tripsKnown_ && s.step > 0 && !infinite(lo.lo) && !infinite(hi.hi);
    if (tripsAtZero_ >= 0 && s.step > 0 && lo0 && hi0)
      tripsAtZero_ = saturate(__int128(tripsAtZero_) * std::max<int64_t>(0, (*hi0 - *lo0 + s.step - 1) / s.step));
    else
      tripsAtZero_ = -1;
    std::vector<Value> in = env_;  // the state at the top of the body
    for (int pass = 0;; ++pass) {
      env_ = in;
      flops_ = f0;
      readTraffic_ = r0;
      writeTraffic_ = w0;
      set(s.slot, var, false);
      exec(s.body);
      bool changed = false;
      for (size_t i = 0; i < in.size(); ++i) {
        if (static_cast<int>(i) == s.slot) continue;
        Value joined = join(in[i], env_[i]);
        if (joined != in[i]) {
          in[i] = pass == 0 ? joined : Value(kTop);
          changed = true;
        }
      }
      if (!changed) break;
    }
    trips_ = savedTrips;
    tripsKnown_ = savedKnown;
    tripsAtZero_ = savedTripsAtZero;
    if (trips == 0) flops_ = f0;
    // `in` covers zero iterations (the entry state) and every later one.
    bool hasSlot = s.slot >= 0 && s.slot < static_cast<int>(env_.size());
    Value v = hasSlot ? env_[s.slot] : Value(kTop);
    env_ = std::move(in);
    if (hasSlot) env_[s.slot] = v;
  }

  const Graph& graph_;
  const Node& node_;
  const TileFunc& func_;
  const std::vector<int64_t>& index_;
  std::vector<Value> env_;          // per local slot (unknown for non-i32 locals)
  std::map<int, std::vector<Region>> reads_, writes_;  // tensor -> disjoint boxes (addBox)
  int64_t flops_ = 0;
  int64_t trips_ = 1;               // product of the enclosing loops' trip counts
  bool tripsKnown_ = true;          // whether every enclosing loop's trip count is known
  int64_t tripsAtZero_ = 1;  // the same product with the step inputs at zero; -1: unknown
  // Elements a tensor moves (tiles x trips), and the same with the step inputs at zero; -1: unknown.
  struct Traffic {
    int64_t elements = 0, atZero = 0;
  };
  std::map<int, Traffic> readTraffic_, writeTraffic_;  // per tensor
};

void largestLoad(const Expr& e, const TileFunc& f, int64_t& best) {
  if (e.kind == ExprKind::Load) {
    int64_t n = 1;
    for (int64_t d : e.shape) n *= d;
    DType t = e.index >= 0 && e.index < static_cast<int>(f.params.size()) ? f.params[e.index].dtype
                                                                          : e.dtype;
    best = std::max(best, n * static_cast<int64_t>(dtypeBytes(t)));
  }
  for (const auto& op : e.operands)
    if (op) largestLoad(*op, f, best);
  for (const auto& d : e.region)
    if (d.start) largestLoad(*d.start, f, best);
}

void largestLoad(const Block& b, const TileFunc& f, int64_t& best) {
  for (const auto& s : b) {
    if (!s) continue;
    for (const Expr* e : {s->value.get(), s->lo.get(), s->hi.get()})
      if (e) largestLoad(*e, f, best);
    for (const auto& d : s->region)
      if (d.start) largestLoad(*d.start, f, best);
    largestLoad(s->body, f, best);
    largestLoad(s->otherwise, f, best);
  }
}

}  // namespace

TaskAccess analyzeTask(const Graph& graph, const Node& node, const std::vector<int64_t>& index) {
  if (!node.func) return {};
  return Analyzer(graph, node, index).run();
}

int64_t largestLoadBytes(const TileFunc& func) {
  int64_t best = 0;
  largestLoad(func.body, func, best);
  return best;
}

}  // namespace mk::lowering
