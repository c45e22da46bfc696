// The megakernel scheduler (lowering/schedule), the task region analysis (lowering/regions) and
// the verifier (ir/verify) on small hand-built graphs: exact counters, waits, placement and memory
// plan, and mutation tests that the verifier rejects a schedule missing a wait or misordered.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "ir/verify.h"
#include "lowering/regions.h"
#include "lowering/schedule.h"
#include "ir_build.h"

using namespace mk;
using namespace mk::ir;
using namespace mk::ir::build;

namespace {

TargetDesc twoSms(int smem = 227 * 1024) { return {"test2", "sm_90a", 2, smem, 32, 512, 1e12}; }

// Region as a compact list of [lo, hi) pairs.
using Ranges = std::vector<std::pair<int64_t, int64_t>>;

// produce (4 tasks): y[4t : +4] = x[4t : +4]
// consume_all (4 tasks): z[t] = sum(y[0 : +16])
// consume_own (4 tasks): u[4t : +4] = y[4t : +4]
Graph producerConsumers() {
  GraphBuilder b;
  int x = b.tensor("x", Tensor::Input, {16});
  int y = b.tensor("y", Tensor::Activation, {16});
  int z = b.tensor("z", Tensor::Activation, {4});
  int u = b.tensor("u", Tensor::Activation, {16});
  b.node(func("produce", {inParam("x", {16}), outParam("y", {16})}, {4}, i32Locals(4),
              store(1, load(0, DType::F32, dim(mul(taskIndex(0), constant(4)), 4)), dim(mul(taskIndex(0), constant(4)), 4))),
         {x, y});
  b.node(func("consume_all", {inParam("y", {16}), outParam("z", {4})}, {4}, i32Locals(4),
              store(1, sum(load(0, DType::F32, dim(constant(0), 16))), dim(taskIndex(0), 0))),
         {y, z});
  b.node(func("consume_own", {inParam("y", {16}), outParam("u", {16})}, {4}, i32Locals(4),
              store(1, load(0, DType::F32, dim(mul(taskIndex(0), constant(4)), 4)), dim(mul(taskIndex(0), constant(4)), 4))),
         {y, u});
  return b.g;
}

std::vector<std::string> messages(const DiagnosticEngine& d) {
  std::vector<std::string> out;
  for (const auto& x : d.diagnostics()) out.push_back(x.message);
  return out;
}

}  // namespace

// `if t == 0 { y[0 : +4] = x } else { z[4 * t - 4 : +4] = x }`: a branch a task never takes adds
// nothing to its regions or bytes.
TEST_CASE("regions: branches on the task index are decided per task") {
  GraphBuilder b;
  int x = b.tensor("x", Tensor::Input, {4});
  int y = b.tensor("y", Tensor::Activation, {4});
  int z = b.tensor("z", Tensor::Activation, {12});
  auto branch = std::make_unique<Stmt>();
  branch->kind = StmtKind::If;
  branch->value = binary(BinaryOp::Eq, taskIndex(0), constant(0), DType::Bool);
  branch->body.push_back(store(1, load(0, DType::F32, dim(constant(0), 4)), dim(constant(0), 4)));
  branch->otherwise.push_back(
      store(2, load(0, DType::F32, dim(constant(0), 4)), dim(add(mul(taskIndex(0), constant(4)), constant(-4)), 4)));
  b.node(func("split", {inParam("x", {4}), outParam("y", {4}), outParam("z", {12})}, {4}, i32Locals(4), std::move(branch)),
         {x, y, z});

  lowering::TaskAccess first = lowering::analyzeTask(b.g, b.g.nodes[0], {0});
  REQUIRE(first.writes.size() == 1);
  CHECK(first.writes[0].tensor == y);
  CHECK(first.bytes == (4 + 4) * 4);
  lowering::TaskAccess third = lowering::analyzeTask(b.g, b.g.nodes[0], {2});
  REQUIRE(third.writes.size() == 1);
  CHECK(third.writes[0].tensor == z);
  CHECK(third.writes[0].ranges == Ranges{{4, 8}});
}

