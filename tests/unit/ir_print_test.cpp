// The IR printers (graph, tasks, schedule text and JSON), the schedule parser and the HTML view,
// on a small hand-built megakernel: two SMs, four tasks, two counters.
#include <doctest/doctest.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ir/html.h"
#include "ir/parse_ir.h"
#include "ir/print.h"
#include "support/diagnostics.h"
#include "support/source.h"
#include "ir_build.h"

using namespace mk;
using namespace mk::ir;
using namespace mk::ir::build;

namespace {

// matvec<N=8, K=4>: y[t*4 : +4] = W[t*4 : +4, :] x, with a K loop of one step.
std::shared_ptr<TileFunc> matvecFunc() {
  auto f = std::make_shared<TileFunc>();
  f->name = "matvec<N=8, K=4>";
  f->opName = "matvec";
  f->params = {inParam("w", {8, 4}, DType::BF16), inParam("x", {4}, DType::BF16), outParam("y", {8})};
  f->taskGrid = {2};
  f->taskVars = {"t"};
  f->locals = {{"acc", DType::F32, {4}}, {"k", DType::I32, {}}};
  f->body.push_back(let(0, constant(0, DType::F32)));
  auto dot = ops(ExprKind::RowDot, DType::F32, {4},
                 load(0, DType::BF16, dim(binary(BinaryOp::Mul, taskIndex(), constant(4)), 4), dim(local(1), 4)),
                 load(1, DType::BF16, dim(local(1), 4)));
  f->body.push_back(loop(1, constant(0), constant(4), 4, assign(0, AssignOp::Add, std::move(dot))));
  f->body.push_back(store(2, local(0, DType::F32, {4}), dim(binary(BinaryOp::Mul, taskIndex(), constant(4)), 4)));
  return f;
}

std::shared_ptr<TileFunc> scaleFunc() {
  auto f = std::make_shared<TileFunc>();
  f->name = "scale<N=8>";
  f->opName = "scale";
  f->params = {inParam("y", {8}), scalarParam("pos"), scalarParam("s", DType::F32), outParam("out", {8})};
  f->taskGrid = {2};
  f->taskVars = {"t"};
  return f;
}

Region region(int tensor, std::vector<std::pair<int64_t, int64_t>> ranges) { return Region{tensor, std::move(ranges)}; }

Megakernel tinyKernel() {
  Megakernel m;
  Graph& g = m.graph;
  g.program = "tiny.mk";
  g.config = "tiny";
  Tensor w{0, "w", Tensor::Weight, DType::BF16, {8, 4}, {}, {"model.w"}, ""};
  Tensor x{1, "x", Tensor::Input, DType::BF16, {4}, {}, {}, ""};
  Tensor y{2, "y", Tensor::Activation, DType::F32, {8}, {}, {}, ""};
  Tensor out{3, "layer[0].out", Tensor::Activation, DType::F32, {8}, {Layout::Tiled, {4}}, {}, ""};
  g.tensors = {w, x, y, out};
  g.inputs = {{"x", DType::BF16, 1}, {"pos", DType::I32, -1}};
  g.outputs = {{"out", 3}};
  Node n0;
  n0.id = 0;
  n0.func = matvecFunc();
  n0.tensors = {0, 1, 2};
  n0.scalars.resize(3);
  Node n1;
  n1.id = 1;
  n1.func = scaleFunc();
  n1.tensors = {2, -1, -1, 3};
  n1.scalars.resize(4);
  n1.scalars[1] = {ScalarArg::Input, 1, 0};
  n1.scalars[2] = {ScalarArg::Const, 0, 0.5};
  n1.after = {2};
  n1.gridSyncBefore = true;
  n1.cluster = 2;
  g.nodes.push_back(n0);
  g.nodes.push_back(n1);

  m.target = *findTarget("h200");
  m.target.sms = 2;
  auto task = [&](int id, int node, int64_t index, int sm, std::vector<Region> reads, std::vector<Region> writes,
                  std::vector<int> waits, std::vector<int> signals) {
    Task t;
    t.id = id;
    t.node = node;
    t.index = {index};
    t.reads = std::move(reads);
    t.writes = std::move(writes);
    t.bytes = node == 0 ? 56 : 48;
    t.flops = node == 0 ? 32 : 4;
    t.sm = sm;
    t.waits = std::move(waits);
    t.signals = std::move(signals);
    m.tasks.push_back(std::move(t));
  };
  task(0, 0, 0, 0, {region(0, {{0, 4}, {0, 4}}), region(1, {{0, 4}})}, {region(2, {{0, 4}})}, {}, {0});
  task(1, 0, 1, 1, {region(0, {{4, 8}, {0, 4}}), region(1, {{0, 4}})}, {region(2, {{4, 8}})}, {}, {0});
  task(2, 1, 0, 0, {region(2, {{0, 8}})}, {region(3, {{0, 4}})}, {0}, {1});
  task(3, 1, 1, 1, {region(2, {{0, 8}})}, {region(3, {{4, 8}})}, {0}, {1});
  m.counters = {{0, {0, 1}, "y (n0) complete for n1", {}}, {1, {2, 3}, "", {}}};
  m.queues = {{0, 2}, {1, 3}};
  m.memory.weights = {{0, 0, 64}};
  m.memory.activations = {{2, 0, 32}, {3, 32, 32}};
  m.memory.weightBytes = 64;
  m.memory.activationBytes = 64;
  m.memory.smemPerTask = 128;
  return m;
}

struct Parsed {
  SourceManager sources;
  DiagnosticEngine diags{sources};
  std::optional<Megakernel> m;
  std::string errors() const {
    std::string s;
    for (const Diagnostic& d : diags.diagnostics()) {
      LineCol lc = sources.file(d.range.file).lineCol(d.range.begin);
      s += std::to_string(lc.line) + ":" + std::to_string(lc.col) + ": " + d.message + "\n";
    }
    return s;
  }
};

std::unique_ptr<Parsed> parse(const std::string& text) {
  auto p = std::make_unique<Parsed>();
  FileId f = p->sources.add("tiny.sched", text);
  p->m = parseSchedule(p->sources.file(f).text(), p->diags, f);
  return p;
}

// `text` with the first occurrence of `from` replaced by `to` (which must exist).
std::string edit(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace


namespace {

const char* kTinySchedule = R"(// mkdsl schedule: 4 tasks, 2 counters, 2 queues
program "tiny.mk"
config tiny
target h200 arch sm_90a sms 2 smem 232448 warp 32 threads 512 bandwidth 4.8e+12

tensors
  t0 w weight bf16[8, 4] row_major sources "model.w"
  t1 x input bf16[4] row_major
  t2 y activation f32[8] row_major
  t3 "layer[0].out" activation f32[8] tiled(4)
inputs
  x bf16 t1
  pos i32
outputs
  out t3

funcs
  f0 "matvec<N=8, K=4>" op matvec grid [2] as (t) params (w: tensor bf16[8, 4], x: tensor bf16[4], y: result f32[8])
  f1 "scale<N=8>" op scale grid [2] as (t) params (y: tensor f32[8], pos: scalar i32[], s: scalar f32[], out: result f32[8])
nodes
  n0 = f0 matvec(t0, t1, t2)  // 2 tasks
  n1 = f1 scale(t2, input 1, const 0.5, t3) after (t2) sync grid cluster 2  // 2 tasks

memory weights 64 state 0 activations 64 smem_per_task 128
  weight t0 at 0 size 64
  activation t2 at 0 size 32
  activation t3 at 32 size 32

counters
  c0 expects 2 from tasks 0-1 why "y (n0) complete for n1"
  c1 expects 2 from tasks 2-3

queues
  sm 0:  // 2 tasks, 104 bytes
    task 0 matvec#0[0] signal c0 bytes 56 flops 32 reads t0[0..4, 0..4], t1[0..4] writes t2[0..4]
    task 2 scale#1[0] wait c0 signal c1 bytes 48 flops 4 reads t2[0..8] writes t3[0..4]
  sm 1:  // 2 tasks, 104 bytes
    task 1 matvec#0[1] signal c0 bytes 56 flops 32 reads t0[4..8, 0..4], t1[0..4] writes t2[4..8]
    task 3 scale#1[1] wait c0 signal c1 bytes 48 flops 4 reads t2[0..8] writes t3[4..8]
)";

// A minimal JSON syntax check: one value, then only whitespace.
struct JsonChecker {
  std::string_view s;
  size_t i = 0;
  void ws() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  }
  bool lit(std::string_view w) {
    if (s.substr(i, w.size()) != w) return false;
    i += w.size();
    return true;
  }
  bool string() {
    if (!lit("\"")) return false;
    while (i < s.size() && s[i] != '"') {
      if (static_cast<unsigned char>(s[i]) < 0x20) return false;
      i += s[i] == '\\' ? 2 : 1;
    }
    return lit("\"");
  }
  bool number() {
    size_t b = i;
    if (i < s.size() && s[i] == '-') ++i;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || std::strchr(".eE+-", s[i]))) ++i;
    return i > b && std::isdigit(static_cast<unsigned char>(s[i - 1]));
  }
  bool value() {
    ws();
    if (i >= s.size()) return false;
    if (s[i] == '{') {
      ++i;
      ws();
      if (lit("}")) return true;
      do {
        ws();
        if (!string()) return false;
        ws();
        if (!lit(":") || !value()) return false;
        ws();
      } while (lit(","));
      return lit("}");
    }
    if (s[i] == '[') {
      ++i;
      ws();
      if (lit("]")) return true;
      do {
        if (!value()) return false;
        ws();
      } while (lit(","));
      return lit("]");
    }
    if (s[i] == '"') return string();
    if (lit("true") || lit("false") || lit("null")) return true;
    return number();
  }
  bool check() {
    if (!value()) return false;
    ws();
    return i == s.size();
  }
};

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("printGraph: tensors, nodes with their bindings, each tile function once with its body") {
  Megakernel m = tinyKernel();
  m.graph.nodes.push_back(m.graph.nodes[0]);  // a second call of the same function
  m.graph.nodes.back().id = 2;
  m.graph.nodes.back().tensors = {0, 1, 3};
  CHECK(printGraph(m.graph) == R"(graph "tiny.mk" config tiny

tensors  // 4
  %t0 w: weight bf16[8, 4] row_major <- "model.w"
  %t1 x: input bf16[4] row_major
  %t2 y: activation f32[8] row_major
  %t3 layer[0].out: activation f32[8] tiled(4)

inputs
  x: bf16 -> x
  pos: i32
outputs
  out = layer[0].out

nodes  // 3
  %0 = matvec<N=8, K=4>(w: w, x: x) -> (y: y) tasks [2]
  sync grid
  %1 = scale<N=8>(y: y, pos: input pos, s: 0.5) -> (out: layer[0].out) tasks [2] @after(y) @cluster(2)
  %2 = matvec<N=8, K=4>(w: w, x: x) -> (y: layer[0].out) tasks [2]

// used by %0, %2
func matvec<N=8, K=4>(w: bf16[8, 4], x: bf16[4]) -> (y: f32[8]) tasks [2] as (t) {
  let acc: f32[4] = 0.0
  for k in 0 .. 4 step 4 {
    acc += rowdot(load w[t * 4 : +4, k : +4], load x[k : +4])
  }
  store y[t * 4 : +4] = acc  // f32[4]
}

// used by %1
func scale<N=8>(y: f32[8], pos: i32[], s: f32[]) -> (out: f32[8]) tasks [2] as (t) {}
)");
}

