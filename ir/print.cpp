// Text and JSON forms of the graph and megakernel IR. See ir/print.h; the schedule grammar that
// printSchedule writes and parseSchedule reads is documented in ir/parse_ir.h.
#include "ir/print.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>

#include "abi/json.h"
#include "ir/builtins.h"

namespace mk::ir {

// ---- shared helpers ---------------------------------------------------------------------------

std::string quoteName(std::string_view s) {
  bool ident = !s.empty() && (std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_');
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') ident = false;
  // Words that start a line of the schedule text are quoted so a name never reads as one.
  static const char* kReserved[] = {"program", "config", "target", "tensors", "inputs", "outputs", "funcs",
                                    "nodes",   "memory", "counters", "queues", "order", "sm", "task",
                                    "unqueued", "inf", "nan", "none"};
  if (ident)
    for (const char* r : kReserved)
      if (s == r) ident = false;
  if (ident) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string formatDouble(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

std::string formatType(DType dtype, const Shape& shape) { return dtypeName(dtype) + abi::shapeString(shape); }

std::string formatIdRanges(const std::vector<int>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!s.empty()) s += ", ";
    s += std::to_string(ids[i]);
    if (j > i) s += "-" + std::to_string(ids[j]);
    i = j + 1;
  }
  return s;
}

namespace {

std::string joinInts(const std::vector<int64_t>& v, const char* sep = ", ") {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

std::string counterList(const std::vector<int>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? "," : "") + std::string("c") + std::to_string(ids[i]);
  return s;
}

const char* tensorKindName(Tensor::Kind k) {
  switch (k) {
    case Tensor::Weight: return "weight";
    case Tensor::State: return "state";
    case Tensor::Activation: return "activation";
    case Tensor::Input: return "input";
  }
  return "?";
}

const char* paramKindName(const Param& p) {
  switch (p.kind) {
    case Param::Tensor: return p.inout ? "inout" : "tensor";
    case Param::Scalar: return "scalar";
    case Param::Result: return "result";
  }
  return "?";
}

// Lookups by id that tolerate ids that do not match positions.
struct Index {
  std::unordered_map<int, const Tensor*> tensors;
  std::unordered_map<int, const Node*> nodes;
  std::unordered_map<int, const Task*> tasks;
  explicit Index(const Graph& g) {
    for (const Tensor& t : g.tensors) tensors.emplace(t.id, &t);
    for (const Node& n : g.nodes) nodes.emplace(n.id, &n);
  }
  Index(const Megakernel& m) : Index(m.graph) {
    for (const Task& t : m.tasks) tasks.emplace(t.id, &t);
  }
  std::string tensorName(int id) const {
    auto it = tensors.find(id);
    return it == tensors.end() ? "t" + std::to_string(id) + "?" : it->second->name;
  }
  std::string opOf(int node) const {
    auto it = nodes.find(node);
    if (it == nodes.end()) return "?";
    return it->second->func ? it->second->func->opName : "none";
  }
};

// `op#node[i, j]`
std::string taskLabel(const Index& ix, const Task& t) {
  return ix.opOf(t.node) + "#" + std::to_string(t.node) + "[" + joinInts(t.index) + "]";
}

// `name[lo..hi, lo..hi]`, the tensor named by `name(tensor id)`.
template <typename NameFn>
std::string formatRegions(const std::vector<Region>& regions, NameFn name) {
  std::string s;
  for (size_t i = 0; i < regions.size(); ++i) {
    const Region& r = regions[i];
    if (i) s += ", ";
    s += name(r.tensor) + "[";
    for (size_t d = 0; d < r.ranges.size(); ++d) {
      s += (d ? ", " : "") + std::to_string(r.ranges[d].first) + ".." + std::to_string(r.ranges[d].second);
      if (d < r.relative.size() && r.relative[d].input >= 0)
        s += " at input " + std::to_string(r.relative[d].input) + " + " + std::to_string(r.relative[d].lo) + ".." +
             std::to_string(r.relative[d].hi);
    }
    s += "]";
  }
  return s;
}

// ---- tile function bodies ---------------------------------------------------------------------

class FuncPrinter {
 public:
  explicit FuncPrinter(const TileFunc& f) : f_(f) {
    std::map<std::string, int> uses;
    for (const Local& l : f.locals) uses[l.name]++;
    for (size_t i = 0; i < f.locals.size(); ++i) {
      const std::string& n = f.locals[i].name;
      if (n.empty()) names_.push_back("%" + std::to_string(i));
      else if (uses[n] > 1) names_.push_back(n + "." + std::to_string(i));
      else names_.push_back(n);
    }
  }

  std::string local(int slot) const {
    if (slot >= 0 && static_cast<size_t>(slot) < names_.size()) return names_[slot];
    return "%" + std::to_string(slot) + "?";
  }
  std::string param(int i) const {
    if (i >= 0 && static_cast<size_t>(i) < f_.params.size()) return f_.params[i].name;
    return "param" + std::to_string(i) + "?";
  }

  static int prec(const Expr& e) {
    if (e.kind == ExprKind::Unary && (e.unary == UnaryOp::Neg || e.unary == UnaryOp::Not)) return 6;
    if (e.kind != ExprKind::Binary) return 10;
    switch (e.binary) {
      case BinaryOp::Or: return 1;
      case BinaryOp::And: return 2;
      case BinaryOp::Lt: case BinaryOp::Le: case BinaryOp::Gt: case BinaryOp::Ge:
      case BinaryOp::Eq: case BinaryOp::Ne: return 3;
      case BinaryOp::Add: case BinaryOp::Sub: return 4;
      case BinaryOp::Mul: case BinaryOp::Div: case BinaryOp::Mod: return 5;
      default: return 10;  // min, max, pow: functional
    }
  }
  static const char* infix(BinaryOp op) {
    switch (op) {
      case BinaryOp::Add: return "+";
      case BinaryOp::Sub: return "-";
      case BinaryOp::Mul: return "*";
      case BinaryOp::Div: return "/";
      case BinaryOp::Mod: return "%";
      case BinaryOp::Lt: return "<";
      case BinaryOp::Le: return "<=";
      case BinaryOp::Gt: return ">";
      case BinaryOp::Ge: return ">=";
      case BinaryOp::Eq: return "==";
      case BinaryOp::Ne: return "!=";
      case BinaryOp::And: return "&&";
      case BinaryOp::Or: return "||";
      default: return nullptr;
    }
  }

  std::string operand(const Expr& e, size_t i) const {
    return i < e.operands.size() && e.operands[i] ? expr(*e.operands[i]) : "<null>";
  }
  std::string operandPrec(const Expr& e, size_t i, int need) const {
    if (i >= e.operands.size() || !e.operands[i]) return "<null>";
    std::string s = expr(*e.operands[i]);
    return prec(*e.operands[i]) < need ? "(" + s + ")" : s;
  }
  std::string call(const char* name, const Expr& e) const {
    std::string s = std::string(name ? name : "?") + "(";
    for (size_t i = 0; i < e.operands.size(); ++i) s += (i ? ", " : "") + operand(e, i);
    return s + ")";
  }
  std::string region(const std::vector<RegionDim>& dims) const {
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i) {
      if (i) s += ", ";
      s += dims[i].start ? expr(*dims[i].start) : "<null>";
      if (dims[i].length) s += " : +" + std::to_string(dims[i].length);
    }
    return s + "]";
  }

  std::string constant(const Expr& e) const {
    if (e.dtype == DType::Bool) return e.value != 0 ? "true" : "false";
    if (e.dtype == DType::I32) {
      if (std::isfinite(e.value) && e.value == std::trunc(e.value)) return std::to_string(static_cast<int64_t>(e.value));
      return "i32(" + formatDouble(e.value) + ")";
    }
    std::string s = formatDouble(e.value);
    if (std::isfinite(e.value) && s.find_first_of(".e") == std::string::npos) s += ".0";
    if (e.dtype != DType::F32) return std::string(dtypeName(e.dtype)) + "(" + s + ")";
    return s;
  }

  std::string expr(const Expr& e) const {
    switch (e.kind) {
      case ExprKind::Const: return constant(e);
      case ExprKind::Local: return local(e.index);
      case ExprKind::TaskIndex:
        if (e.index >= 0 && static_cast<size_t>(e.index) < f_.taskVars.size() && !f_.taskVars[e.index].empty())
          return f_.taskVars[e.index];
        return "task[" + std::to_string(e.index) + "]";
      case ExprKind::Scalar: return param(e.index);
      case ExprKind::Load: return "load " + param(e.index) + region(e.region);
      case ExprKind::Slice: return operandPrec(e, 0, 10) + region(e.region);
      case ExprKind::Unary:
        if (e.unary == UnaryOp::Neg) return "-" + operandPrec(e, 0, 6);
        if (e.unary == UnaryOp::Not) return "!" + operandPrec(e, 0, 6);
        return call(builtinName(e), e);
      case ExprKind::Binary: {
        const char* op = infix(e.binary);
        if (!op) return call(builtinName(e), e);
        int p = prec(e);
        return operandPrec(e, 0, p) + " " + op + " " + operandPrec(e, 1, p + 1);
      }
      case ExprKind::Select: return call(builtinName(e), e);
      case ExprKind::Cast: return "cast<" + std::string(dtypeName(e.dtype)) + ">(" + operand(e, 0) + ")";
      case ExprKind::Reduce:
      case ExprKind::RowReduce:
      case ExprKind::Dot:
      case ExprKind::RowDot:
      case ExprKind::ColDot:
      case ExprKind::Mma:
      case ExprKind::MmaNt:
      case ExprKind::Concat: return call(builtinName(e), e);
      case ExprKind::Iota:  // its length is its shape
        return std::string(builtinName(e)) + "(" + std::to_string(e.shape.empty() ? 0 : e.shape[0]) + ")";
      case ExprKind::RepeatRows:  // the count is the shape's
      case ExprKind::RepeatCols:
        return std::string(builtinName(e)) + "(" + operand(e, 0) + ", " +
               std::to_string(e.shape.size() == 2 ? e.shape[e.kind == ExprKind::RepeatRows ? 0 : 1] : 0) + ")";
    }
    return "?";
  }

  static const char* assignOp(AssignOp op) {
    switch (op) {
      case AssignOp::Set: return "=";
      case AssignOp::Add: return "+=";
      case AssignOp::Sub: return "-=";
      case AssignOp::Mul: return "*=";
      case AssignOp::Div: return "/=";
    }
    return "=";
  }

  std::string value(const ExprPtr& e) const { return e ? expr(*e) : "<null>"; }

  void block(std::string& out, const Block& b, int depth) const {
    for (const StmtPtr& s : b)
      if (s) stmt(out, *s, depth);
  }

  void stmt(std::string& out, const Stmt& s, int depth) const {
    std::string ind(2 * depth, ' ');
    switch (s.kind) {
      case StmtKind::Let: {
        std::string type = s.slot >= 0 && static_cast<size_t>(s.slot) < f_.locals.size()
                               ? formatType(f_.locals[s.slot].dtype, f_.locals[s.slot].shape)
                               : "?";
        out += ind + "let " + local(s.slot) + ": " + type + " = " + value(s.value) + "\n";
        break;
      }
      case StmtKind::Assign:
        out += ind + local(s.slot) + " " + assignOp(s.assign) + " " + value(s.value) + "\n";
        break;
      case StmtKind::Store: {
        out += ind + "store " + param(s.tensor) + region(s.region) + " = " + value(s.value);
        if (s.value) out += "  // " + formatType(s.value->dtype, s.value->shape);
        out += "\n";
        break;
      }
      case StmtKind::For:
        out += ind + "for " + local(s.slot) + " in " + value(s.lo) + " .. " + value(s.hi);
        if (s.step != 1) out += " step " + std::to_string(s.step);
        out += " {\n";
        block(out, s.body, depth + 1);
        out += ind + "}\n";
        break;
      case StmtKind::If:
        out += ind + "if " + value(s.value) + " {\n";
        block(out, s.body, depth + 1);
        if (!s.otherwise.empty()) {
          out += ind + "} else {\n";
          block(out, s.otherwise, depth + 1);
        }
        out += ind + "}\n";
        break;
    }
  }

  std::string signature() const {
    std::string ins, outs;
    for (const Param& p : f_.params) {
      std::string& dst = p.kind == Param::Result ? outs : ins;
      if (!dst.empty()) dst += ", ";
      if (p.inout) dst += "inout ";
      dst += p.name + ": " + formatType(p.dtype, p.shape);
    }
    std::string s = "func " + f_.name + "(" + ins + ")";
    if (!outs.empty()) s += " -> (" + outs + ")";
    s += " tasks [" + joinInts(f_.taskGrid) + "]";
    if (!f_.taskVars.empty()) {
      s += " as (";
      for (size_t i = 0; i < f_.taskVars.size(); ++i) s += (i ? ", " : "") + f_.taskVars[i];
      s += ")";
    }
    return s;
  }

 private:
  const TileFunc& f_;
  std::vector<std::string> names_;
};

// Scalar argument text for the graph printout.
std::string scalarArg(const Graph& g, const Index& ix, const ScalarArg& a) {
  switch (a.kind) {
    case ScalarArg::Input:
      if (a.index >= 0 && static_cast<size_t>(a.index) < g.inputs.size()) return "input " + g.inputs[a.index].name;
      return "input #" + std::to_string(a.index);
    case ScalarArg::Const: return formatDouble(a.value);
    case ScalarArg::Tensor: return "scalar " + ix.tensorName(a.index);
  }
  return "?";
}

}  // namespace

std::string printExpr(const TileFunc& func, const Expr& expr) { return FuncPrinter(func).expr(expr); }

std::string printTileFunc(const TileFunc& func) {
  FuncPrinter p(func);
  if (func.body.empty()) return p.signature() + " {}\n";
  std::string out = p.signature() + " {\n";
  p.block(out, func.body, 1);
  return out + "}\n";
}

// ---- graph ------------------------------------------------------------------------------------

std::string printGraph(const Graph& g) {
  Index ix(g);
  std::string out = "graph " + quoteName(g.program) + " config " + quoteName(g.config) + "\n";
  out += "\ntensors  // " + std::to_string(g.tensors.size()) + "\n";
  for (const Tensor& t : g.tensors) {
    out += "  %t" + std::to_string(t.id) + " " + t.name + ": " + tensorKindName(t.kind) + " " +
           formatType(t.dtype, t.shape) + " " + t.layout.str();
    if (!t.sources.empty()) {
      out += " <- ";
      for (size_t i = 0; i < t.sources.size(); ++i) out += (i ? ", " : "") + quoteName(t.sources[i]);
    }
    out += "\n";
  }
  out += "\ninputs\n";
  for (const StepInput& in : g.inputs) {
    out += "  " + in.name + ": " + dtypeName(in.dtype);
    if (in.tensor >= 0) out += " -> " + ix.tensorName(in.tensor);
    out += "\n";
  }
  out += "outputs\n";
  for (const auto& [name, tensor] : g.outputs) out += "  " + name + " = " + ix.tensorName(tensor) + "\n";

  // Distinct tile functions in order of first use.
  std::vector<const TileFunc*> funcs;
  std::map<const TileFunc*, std::vector<int>> usedBy;
  out += "\nnodes  // " + std::to_string(g.nodes.size()) + "\n";
  for (const Node& n : g.nodes) {
    const TileFunc* f = n.func.get();
    if (f) {
      if (!usedBy.count(f)) funcs.push_back(f);
      usedBy[f].push_back(n.id);
    }
    if (n.gridSyncBefore) out += "  sync grid\n";
    std::string ins, outs;
    for (size_t i = 0; i < n.tensors.size(); ++i) {
      const Param* p = f && i < f->params.size() ? &f->params[i] : nullptr;
      std::string arg;
      if (n.tensors[i] >= 0) arg = ix.tensorName(n.tensors[i]);
      else if (i < n.scalars.size()) arg = scalarArg(g, ix, n.scalars[i]);
      else arg = "?";
      if (p) arg = p->name + ": " + arg;
      std::string& dst = p && p->kind == Param::Result ? outs : ins;
      dst += (dst.empty() ? "" : ", ") + arg;
    }
    out += "  %" + std::to_string(n.id) + " = " + (f ? f->name : std::string("<no func>")) + "(" + ins + ")";
    if (!outs.empty()) out += " -> (" + outs + ")";
    if (f) out += " tasks [" + joinInts(f->taskGrid) + "]";
    if (!n.after.empty()) {
      out += " @after(";
      for (size_t i = 0; i < n.after.size(); ++i) out += (i ? ", " : "") + ix.tensorName(n.after[i]);
      out += ")";
    }
    if (n.cluster != 1) out += " @cluster(" + std::to_string(n.cluster) + ")";
    out += "\n";
  }

  for (const TileFunc* f : funcs) {
    std::vector<int>& users = usedBy[f];
    out += "\n// used by ";
    std::string ids;
    for (size_t i = 0; i < users.size() && i < 16; ++i) ids += (i ? ", %" : "%") + std::to_string(users[i]);
    if (users.size() > 16) ids += ", ... (" + std::to_string(users.size()) + " nodes)";
    out += ids + "\n" + printTileFunc(*f);
  }
  return out;
}

// ---- tasks ------------------------------------------------------------------------------------

std::string printTasks(const Megakernel& m) {
  Index ix(m);
  auto name = [&](int t) { return ix.tensorName(t); };
  std::string out = "// " + std::to_string(m.tasks.size()) + " tasks\n";
  for (const Task& t : m.tasks) {
    out += "task " + std::to_string(t.id) + " " + taskLabel(ix, t);
    if (!t.reads.empty()) out += " reads " + formatRegions(t.reads, name);
    if (!t.writes.empty()) out += " writes " + formatRegions(t.writes, name);
    out += " bytes " + std::to_string(t.bytes) + " flops " + std::to_string(t.flops) + "\n";
  }
  return out;
}

// ---- schedule ---------------------------------------------------------------------------------

std::string printSchedule(const Megakernel& m) {
  const Graph& g = m.graph;
  Index ix(m);
  auto tref = [](int t) { return "t" + std::to_string(t); };
  std::string out;
  out += "// mkdsl schedule: " + std::to_string(m.tasks.size()) + " tasks, " + std::to_string(m.counters.size()) +
         " counters, " + std::to_string(m.queues.size()) + " queues\n";
  out += "program " + quoteName(g.program) + "\n";
  out += "config " + quoteName(g.config) + "\n";
  const TargetDesc& tg = m.target;
  out += "target " + quoteName(tg.name) + " arch " + quoteName(tg.arch) + " sms " + std::to_string(tg.sms) +
         " smem " + std::to_string(tg.smemPerBlock) + " warp " + std::to_string(tg.warpSize) + " threads " +
         std::to_string(tg.threadsPerBlock) + " bandwidth " + formatDouble(tg.memoryBandwidth) + "\n";

  out += "\ntensors\n";
  for (const Tensor& t : g.tensors) {
    out += "  t" + std::to_string(t.id) + " " + quoteName(t.name) + " " + tensorKindName(t.kind) + " " +
           formatType(t.dtype, t.shape) + " " + t.layout.str();
    if (!t.sources.empty()) {
      out += " sources ";
      for (size_t i = 0; i < t.sources.size(); ++i) out += (i ? ", " : "") + quoteName(t.sources[i]);
    }
    out += "\n";
  }
  out += "inputs\n";
  for (const StepInput& in : g.inputs) {
    out += "  " + quoteName(in.name) + " " + dtypeName(in.dtype);
    if (in.tensor >= 0) out += " " + tref(in.tensor);
    out += "\n";
  }
  out += "outputs\n";
  for (const auto& [name, tensor] : g.outputs) out += "  " + quoteName(name) + " " + tref(tensor) + "\n";

  // Funcs: every distinct TileFunc once, in order of first use; nodes refer to them as fN.
  std::map<const TileFunc*, int> funcIds;
  std::vector<const TileFunc*> funcs;
  for (const Node& n : g.nodes)
    if (n.func && !funcIds.count(n.func.get())) {
      funcIds[n.func.get()] = static_cast<int>(funcs.size());
      funcs.push_back(n.func.get());
    }
  out += "\nfuncs\n";
  for (size_t i = 0; i < funcs.size(); ++i) {
    const TileFunc& f = *funcs[i];
    out += "  f" + std::to_string(i) + " " + quoteName(f.name) + " op " + quoteName(f.opName) + " grid [" +
           joinInts(f.taskGrid) + "] as (";
    for (size_t v = 0; v < f.taskVars.size(); ++v) out += (v ? ", " : "") + quoteName(f.taskVars[v]);
    out += ") params (";
    for (size_t p = 0; p < f.params.size(); ++p) {
      const Param& pa = f.params[p];
      out += (p ? ", " : "") + quoteName(pa.name) + ": " + paramKindName(pa) + " " + formatType(pa.dtype, pa.shape);
    }
    out += ")\n";
  }
  out += "nodes\n";
  for (const Node& n : g.nodes) {
    out += "  n" + std::to_string(n.id) + " = ";
    if (n.func) out += "f" + std::to_string(funcIds[n.func.get()]) + " " + quoteName(n.func->opName);
    else out += "none";
    out += "(";
    for (size_t i = 0; i < n.tensors.size(); ++i) {
      if (i) out += ", ";
      if (n.tensors[i] >= 0) {
        out += tref(n.tensors[i]);
        continue;
      }
      ScalarArg a = i < n.scalars.size() ? n.scalars[i] : ScalarArg{};
      switch (a.kind) {
        case ScalarArg::Input: out += "input " + std::to_string(a.index); break;
        case ScalarArg::Const: out += "const " + formatDouble(a.value); break;
        case ScalarArg::Tensor: out += "scalar " + tref(a.index); break;
      }
    }
    out += ")";
    if (!n.after.empty()) {
      out += " after (";
      for (size_t i = 0; i < n.after.size(); ++i) out += (i ? ", " : "") + tref(n.after[i]);
      out += ")";
    }
    if (n.gridSyncBefore) out += " sync grid";
    if (n.cluster != 1) out += " cluster " + std::to_string(n.cluster);
    if (n.func) out += "  // " + std::to_string(n.func->taskCount()) + " tasks";
    out += "\n";
  }

  const MemoryPlan& mp = m.memory;
  out += "\nmemory weights " + std::to_string(mp.weightBytes) + " state " + std::to_string(mp.stateBytes) +
         " activations " + std::to_string(mp.activationBytes) + " smem_per_task " + std::to_string(mp.smemPerTask) +
         "\n";
  auto buffers = [&](const char* kind, const std::vector<Buffer>& bs) {
    for (const Buffer& b : bs)
      out += std::string("  ") + kind + " " + tref(b.tensor) + " at " + std::to_string(b.offset) + " size " +
             std::to_string(b.bytes) + "\n";
  };
  buffers("weight", mp.weights);
  buffers("state", mp.state);
  buffers("activation", mp.activations);

  out += "\ncounters\n";
  for (const Counter& c : m.counters) {
    out += "  c" + std::to_string(c.id) + " expects " + std::to_string(c.expected());
    if (!c.producers.empty()) out += " from tasks " + formatIdRanges(c.producers);
    if (!c.why.empty()) out += " why " + quoteName(c.why);
    out += "\n";
  }

  // Each task's fields are written once: at its first place in its own SM's queue, else at its
  // first place in any queue (with an explicit `sm`), else under `unqueued`. Other places in
  // queues name it only (`task 17`).
  std::set<int> defined;
  auto taskLine = [&](const Task& t, int queueSm) {
    std::string s = "    task " + std::to_string(t.id) + " " + taskLabel(ix, t);
    if (t.sm != queueSm) s += " sm " + std::to_string(t.sm);
    if (!t.waits.empty()) s += " wait " + counterList(t.waits);
    if (!t.signals.empty()) s += " signal " + counterList(t.signals);
    s += " bytes " + std::to_string(t.bytes) + " flops " + std::to_string(t.flops);
    if (!t.reads.empty()) s += " reads " + formatRegions(t.reads, tref);
    if (!t.writes.empty()) s += " writes " + formatRegions(t.writes, tref);
    return s + "\n";
  };
  std::map<int, int> firstQueueOf, firstOwnQueue;  // task -> the first queue holding it / its own SM's
  for (size_t q = 0; q < m.queues.size(); ++q)
    for (int id : m.queues[q]) {
      auto it = ix.tasks.find(id);
      if (it == ix.tasks.end()) continue;
      firstQueueOf.emplace(id, static_cast<int>(q));
      if (it->second->sm == static_cast<int>(q)) firstOwnQueue.emplace(id, static_cast<int>(q));
    }
  for (auto [id, q] : firstOwnQueue) firstQueueOf[id] = q;
  out += "\nqueues\n";
  for (size_t q = 0; q < m.queues.size(); ++q) {
    int64_t bytes = 0;
    for (int id : m.queues[q]) {
      auto it = ix.tasks.find(id);
      if (it != ix.tasks.end()) bytes += it->second->bytes;
    }
    out += "  sm " + std::to_string(q) + ":  // " + std::to_string(m.queues[q].size()) +
           (m.queues[q].size() == 1 ? " task, " : " tasks, ") +
           std::to_string(bytes) + " bytes\n";
    for (int id : m.queues[q]) {
      auto it = ix.tasks.find(id);
      if (it != ix.tasks.end() && !defined.count(id) && firstQueueOf[id] == static_cast<int>(q)) {
        defined.insert(id);
        out += taskLine(*it->second, static_cast<int>(q));
      } else {
        out += "    task " + std::to_string(id) + "\n";
      }
    }
  }
  bool anyUnqueued = false;
  for (const Task& t : m.tasks)
    if (!defined.count(t.id)) anyUnqueued = true;
  if (anyUnqueued) {
    out += "  unqueued:\n";
    for (const Task& t : m.tasks)
      if (!defined.count(t.id)) {
        defined.insert(t.id);
        out += taskLine(t, -1);
      }
  }
  // The global order, only where it is not ascending ids (the parser sorts by id otherwise).
  bool sorted = true;
  for (size_t i = 1; i < m.tasks.size(); ++i)
    if (m.tasks[i].id <= m.tasks[i - 1].id) sorted = false;
  if (!sorted) {
    out += "\norder";
    for (const Task& t : m.tasks) out += " " + std::to_string(t.id);
    out += "\n";
  }
  return out;
}

// ---- JSON -------------------------------------------------------------------------------------

// Compact JSON (abi/json.h's writer), one tensor, node, task, counter or queue per line.
namespace {
using abi::JsonValue;

JsonValue jsonNumber(double v) { return std::isfinite(v) ? abi::jsonNumberText(formatDouble(v)) : abi::jsonNull(); }

template <class Int>
JsonValue jsonInts(const std::vector<Int>& v) {
  JsonValue a = abi::jsonArray();
  for (Int x : v) a.items.push_back(abi::jsonInt(int64_t(x)));
  return a;
}
JsonValue jsonRegions(const std::vector<Region>& rs) {
  JsonValue a = abi::jsonArray();
  for (const Region& r : rs) {
    JsonValue ranges = abi::jsonArray();
    for (const auto& [lo, hi] : r.ranges) ranges.items.push_back(jsonInts(std::vector<int64_t>{lo, hi}));
    JsonValue box = abi::jsonObject({{"tensor", abi::jsonInt(r.tensor)}, {"ranges", std::move(ranges)}});
    if (!r.relative.empty()) {
      // Per dimension [input, lo, hi] (ir::RelativeRange), or null.
      JsonValue relative = abi::jsonArray();
      for (const RelativeRange& x : r.relative)
        relative.items.push_back(x.input >= 0 ? jsonInts(std::vector<int64_t>{x.input, x.lo, x.hi}) : abi::jsonNull());
      box.members.push_back({"relative", std::move(relative)});
    }
    a.items.push_back(std::move(box));
  }
  return a;
}
JsonValue jsonBuffers(const std::vector<Buffer>& bs) {
  JsonValue a = abi::jsonArray();
  for (const Buffer& b : bs)
    a.items.push_back(abi::jsonObject(
        {{"tensor", abi::jsonInt(b.tensor)}, {"offset", abi::jsonInt(b.offset)}, {"bytes", abi::jsonInt(b.bytes)}}));
  return a;
}
// `key` and one item per line: ",\n\"key\":[\n item,\n item]".
std::string jsonLines(const char* key, const std::vector<JsonValue>& items) {
  std::string s = ",\n" + abi::jsonQuote(key) + ":[";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ",\n " : "\n ") + abi::jsonText(items[i]);
  return s + "]";
}
}  // namespace