TEST_CASE("regions: task slices, loops, runtime scalars, flops") {
  GraphBuilder b;
  int x = b.tensor("x", Tensor::Input, {16});
  int kc = b.tensor("kc", Tensor::State, {8, 4});
  int y = b.tensor("y", Tensor::Activation, {16});
  int w = b.tensor("w", Tensor::Weight, {4, 8});
  // for k in 0..16 step 4 { let l1 = k; y[t*4 : +4] = x[l1 : +4] + kc[pos, t] }, and an
  // accumulated offset that the loop makes unknown: l2 += 1 reads w[l2, 0 : +8].
  auto rowdot = ops(ExprKind::RowDot, DType::F32, {4}, load(0, DType::F32, dim(constant(0), 4), dim(constant(0), 8)),
                    load(0, DType::F32, dim(constant(0), 0), dim(constant(0), 8)));
  auto f = func("f", {inParam("w", {4, 8}), inParam("x", {16}), inParam("kc", {8, 4}), scalarParam("pos"), outParam("y", {16})},
                {4}, i32Locals(4),
                let(2, mul(taskIndex(0), constant(2))),
                loop(0, constant(0), constant(16), 4,
                     let(1, add(local(0), constant(0))),
                     assign(2, AssignOp::Add, constant(1)),
                     store(4,
                           binary(BinaryOp::Add, load(1, DType::F32, dim(local(1), 4)),
                                  load(2, DType::F32, dim(scalar(3), 0), dim(taskIndex(0), 0)), DType::F32),
                           dim(mul(taskIndex(0), constant(4)), 4)),
                     store(4, std::move(rowdot), dim(constant(0), 4))));
  b.node(f, {w, x, kc, -1, y});

  lowering::TaskAccess a = lowering::analyzeTask(b.g, b.g.nodes[0], {2});
  REQUIRE(a.reads.size() == 3);
  CHECK(a.reads[0].tensor == x);
  CHECK(a.reads[0].ranges == Ranges{{0, 16}});  // k in [0, 15], +4, clamped
  CHECK(a.reads[1].tensor == kc);
  CHECK(a.reads[1].ranges == Ranges{{0, 8}, {2, 3}});  // pos unknown: the whole dim
  CHECK(a.reads[2].tensor == w);
  CHECK(a.reads[2].ranges == Ranges{{0, 4}, {0, 8}});
  REQUIRE(a.writes.size() == 2);  // y[0..4) and y[8..12) stay apart: a task writing y[4..8) does not overlap
  CHECK(a.writes[0].ranges == Ranges{{0, 4}});
  CHECK(a.writes[1].ranges == Ranges{{8, 12}});
  // Bytes: per tensor the smaller of its boxes and the tiles moved (tile x trips): x 16, kc 4
  // (one element at the run-time `pos`, 4 trips, not its 8-element box), w 32, y 8.
  CHECK(a.bytes == (16 + 4 + 32 + 8) * 4);
  CHECK(a.flops == 2 * 32 * 4);  // RowDot over a 4x8 tile, 4 trips
  CHECK(lowering::largestLoadBytes(*f) == 32 * 4);

  // A loop-carried offset widens to unknown: l2 = 2t, then l2 += 1 each trip.
  auto g2 = func("g", {inParam("x", {16}), outParam("y", {16})}, {4}, i32Locals(4),
                 let(2, mul(taskIndex(0), constant(2))),
                 loop(0, constant(0), constant(4), 1, assign(2, AssignOp::Add, constant(1)),
                      store(1, load(0, DType::F32, dim(local(2), 1)), dim(taskIndex(0), 1))));
  b.node(g2, {x, y});
  a = lowering::analyzeTask(b.g, b.g.nodes[1], {1});
  CHECK(a.reads[0].ranges == Ranges{{0, 16}});
  CHECK(a.writes[0].ranges == Ranges{{1, 2}});
}