TEST_CASE("printExpr: precedence, casts, reductions, selects") {
  TileFunc f;
  f.params = {inParam("x", {16})};
  f.locals = {{"a", DType::F32, {16}}, {"a", DType::F32, {}}};
  // (a.0 + 1) * -a.1, cast to bf16, then max-reduced; a select on a comparison.
  auto red = reduce(ReduceOp::Max,
                    cast(binary(BinaryOp::Mul, binary(BinaryOp::Add, local(0, DType::F32, {16}), constant(1, DType::F32)),
                                unary(UnaryOp::Neg, local(1, DType::F32), DType::F32)),
                         DType::BF16),
                    DType::BF16);
  CHECK(printExpr(f, *red) == "max(cast<bf16>((a.0 + 1.0) * -a.1))");

  auto sel = ops(ExprKind::Select, DType::F32, {16}, binary(BinaryOp::Lt, iota(16), constant(3)), local(0, DType::F32, {16}),
                 constant(-HUGE_VAL, DType::F32));
  CHECK(printExpr(f, *sel) == "select(iota(16) < 3, a.0, -inf)");
  // a - (b - c) keeps its parentheses, (a - b) - c does not need them.
  auto right = binary(BinaryOp::Sub, constant(1), binary(BinaryOp::Sub, constant(2), constant(3)));
  CHECK(printExpr(f, *right) == "1 - (2 - 3)");
  auto left = binary(BinaryOp::Sub, binary(BinaryOp::Sub, constant(1), constant(2)), constant(3));
  CHECK(printExpr(f, *left) == "1 - 2 - 3");
}