std::string scheduleJson(const Megakernel& m) {
  Index ix(m);
  const TargetDesc& tg = m.target;
  auto text = [](const JsonValue& v) { return abi::jsonText(v); };
  auto members = [&](std::vector<abi::JsonMember> ms) {  // an object's members without its braces
    const std::string t = text(abi::jsonObject(std::move(ms)));
    return t.substr(1, t.size() - 2);
  };
  std::string s = "{" + members({{"target", abi::jsonString(tg.name)},
                                 {"arch", abi::jsonString(tg.arch)},
                                 {"sms", abi::jsonInt(tg.sms)},
                                 {"smem", abi::jsonInt(tg.smemPerBlock)},
                                 {"warp", abi::jsonInt(tg.warpSize)},
                                 {"threads", abi::jsonInt(tg.threadsPerBlock)},
                                 {"bandwidth", jsonNumber(tg.memoryBandwidth)}});
  s += ",\n" + members({{"program", abi::jsonString(m.graph.program)}, {"config", abi::jsonString(m.graph.config)}});
  std::vector<JsonValue> lines;
  for (const Tensor& t : m.graph.tensors)
    lines.push_back(abi::jsonObject({{"id", abi::jsonInt(t.id)},
                                     {"name", abi::jsonString(t.name)},
                                     {"kind", abi::jsonString(tensorKindName(t.kind))},
                                     {"dtype", abi::jsonString(dtypeName(t.dtype))},
                                     {"shape", jsonInts(t.shape)},
                                     {"layout", abi::jsonString(t.layout.str())}}));
  s += jsonLines("tensors", lines);
  lines.clear();
  for (const Node& n : m.graph.nodes)
    lines.push_back(abi::jsonObject({{"id", abi::jsonInt(n.id)},
                                     {"func", abi::jsonString(n.func ? n.func->name : "")},
                                     {"op", abi::jsonString(n.func ? n.func->opName : "")},
                                     {"grid", jsonInts(n.func ? n.func->taskGrid : Shape{})},
                                     {"tensors", jsonInts(n.tensors)}}));
  s += jsonLines("nodes", lines);
  lines.clear();
  for (const Task& t : m.tasks)
    lines.push_back(abi::jsonObject({{"id", abi::jsonInt(t.id)},
                                     {"node", abi::jsonInt(t.node)},
                                     {"op", abi::jsonString(ix.opOf(t.node))},
                                     {"index", jsonInts(t.index)},
                                     {"sm", abi::jsonInt(t.sm)},
                                     {"bytes", abi::jsonInt(t.bytes)},
                                     {"flops", abi::jsonInt(t.flops)},
                                     {"reads", jsonRegions(t.reads)},
                                     {"writes", jsonRegions(t.writes)},
                                     {"waits", jsonInts(t.waits)},
                                     {"signals", jsonInts(t.signals)}}));
  s += jsonLines("tasks", lines);
  lines.clear();
  for (const Counter& c : m.counters)
    lines.push_back(abi::jsonObject({{"id", abi::jsonInt(c.id)},
                                     {"expected", abi::jsonInt(c.expected())},
                                     {"producers", jsonInts(c.producers)},
                                     {"why", abi::jsonString(c.why)}}));
  s += jsonLines("counters", lines);
  lines.clear();
  for (const auto& q : m.queues) lines.push_back(jsonInts(q));
  s += jsonLines("queues", lines);
  const MemoryPlan& mp = m.memory;
  s += ",\n\"memory\":{" + members({{"weightBytes", abi::jsonInt(mp.weightBytes)},
                                      {"stateBytes", abi::jsonInt(mp.stateBytes)},
                                      {"activationBytes", abi::jsonInt(mp.activationBytes)},
                                      {"smemPerTask", abi::jsonInt(mp.smemPerTask)}});
  s += ",\n " + members({{"weights", jsonBuffers(mp.weights)}}) + ",\n " + members({{"state", jsonBuffers(mp.state)}}) +
       ",\n " + members({{"activations", jsonBuffers(mp.activations)}}) + "}}\n";
  return s;
}

}  // namespace mk::ir