TEST_CASE("regions: a loop to a run-time bound counts its whole boxes, as an upper bound") {
  GraphBuilder b;
  int x = b.tensor("x", Tensor::Input, {64});
  int y = b.tensor("y", Tensor::Activation, {4});
  // for p in 0 .. n + 1 by 4 { y[0 : +4] = x[p : +4] }: x's trips are known only at run time.
  auto f = func("f", {inParam("x", {64}), scalarParam("n"), outParam("y", {4})}, {1}, i32Locals(1),
                loop(0, constant(0), add(scalar(1), constant(1)), 4,
                     store(2, load(0, DType::F32, dim(local(0), 4)), dim(constant(0), 4))));
  b.node(f, {x, -1, y});
  lowering::TaskAccess a = lowering::analyzeTask(b.g, b.g.nodes[0], {0});
  CHECK_FALSE(a.bytesExact);
  CHECK(a.bytes == (64 + 4) * 4);  // all of x, and y's box
  // A loop of known trips is exact (the test above: tile x trips).
  auto g = func("g", {inParam("x", {64}), outParam("y", {4})}, {1}, i32Locals(1),
                loop(0, constant(0), constant(16), 4, store(1, load(0, DType::F32, dim(local(0), 4)), dim(constant(0), 4))));
  b.node(g, {x, y});
  a = lowering::analyzeTask(b.g, b.g.nodes[1], {0});
  CHECK(a.bytesExact);
  CHECK(a.bytes == (16 + 4) * 4);
}

// A causal attention's shape: task t reads the keys up to `pos + 4 (t + 1)`, so its bytes are only
// bounded (the whole cache) but with the step input at zero they are t + 1 trips of a tile, and
// the node's tasks are numbered and placed longest first.
TEST_CASE("schedule: tasks over keys up to a run-time position are weighed at position zero, longest first") {
  GraphBuilder b;
  int cache = b.tensor("cache", Tensor::State, {64});
  int y = b.tensor("y", Tensor::Activation, {4});
  // for p in 0 .. pos + 4 (t + 1) by 4 { y[t] = sum(cache[p : +4]) }
  b.node(func("causal", {inParam("cache", {64}), scalarParam("pos"), outParam("y", {4})}, {4}, i32Locals(1),
              loop(0, constant(0), add(scalar(1), mul(add(taskIndex(0), constant(1)), constant(4))), 4,
                   store(2, sum(load(0, DType::F32, dim(local(0), 4))), dim(taskIndex(0), 0)))),
         {cache, -1, y})
      .scalars[1] = {ScalarArg::Input, 0, 0};
  for (int t = 0; t < 4; ++t) {
    CAPTURE(t);
    lowering::TaskAccess a = lowering::analyzeTask(b.g, b.g.nodes[0], {t});
    CHECK_FALSE(a.bytesExact);
    CHECK(a.bytes == (64 + 1) * 4);
    CHECK(a.bytesAtZero == (4 * (t + 1) + 1) * 4);
  }
  Megakernel mk = lowering::schedule(b.g, twoSms());
  REQUIRE(mk.tasks.size() == 4);
  for (int id = 0; id < 4; ++id) CHECK(mk.tasks[size_t(id)].index == std::vector<int64_t>{3 - id});
  // Weights 68, 52, 36, 20: the two longest apart, then each SM's total evened (88 and 88).
  CHECK(mk.queues == std::vector<std::vector<int>>{{0, 3}, {1, 2}});
  SourceManager sources;
  DiagnosticEngine diags(sources);
  CHECK(verify(mk, diags));

  // A bound not known at zero either (`pos / 8`, as a decode's split of the cache) leaves the
  // estimate unknown, and the tasks in grid order.
  GraphBuilder c;
  cache = c.tensor("cache", Tensor::State, {64});
  y = c.tensor("y", Tensor::Activation, {4});
  c.node(func("split", {inParam("cache", {64}), scalarParam("pos"), outParam("y", {4})}, {4}, i32Locals(1),
              loop(0, mul(taskIndex(0), binary(BinaryOp::Div, scalar(1), constant(8))), constant(64), 4,
                   store(2, sum(load(0, DType::F32, dim(local(0), 4))), dim(taskIndex(0), 0)))),
         {cache, -1, y})
      .scalars[1] = {ScalarArg::Input, 0, 0};
  CHECK(lowering::analyzeTask(c.g, c.g.nodes[0], {1}).bytesAtZero == -1);
  mk = lowering::schedule(c.g, twoSms());
  for (int id = 0; id < 4; ++id) CHECK(mk.tasks[size_t(id)].index == std::vector<int64_t>{id});
}