TEST_CASE("printExpr: mma and mma_nt print as their builtin calls") {
  TileFunc f;
  f.params = {inParam("a", {4, 8}, DType::BF16), inParam("b", {8, 2}, DType::BF16), inParam("w", {2, 8}, DType::BF16)};
  auto a = [] { return load(0, DType::BF16, dim(constant(0), 4), dim(constant(0), 8)); };
  auto nn = ops(ExprKind::Mma, DType::F32, {4, 2}, a(), load(1, DType::BF16, dim(constant(0), 8), dim(constant(0), 2)));
  CHECK(printExpr(f, *nn) == "mma(load a[0 : +4, 0 : +8], load b[0 : +8, 0 : +2])");
  auto nt = ops(ExprKind::MmaNt, DType::F32, {4, 2}, a(), load(2, DType::BF16, dim(constant(0), 2), dim(constant(0), 8)));
  CHECK(printExpr(f, *nt) == "mma_nt(load a[0 : +4, 0 : +8], load w[0 : +2, 0 : +8])");
}

TEST_CASE("printTasks: one line per task with named regions") {
  CHECK(printTasks(tinyKernel()) == R"(// 4 tasks
task 0 matvec#0[0] reads w[0..4, 0..4], x[0..4] writes y[0..4] bytes 56 flops 32
task 1 matvec#0[1] reads w[4..8, 0..4], x[0..4] writes y[4..8] bytes 56 flops 32
task 2 scale#1[0] reads y[0..8] writes layer[0].out[0..4] bytes 48 flops 4
task 3 scale#1[1] reads y[0..8] writes layer[0].out[4..8] bytes 48 flops 4
)");
}