TEST_CASE("regions: disjoint boxes stay apart, touching ones merge, more than four fold into one") {
  GraphBuilder b;
  int x = b.tensor("x", Tensor::Input, {8, 8});
  int y = b.tensor("y", Tensor::Activation, {8, 64});
  // Task t stores x's row block into y at the column offsets listed, 4 columns each.
  auto stores = [&](const char* name, std::vector<int64_t> cols) {
    auto f = func(name, {inParam("x", {8, 8}), outParam("y", {8, 64})}, {4}, i32Locals(1));
    for (int64_t c : cols)
      f->body.push_back(store(1, load(0, DType::F32, dim(constant(0), 2), dim(constant(0), 4)),
                              dim(mul(taskIndex(0), constant(2)), 2), dim(constant(c), 4)));
    b.node(f, {x, y});
    return lowering::analyzeTask(b.g, b.g.nodes.back(), {1});
  };
  // Apart in columns: two boxes, in order.
  lowering::TaskAccess a = stores("apart", {32, 0});
  REQUIRE(a.writes.size() == 2);
  CHECK(a.writes[0].ranges == Ranges{{2, 4}, {0, 4}});
  CHECK(a.writes[1].ranges == Ranges{{2, 4}, {32, 36}});
  CHECK(a.bytes == (8 + 16) * 4);  // the x tile read twice, but its box once; y 2 x 8 elements
  // Abutting (columns 4..8 after 0..4) and overlapping (6..10): one box, no larger than their union.
  a = stores("touching", {0, 4, 6});
  REQUIRE(a.writes.size() == 1);
  CHECK(a.writes[0].ranges == Ranges{{2, 4}, {0, 10}});
  // Five apart: folded into their hull.
  a = stores("many", {0, 8, 16, 24, 40});
  REQUIRE(a.writes.size() == 1);
  CHECK(a.writes[0].ranges == Ranges{{2, 4}, {0, 44}});
  // Four apart are kept.
  a = stores("four", {0, 8, 16, 24});
  CHECK(a.writes.size() == 4);
}

TEST_CASE("schedule: tasks writing interleaved halves of one tensor do not wait for each other") {
  // halves (2 tasks): y[4t : +4] and y[8 + 4t : +4] (a head's two RoPE halves); their hulls
  // [0, 12) and [4, 16) would overlap and make task 1 wait for task 0.
  GraphBuilder b;
  int x = b.tensor("x", Tensor::Input, {4});
  int y = b.tensor("y", Tensor::Activation, {16});
  b.node(func("halves", {inParam("x", {4}), outParam("y", {16})}, {2}, i32Locals(1),
              store(1, load(0, DType::F32, dim(constant(0), 4)), dim(mul(taskIndex(0), constant(4)), 4)),
              store(1, load(0, DType::F32, dim(constant(0), 4)), dim(add(mul(taskIndex(0), constant(4)), constant(8)), 4))),
         {x, y});
  Megakernel mk = lowering::schedule(b.g, twoSms());
  REQUIRE(mk.tasks.size() == 2);
  CHECK(mk.tasks[1].writes.size() == 2);
  CHECK(mk.counters.empty());
  CHECK(mk.tasks[0].waits.empty());
  CHECK(mk.tasks[1].waits.empty());
  SourceManager sources;
  DiagnosticEngine diags(sources);
  CHECK(verify(mk, diags));
}