TEST_CASE("printSchedule: exact text") { CHECK(printSchedule(tinyKernel()) == kTinySchedule); }

TEST_CASE("parseSchedule: reads the printed schedule back") {
  auto p = parse(kTinySchedule);
  REQUIRE_MESSAGE(p->m, p->errors());
  const Megakernel& m = *p->m;
  CHECK(printSchedule(m) == kTinySchedule);
  CHECK(m.target.name == "h200");
  CHECK(m.target.sms == 2);
  CHECK(m.target.memoryBandwidth == 4.8e12);
  REQUIRE(m.graph.tensors.size() == 4);
  CHECK(m.graph.tensors[3].name == "layer[0].out");
  CHECK(m.graph.tensors[3].layout == Layout{Layout::Tiled, {4}});
  CHECK(m.graph.tensors[0].sources == std::vector<std::string>{"model.w"});
  REQUIRE(m.graph.nodes.size() == 2);
  CHECK(m.graph.nodes[0].func == m.graph.nodes[0].func);
  CHECK(m.graph.nodes[1].func->taskCount() == 2);
  CHECK(m.graph.nodes[1].func->params[1].kind == Param::Scalar);
  CHECK(m.graph.nodes[1].tensors == std::vector<int>{2, -1, -1, 3});
  CHECK(m.graph.nodes[1].scalars[1].kind == ScalarArg::Input);
  CHECK(m.graph.nodes[1].scalars[1].index == 1);
  CHECK(m.graph.nodes[1].scalars[2].value == 0.5);
  CHECK(m.graph.nodes[1].gridSyncBefore);
  CHECK(m.graph.nodes[1].cluster == 2);
  REQUIRE(m.tasks.size() == 4);
  CHECK(m.tasks[2].node == 1);
  CHECK(m.tasks[2].sm == 0);
  CHECK(m.tasks[2].waits == std::vector<int>{0});
  CHECK(m.tasks[2].signals == std::vector<int>{1});
  CHECK(m.tasks[1].reads[0].ranges == std::vector<std::pair<int64_t, int64_t>>{{4, 8}, {0, 4}});
  CHECK(m.tasks[3].range.valid());
  CHECK(m.counters[0].producers == std::vector<int>{0, 1});
  CHECK(m.counters[0].why == "y (n0) complete for n1");
  CHECK(m.queues == std::vector<std::vector<int>>{{0, 2}, {1, 3}});
  CHECK(m.memory.activations.size() == 2);
  CHECK(m.memory.smemPerTask == 128);
}

TEST_CASE("parseSchedule: a hand edit (one wait deleted) parses and prints back as edited") {
  std::string text = edit(kTinySchedule, "task 2 scale#1[0] wait c0 signal c1", "task 2 scale#1[0] signal c1");
  auto p = parse(text);
  REQUIRE_MESSAGE(p->m, p->errors());
  CHECK(p->m->tasks[2].waits.empty());
  CHECK(printSchedule(*p->m) == text);
}

// A box dimension relative to a step input (a cache row at `pos + 4 t`) reads back with its input
// and offsets, and prints back as written.
TEST_CASE("parseSchedule: a range relative to an input round-trips") {
  std::string text = edit(kTinySchedule, "writes t3[0..4]", "writes t3[0..8 at input 1 + -1..3]");
  auto p = parse(text);
  REQUIRE_MESSAGE(p->m, p->errors());
  const Region& w = p->m->tasks[2].writes[0];
  REQUIRE(w.relative.size() == 1);
  CHECK(w.relative[0] == RelativeRange{1, -1, 3});
  CHECK(w.ranges == std::vector<std::pair<int64_t, int64_t>>{{0, 8}});
  CHECK(printSchedule(*p->m) == text);
  auto bad = parse(edit(kTinySchedule, "writes t3[0..4]", "writes t3[0..4 at input 1 0..4]"));
  CHECK_FALSE(bad->m);
  CHECK(bad->errors().find("expected '+'") != std::string::npos);
}

TEST_CASE("parseSchedule: odd schedules round-trip (task in two queues, unqueued task, global order)") {
  Megakernel m = tinyKernel();
  m.queues = {{0, 1, 2}, {1}};          // task 1 also on SM 0; task 3 in no queue
  m.tasks[3].sm = -1;
  m.tasks[2].sm = 1;                    // placed in queue 0, but says SM 1
  std::swap(m.tasks[0], m.tasks[1]);    // global order 1 0 2 3
  m.counters[1].producers = {3, 2, 5 - 5};
  m.graph.nodes[1].func = nullptr;      // a node without a function
  m.tasks[2].node = 0;
  m.tasks[3].node = 0;
  std::string text = printSchedule(m);
  CHECK(text.find("    task 2 matvec#0[0] sm 1 wait c0") != std::string::npos);
  CHECK(text.find("  sm 0:  // 3 tasks, 160 bytes\n    task 0 matvec#0[0] signal c0") != std::string::npos);
  CHECK(text.find("  sm 1:  // 1 task, 56 bytes\n    task 1 matvec#0[1] signal c0") != std::string::npos);
  CHECK(text.find("  unqueued:\n    task 3 matvec#0[1] wait c0") != std::string::npos);
  CHECK(text.find("c1 expects 3 from tasks 3, 2, 0\n") != std::string::npos);
  CHECK(text.find("  n1 = none(t2, input 1, const 0.5, t3)") != std::string::npos);
  CHECK(text.find("\norder 1 0 2 3\n") != std::string::npos);
  auto p = parse(text);
  REQUIRE_MESSAGE(p->m, p->errors());
  CHECK(printSchedule(*p->m) == text);
  CHECK(p->m->tasks[0].id == 1);
  CHECK(p->m->tasks[3].sm == -1);
  CHECK(p->m->queues == m.queues);
}