// append (4 tasks): cache[pos + 4 t : +4] = x[4 t : +4], `pos` a step input; then read_all: one
// task reading cache[0 : +pos + 16] (an attention over what was appended).
TEST_CASE("schedule: rows appended at a run-time position do not wait for each other") {
  GraphBuilder b;
  int x = b.tensor("x", Tensor::Input, {16});
  int cache = b.tensor("cache", Tensor::State, {64});
  int y = b.tensor("y", Tensor::Activation, {1});
  auto row = [&] { return add(scalar(2), mul(taskIndex(0), constant(4))); };
  b.node(func("append", {inParam("x", {16}), outParam("cache", {64}), scalarParam("pos")}, {4}, i32Locals(1),
              store(1, load(0, DType::F32, dim(mul(taskIndex(0), constant(4)), 4)), dim(row(), 4))),
         {x, cache, -1})
      .scalars[2] = {ScalarArg::Input, 0, 0};
  // for p in 0 .. pos + 16 by 4 { y[0] = sum(cache[p : +4]) }
  b.node(func("read_all", {inParam("cache", {64}), scalarParam("pos"), outParam("y", {1})}, {1}, i32Locals(1),
              loop(0, constant(0), add(scalar(1), constant(16)), 4,
                   store(2, sum(load(0, DType::F32, dim(local(0), 4))), dim(constant(0), 0)))),
         {cache, -1, y})
      .scalars[1] = {ScalarArg::Input, 0, 0};

  lowering::TaskAccess a = lowering::analyzeTask(b.g, b.g.nodes[0], {2});
  REQUIRE(a.writes.size() == 1);
  CHECK(a.writes[0].ranges == Ranges{{0, 64}});  // pos unknown: the whole dimension
  REQUIRE(a.writes[0].relative.size() == 1);
  CHECK(a.writes[0].relative[0] == RelativeRange{0, 8, 12});
  lowering::TaskAccess r = lowering::analyzeTask(b.g, b.g.nodes[1], {0});
  CHECK(r.reads[0].relative.empty());  // from row 0: not relative to pos

  Megakernel mk = lowering::schedule(b.g, twoSms());
  REQUIRE(mk.tasks.size() == 5);
  for (int t = 0; t < 4; ++t) CHECK(mk.tasks[size_t(t)].waits.empty());
  REQUIRE(mk.tasks[4].waits.size() == 1);  // every append (the node's counter)
  CHECK(mk.counters[size_t(mk.tasks[4].waits[0])].producers.size() == 4);
  SourceManager sources;
  DiagnosticEngine diags(sources);
  CHECK(verify(mk, diags));

  // The same rows relative to two different inputs (or to one from a constant) may overlap.
  Region p{cache, {{0, 64}}, {{0, 0, 4}}}, q{cache, {{0, 64}}, {{0, 4, 8}}};
  CHECK_FALSE(p.overlaps(q));
  q.relative[0].input = 1;
  CHECK(p.overlaps(q));
  q.relative.clear();
  CHECK(p.overlaps(q));
}

TEST_CASE("schedule: producer and consumers on two SMs") {
  Megakernel mk = lowering::schedule(producerConsumers(), twoSms());
  REQUIRE(mk.tasks.size() == 12);
  CHECK(mk.tasks[5].node == 1);
  CHECK(mk.tasks[5].index == std::vector<int64_t>{1});
  CHECK(mk.tasks[1].reads[0].ranges == Ranges{{4, 8}});
  CHECK(mk.tasks[1].writes[0].ranges == Ranges{{4, 8}});
  CHECK(mk.tasks[0].bytes == 32);
  CHECK(mk.tasks[4].bytes == 68);

  // Bytes 32, 68, 32 per task of each node: alternating placement.
  CHECK(mk.queues == std::vector<std::vector<int>>{{0, 2, 4, 6, 8, 10}, {1, 3, 5, 7, 9, 11}});

  // consume_all waits for all of produce, but only its first task on each SM (4 and 5): tasks
  // 6 and 7 run after them on the same SMs and find the count reached. consume_own task t only
  // for produce task t, which runs before it on its own SM, so those counters are dropped.
  REQUIRE(mk.counters.size() == 1);
  CHECK(mk.counters[0].producers == std::vector<int>{0, 1, 2, 3});
  CHECK(mk.counters[0].why == "produce#0 tasks 0..3 -> y[0..16)");
  for (int t = 0; t < 12; ++t) {
    CAPTURE(t);
    CHECK(mk.tasks[t].waits == (t == 4 || t == 5 ? std::vector<int>{0} : std::vector<int>{}));
    CHECK(mk.tasks[t].signals == (t < 4 ? std::vector<int>{0} : std::vector<int>{}));
  }

  // Memory: x is a step input (activation arena), y, z, u activations; 256-byte aligned.
  REQUIRE(mk.memory.activations.size() == 4);
  CHECK(mk.memory.activations[1].offset == 256);
  CHECK(mk.memory.activations[2].offset == 512);
  CHECK(mk.memory.activations[2].bytes == 16);
  CHECK(mk.memory.activations[3].offset == 768);
  CHECK(mk.memory.activationBytes == 1024);
  CHECK(mk.memory.weights.empty());
  CHECK(mk.memory.smemPerTask == 2 * 64);

  SourceManager sources;
  DiagnosticEngine diags(sources);
  CHECK(verify(mk, diags));
  CHECK(diags.diagnostics().empty());
}