TEST_CASE("parseSchedule: errors with their place and what was expected") {
  auto errors = [](const std::string& text) {
    auto p = parse(text);
    CHECK_FALSE(p->m);
    return p->errors();
  };
  // A missing field.
  CHECK(errors(edit(kTinySchedule, "signal c0 bytes 56 flops 32", "signal c0 flops 32")) ==
        "35:34: expected ',' or 'bytes', found 'flops'\n");
  CHECK(errors(edit(kTinySchedule, "task 2 scale#1[0]", "task 2")) ==
        "36:12: expected op#node[index] or end of line, found 'wait'\n");
  CHECK(errors(edit(kTinySchedule, "target h200", "// no target")) ==
        "40:1: expected a 'target' line, found end of file\n");
  // A bad number.
  CHECK(errors(edit(kTinySchedule, "bytes 48 flops 4 reads t2[0..8] writes t3[0..4]",
                    "bytes 4x8 flops 4 reads t2[0..8] writes t3[0..4]")) ==
        "36:47: bad number '4x8': expected a byte count\n");
  CHECK(errors(edit(kTinySchedule, "t2[0..8] writes t3[4..8]", "t2[0..8] writes t3[4..8.5]")) ==
        "39:86: bad number '8.5': expected a range end\n");
  // Unknown ids.
  CHECK(errors(edit(kTinySchedule, "from tasks 0-1", "from tasks 0, 9")) == "30:30: unknown task 9\n");
  CHECK(errors(edit(kTinySchedule, "scale#1[1] wait c0", "scale#1[1] wait c7")) == "39:28: unknown counter c7\n");
  CHECK(errors(edit(kTinySchedule, "reads t2[0..8] writes t3[4..8]", "reads t9[0..8] writes t3[4..8]")) ==
        "39:64: unknown tensor t9\n");
  CHECK(errors(std::string(kTinySchedule) + "    task 7\n") ==
        "40:10: task 7 is listed but its fields are given nowhere\n");
  // Inconsistent or duplicate definitions.
  CHECK(errors(edit(kTinySchedule, "c1 expects 2", "c1 expects 3")) ==
        "31:14: counter c1 expects 3 but lists 2 producers\n");
  CHECK(errors(edit(kTinySchedule, "task 3 scale#1[1]", "task 2 scale#1[1]")) == "39:10: task 2 is defined twice\n");
  CHECK(errors(edit(kTinySchedule, "task 3 scale#1[1]", "task 3 matvec#1[1]")) ==
        "39:12: n1 runs op 'scale', not 'matvec'\n");
  CHECK(errors(edit(kTinySchedule, "  sm 1:", "  sm 2:")) == "37:6: expected sm 1, found sm 2\n");
  CHECK(errors(edit(kTinySchedule, "n0 = f0 matvec(t0, t1, t2)", "n0 = f0 matvec(t0, t1)")) ==
        "21:17: node n0 passes 2 arguments, but f0 has 3 parameters\n");
  CHECK(errors(edit(kTinySchedule, "f32[8] row_major", "f33[8] row_major")) == "9:19: unknown dtype 'f33'\n");
  // Errors on several lines are all reported (each line recovers at its end).
  CHECK(errors(edit(edit(kTinySchedule, "bytes 56 flops 32", "bytes 56 flops"), "weight t0 at 0", "weight t0 at")) ==
        "25:16: expected an offset, found 'size'\n35:49: expected a flop count, found 'reads'\n");
}