TEST_CASE("schedule: one SM needs no waits, and consumers of their own slice on another SM wait") {
  TargetDesc one = twoSms();
  one.sms = 1;
  Megakernel mk = lowering::schedule(producerConsumers(), one);
  CHECK(mk.counters.empty());
  for (const Task& t : mk.tasks) CHECK(t.waits.empty());

  // Three SMs: produce 0,1,2,0; consume_own task t lands elsewhere, so waits on task t alone.
  TargetDesc three = twoSms();
  three.sms = 3;
  mk = lowering::schedule(producerConsumers(), three);
  SourceManager sources;
  DiagnosticEngine diags(sources);
  CHECK(verify(mk, diags));
  bool sawSingle = false;
  for (const Counter& c : mk.counters)
    if (c.producers.size() == 1) {
      sawSingle = true;
      CHECK(c.why.find("task ") != std::string::npos);
      CHECK(c.why.find("-> y[") != std::string::npos);
    }
  CHECK(sawSingle);
}

TEST_CASE("verify: mutations are rejected with the right message") {
  Megakernel good = lowering::schedule(producerConsumers(), twoSms());
  SourceManager sources;

  SUBCASE("a deleted wait") {
    Megakernel mk = good;
    mk.tasks[4].waits.clear();
    DiagnosticEngine diags(sources);
    CHECK_FALSE(verify(mk, diags));
    // produce tasks 0 and 2 run before it on SM 0; 1 and 3 run on SM 1. Task 6, after it on
    // SM 0, relied on its wait.
    CHECK(messages(diags) ==
          std::vector<std::string>{
              "task consume_all#1[0] reads y[0..16) written by produce#0[1] but does not wait for it",
              "task consume_all#1[0] reads y[0..16) written by produce#0[3] but does not wait for it",
              "task consume_all#1[2] reads y[0..16) written by produce#0[1] but does not wait for it",
              "task consume_all#1[2] reads y[0..16) written by produce#0[3] but does not wait for it"});
    CHECK(diags.diagnostics()[0].kind == DiagKind::ScheduleRaw);
  }
  SUBCASE("two queue entries swapped") {
    Megakernel mk = good;
    std::swap(mk.queues[0][0], mk.queues[0][1]);
    DiagnosticEngine diags(sources);
    CHECK_FALSE(verify(mk, diags));
    CHECK(messages(diags) ==
          std::vector<std::string>{"SM 0 runs task produce#0[2] before task produce#0[0], against "
                                   "the global order (deadlock risk)"});
  }
  SUBCASE("a wait on a later task") {
    Megakernel mk = good;
    mk.tasks[2].waits.push_back(0);
    DiagnosticEngine diags(sources);
    CHECK_FALSE(verify(mk, diags));
    CHECK(messages(diags).at(0) ==
          "task produce#0[2] waits on counter 0 whose producer produce#0[3] does not run before it "
          "in the global order (deadlock)");
  }
  SUBCASE("a missing signal") {
    Megakernel mk = good;
    mk.tasks[1].signals.clear();
    DiagnosticEngine diags(sources);
    CHECK_FALSE(verify(mk, diags));
    CHECK(messages(diags) == std::vector<std::string>{
                                 "counter 0 (produce#0 tasks 0..3 -> y[0..16)): producer "
                                 "produce#0[1] signals it 0 times instead of once"});
  }
  SUBCASE("a region nobody wrote") {
    Megakernel mk = good;
    mk.tasks[3].writes.clear();
    DiagnosticEngine diags(sources);
    CHECK_FALSE(verify(mk, diags));
    CHECK(messages(diags).at(0) ==
          "task consume_all#1[0] reads y[0..16) but y[12..16) is written by no earlier task");
  }
  SUBCASE("shared memory") {
    Megakernel mk = good;
    mk.target.smemPerBlock = 100;
    DiagnosticEngine diags(sources);
    CHECK_FALSE(verify(mk, diags));
    CHECK(messages(diags) == std::vector<std::string>{
                                 "tasks need 128 bytes of shared memory but target 'test2' offers "
                                 "100 per block"});
  }
}