TEST_CASE("parseSchedule: diagnostics render as file:line:col with a code") {
  auto p = parse(edit(kTinySchedule, "scale#1[1] wait c0", "scale#1[1] wait c7"));
  REQUIRE(p->diags.diagnostics().size() == 1);
  std::string text = renderText(p->sources, p->diags.diagnostics()[0]);
  CHECK(text.rfind("tiny.sched:39:28: error: unknown counter c7 [E0852]", 0) == 0);
}

TEST_CASE("scheduleJson: well-formed, with every task, counter and queue") {
  std::string json = scheduleJson(tinyKernel());
  CHECK(JsonChecker{json}.check());
  CHECK(json.rfind(R"({"target":"h200","arch":"sm_90a","sms":2,"smem":232448,"warp":32,"threads":512,"bandwidth":4.8e+12,)", 0) == 0);
  CHECK(json.find(R"({"id":2,"node":1,"op":"scale","index":[0],"sm":0,"bytes":48,"flops":4,)"
                  R"("reads":[{"tensor":2,"ranges":[[0,8]]}],"writes":[{"tensor":3,"ranges":[[0,4]]}],)"
                  R"("waits":[0],"signals":[1]})") != std::string::npos);
  CHECK(json.find(R"({"id":0,"expected":2,"producers":[0,1],"why":"y (n0) complete for n1"})") != std::string::npos);
  CHECK(json.find("\"queues\":[\n [0,2],\n [1,3]]") != std::string::npos);
  CHECK(count(json, "\"node\":") == 4);
}

TEST_CASE("scheduleHtml: one lane per SM, a box per task, tooltips, a legend, dependency lines") {
  Megakernel m = tinyKernel();
  std::string html = scheduleHtml(m);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(count(html, "<g class=\"lane\"") == 2);
  CHECK(count(html, "<rect class=\"task\"") == 4);
  CHECK(html.find("<title>task 2 scale#1[0]&#10;op scale&#10;sm 0&#10;bytes 48") != std::string::npos);
  CHECK(count(html, "<line class=\"dep\"") == 4);  // tasks 2 and 3 each wait for tasks 0 and 1
  CHECK(html.find("4 of 4 waits") != std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("http://www.w3.org/2000/svg") != std::string::npos);  // the SVG namespace only
  CHECK(count(html, "http") == 1);

  // Tasks 2 and 3 start when both matvec tasks are done: 56 bytes at 4.8e12 / 2 bytes/s each.
  CHECK(html.find("bytes 56&#10;flops 32&#10;waits -&#10;signals c0&#10;est. 0 .. 2.333e-05 µs") != std::string::npos);
  CHECK(html.find("waits c0&#10;signals c1&#10;est. 2.333e-05 .. 4.333e-05 µs") != std::string::npos);
  CHECK(html.find("deadlock") == std::string::npos);

  // A queue that waits for its own later task deadlocks; the view says so and still draws it all.
  Megakernel bad = m;
  bad.queues = {{2, 0}, {1, 3}};
  html = scheduleHtml(bad);
  CHECK(html.find("The queues deadlock under this estimate") != std::string::npos);
  CHECK(count(html, "<rect class=\"task\"") == 4);

  // 132 SMs, more dependency lines than drawn.
  m.target = *findTarget("h200");
  m.queues.resize(132);
  HtmlOptions few;
  few.maxLines = 3;
  html = scheduleHtml(m, few);
  CHECK(count(html, "<g class=\"lane\"") == 132);
  CHECK(count(html, "<line class=\"dep\"") == 2);
  CHECK(html.find("2 of 4 waits (producer end → consumer start), 2 omitted") != std::string::npos);
}