TEST_CASE("schedule: grid sync, @after, WAW and WAR, 2-D regions") {
  GraphBuilder b;
  int x = b.tensor("x", Tensor::Input, {4});
  int a = b.tensor("a", Tensor::Activation, {2});
  int s = b.tensor("s", Tensor::State, {4});
  int m = b.tensor("m", Tensor::Activation, {4, 4});
  int r = b.tensor("r", Tensor::Activation, {4});
  int w = b.tensor("w", Tensor::Weight, {4});
  // 0: a[t] = x[t] (2 tasks)       1: s[0:+4] = x (1 task)
  b.node(func("pa", {inParam("x", {4}), outParam("a", {2})}, {2}, i32Locals(4),
              store(1, load(0, DType::F32, dim(taskIndex(0), 0)), dim(taskIndex(0), 0))),
         {x, a});
  b.node(func("ps", {inParam("x", {4}), inoutParam("s", {4})}, {1}, i32Locals(4),
              store(1, load(0, DType::F32, dim(constant(0), 4)), dim(constant(0), 4))),
         {x, s});
  // 2: sync grid; m[2i:+2, 2j:+2] = w (2x2 tasks)
  Node& n2 = b.node(func("tile", {inParam("w", {4}), outParam("m", {4, 4})}, {2, 2}, i32Locals(4),
                         store(1, load(0, DType::F32, dim(constant(0), 2)), dim(mul(taskIndex(0), constant(2)), 2),
                               dim(mul(taskIndex(1), constant(2)), 2))),
                    {w, m});
  n2.gridSyncBefore = true;
  // 3: r[2i:+2] = sum rows m[2i:+2, 0:+4], @after s
  Node& n3 = b.node(func("rows", {inParam("m", {4, 4}), outParam("r", {4})}, {2}, i32Locals(4),
                         store(1, load(0, DType::F32, dim(mul(taskIndex(0), constant(2)), 2), dim(constant(0), 4)),
                               dim(mul(taskIndex(0), constant(2)), 2))),
                    {m, r});
  n3.after = {s};
  // 4: overwrite m[0:+1, 0:+4] (WAW with tile (0,0),(0,1); WAR with rows#3[0])
  b.node(func("clobber", {inParam("x", {4}), inoutParam("m", {4, 4})}, {1}, i32Locals(4),
              store(1, load(0, DType::F32, dim(constant(0), 4)), dim(constant(0), 0), dim(constant(0), 4))),
         {x, m});
  // 5: sync grid again: waits only for nodes 2..4
  Node& n5 = b.node(func("last", {inParam("x", {4}), outParam("a", {2})}, {1}, i32Locals(4),
                         store(1, load(0, DType::F32, dim(constant(0), 2)), dim(constant(0), 2))),
                    {x, a});
  n5.gridSyncBefore = true;

  TargetDesc many = twoSms();
  many.sms = 16;  // every task on its own SM: no wait is pruned
  Megakernel mk = lowering::schedule(b.g, many);
  REQUIRE(mk.tasks.size() == 11);
  // Row-major task grid of `tile`: ids 3..6 are (0,0) (0,1) (1,0) (1,1).
  CHECK(mk.tasks[4].index == std::vector<int64_t>{0, 1});
  CHECK(mk.tasks[4].writes[0].ranges == Ranges{{0, 2}, {2, 4}});
  for (int t = 0; t < 11; ++t) CHECK(mk.tasks[t].sm == t);

  auto producersOf = [&](int task) {
    std::vector<std::vector<int>> out;
    for (int c : mk.tasks[task].waits) out.push_back(mk.counters[c].producers);
    return out;
  };
  using Sets = std::vector<std::vector<int>>;
  // tile waits for all of pa and ps (the grid sync): one shared counter per node.
  for (int t = 3; t <= 6; ++t) CHECK(producersOf(t) == Sets{{0, 1}, {2}});
  CHECK(mk.tasks[3].waits == mk.tasks[6].waits);
  // rows i waits for tile (i,0), (i,1) and for ps (@after s).
  CHECK(producersOf(7) == Sets{{2}, {3, 4}});
  CHECK(producersOf(8) == Sets{{2}, {5, 6}});
  // The @after set {ps#1[0]} is the whole node: it shares the grid sync's counter.
  CHECK(mk.tasks[7].waits[0] == mk.tasks[3].waits[1]);
  CHECK(mk.counters[mk.tasks[7].waits[0]].why == "ps#1 task 0 -> sync grid");
  CHECK(mk.counters[mk.tasks[7].waits[1]].why == "tile#2 tasks 0..1 -> m[0..2, 0..4)");
  // clobber: WAW on tile (0,0) and (0,1), WAR on rows#3[0].
  CHECK(producersOf(9) == Sets{{3, 4}, {7}});
  CHECK(mk.counters[mk.tasks[9].waits[1]].why == "rows#3 task 0 -> overwrite read m[0..1, 0..4)");
  // last: the nodes since the previous grid sync (tile, rows, clobber), plus WAW on a from pa.
  CHECK(producersOf(10) == Sets{{0, 1}, {3, 4, 5, 6}, {7, 8}, {9}});

  SourceManager sources;
  DiagnosticEngine diags(sources);
  CHECK(verify(mk, diags));
  CHECK(messages(diags).empty());

  // Dropping clobber's WAR wait is caught.
  Megakernel bad = mk;
  bad.tasks[9].waits.pop_back();
  DiagnosticEngine d2(sources);
  CHECK_FALSE(verify(bad, d2));
  CHECK(messages(d2) == std::vector<std::string>{
                            "task clobber#4[0] writes m[0..1, 0..4) read by rows#3[0] but does not "
                            "wait for it"});
  // And its WAW wait.
  bad = mk;
  bad.tasks[9].waits.erase(bad.tasks[9].waits.begin());
  DiagnosticEngine d3(sources);
  CHECK_FALSE(verify(bad, d3));
  CHECK(messages(d3) ==
        std::vector<std::string>{
            "task clobber#4[0] writes m[0..1, 0..4) also written by tile#2[0,0] but does not wait for it",
            "task clobber#4[0] writes m[0..1, 0..4) also written by tile#2[0,1] but does not wait for it"});

  // A 2-D read partly covered: tile (0,1) no longer writes m[0..2, 2..4).
  bad = mk;
  bad.tasks[4].writes.clear();
  DiagnosticEngine d4(sources);
  CHECK_FALSE(verify(bad, d4));
  CHECK(messages(d4) == std::vector<std::string>{
                            "task rows#3[0] reads m[0..2, 0..4) but m[0..2, 2..4) is written by no "
                            "earlier task"});

  // Memory plan: one buffer per tensor in its arena.
  CHECK(mk.memory.weights.size() == 1);
  CHECK(mk.memory.weights[0].tensor == w);
  CHECK(mk.memory.weightBytes == 256);
  CHECK(mk.memory.state.size() == 1);
  CHECK(mk.memory.state[0].offset == 0);
  CHECK(mk.memory.activations.size() == 4);
  CHECK(mk.memory.activations[2].tensor == m);
  CHECK(mk.memory.activations[2].offset == 512);
  CHECK(mk.memory.activations[3].offset == 768);
}

TEST_CASE("schedule: many tasks stay fast and verified") {
  // A chain of 40 nodes x 256 tasks, each reading all of the previous output.
  GraphBuilder b;
  int prev = b.tensor("in", Tensor::Input, {1024});
  for (int l = 0; l < 40; ++l) {
    int next = b.tensor("h." + std::to_string(l), Tensor::Activation, {1024});
    b.node(func("step", {inParam("h", {1024}), outParam("o", {1024})}, {256}, i32Locals(4),
                store(1, sum(load(0, DType::F32, dim(constant(0), 1024))), dim(mul(taskIndex(0), constant(4)), 4))),
           {prev, next});
    prev = next;
  }
  Megakernel mk = lowering::schedule(b.g, TargetDesc{"h200", "sm_90a", 132, 227 * 1024, 32, 512, 4.8e12});
  CHECK(mk.tasks.size() == 40 * 256);
  CHECK(mk.counters.size() == 39);  // one whole-node counter per layer
  SourceManager sources;
  DiagnosticEngine diags(sources);
  CHECK(verify(mk, diags));
}
