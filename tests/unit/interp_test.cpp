// The CPU interpreter (interp/) on hand-built IR, and the safetensors / .npy I/O (runtime/).
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "interp/interp.h"
#include "runtime/npy.h"
#include "runtime/safetensors.h"
#include "ir_build.h"

using namespace mk;
using namespace mk::ir;
using namespace mk::ir::build;
namespace fs = std::filesystem;

namespace {

// produce(s: i32) -> x: f32[4], tasks t in 4: x[t] = t + s
// consume(x: f32[4]) -> y: f32[4], tasks 1:      y = x * 2
// Tasks 0..3 produce (signalling counter 0), task 4 consumes; the queues and the consumer's waits
// are the caller's.
Megakernel producerConsumer(std::vector<std::vector<int>> queues, bool consumerWaits) {
  auto produce = func("produce", {scalarParam("s"), outParam("x", {4})}, {4}, {},
                      store(1, binary(BinaryOp::Add, cast(taskIndex(0), DType::F32), cast(scalar(0), DType::F32), DType::F32),
                            dim(taskIndex(0), 0)));
  auto consume = func("consume", {inParam("x", {4}), outParam("y", {4})}, {1}, {},
                      store(1, binary(BinaryOp::Mul, load(0, DType::F32, dim(constant(0), 4)), constant(2, DType::F32), DType::F32),
                            dim(constant(0), 4)));

  Megakernel mk;
  mk.graph.tensors = {tensor(0, "x", Tensor::Activation, DType::F32, {4}), tensor(1, "y", Tensor::Activation, DType::F32, {4})};
  mk.graph.inputs = {StepInput{"s", DType::I32, -1}};
  mk.graph.outputs = {{"y", 1}};
  Node n0;
  n0.id = 0;
  n0.func = produce;
  n0.tensors = {-1, 0};
  n0.scalars = {ScalarArg{ScalarArg::Input, 0, 0}, ScalarArg{}};
  Node n1;
  n1.id = 1;
  n1.func = consume;
  n1.tensors = {0, 1};
  n1.scalars = {ScalarArg{}, ScalarArg{}};
  mk.graph.nodes.push_back(n0);
  mk.graph.nodes.push_back(n1);
  for (int t = 0; t < 4; ++t) mk.tasks.push_back(task(t, 0, {t}, {}, {0}));
  mk.tasks.push_back(task(4, 1, {0}, consumerWaits ? std::vector<int>{0} : std::vector<int>{}));
  Counter c;
  c.id = 0;
  c.producers = {0, 1, 2, 3};
  c.why = "consume reads x[0:4]";
  mk.counters.push_back(c);
  mk.queues = std::move(queues);
  return mk;
}

// A one-task megakernel over the given tensors and body (params bound to tensors 0..n-1).
Megakernel single(std::vector<Tensor> tensors, std::vector<Param> params, Block body, std::vector<Local> locals = {}) {
  auto fn = func("f", std::move(params), {1}, std::move(locals));
  fn->body = std::move(body);
  Megakernel mk;
  mk.graph.tensors = std::move(tensors);
  Node n;
  n.id = 0;
  n.func = fn;
  for (size_t i = 0; i < fn->params.size(); ++i) n.tensors.push_back(int(i));
  n.scalars.resize(fn->params.size());
  mk.graph.nodes.push_back(n);
  mk.tasks.push_back(task(0, 0, {0}));
  mk.queues = {{0}};
  return mk;
}

std::string message(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("mk_interp_test_" + std::to_string(getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string operator/(const std::string& f) const { return (path / f).string(); }
};

void writeBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}
// A safetensors file from a raw header and data section.
std::string rawSafetensors(const std::string& header, size_t dataBytes, uint64_t claimedLen = ~0ull) {
  uint64_t n = claimedLen == ~0ull ? header.size() : claimedLen;
  std::string out(8, '\0');
  std::memcpy(out.data(), &n, 8);
  return out + header + std::string(dataBytes, '\0');
}

}  // namespace

TEST_CASE("interp: bf16 and f16 rounding is round-to-nearest-even") {
  using interp::roundTo;
  CHECK(roundTo(DType::BF16, 1.0f + 0x1p-9f) == 1.0f);              // below half an ulp (2^-8)
  CHECK(roundTo(DType::BF16, 1.0f + 0x1p-8f) == 1.0f);              // a tie: to the even mantissa
  CHECK(roundTo(DType::BF16, 1.0f + 0x1p-7f + 0x1p-8f) == 1.0f + 0x1p-6f);  // a tie from odd: up
  CHECK(roundTo(DType::BF16, 1.0f + 0x1p-8f + 0x1p-20f) == 1.0f + 0x1p-7f);  // past the tie
  CHECK(roundTo(DType::BF16, -1.0f - 0x1p-9f) == -1.0f);
  CHECK(std::isinf(roundTo(DType::BF16, 3.4e38f)));
  CHECK(std::isnan(roundTo(DType::BF16, NAN)));
  CHECK(roundTo(DType::F16, 1.0f + 0x1p-11f) == 1.0f);              // f16 tie to even
  CHECK(roundTo(DType::F16, 1.0f + 0x1p-10f + 0x1p-11f) == 1.0f + 0x1p-9f);
  CHECK(roundTo(DType::F16, 65504.0f) == 65504.0f);
  CHECK(std::isinf(roundTo(DType::F16, 65520.0f)));                 // the tie above the max: inf
  CHECK(roundTo(DType::F16, 0x1p-24f) == 0x1p-24f);                 // smallest subnormal
  CHECK(roundTo(DType::F16, 0x1p-25f) == 0.0f);                     // tie to even (zero)
  CHECK(roundTo(DType::F16, 0x1.8p-24f) == 0x1p-23f);               // tie to even (2 x 2^-24)
  CHECK(roundTo(DType::F32, 1.0f + 0x1p-9f) == 1.0f + 0x1p-9f);

  // Expressions round to their own dtype: bf16 1 + 2^-9 is 1; the same sum in f32 is not.
  Block body;
  body.push_back(
      store(0, binary(BinaryOp::Add, constant(1, DType::BF16), constant(0x1p-9, DType::BF16), DType::BF16), dim(constant(0), 0)));
  body.push_back(store(1, binary(BinaryOp::Add, constant(1, DType::F32), constant(0x1p-9, DType::F32), DType::F32), dim(constant(0), 0)));
  // bf16 product of two bf16 values, then widened: 1.0078125 * 1.0078125 = 1.01568..., in bf16 1.015625.
  body.push_back(store(
      1, cast(binary(BinaryOp::Mul, constant(1.0078125, DType::BF16), constant(1.0078125, DType::BF16), DType::BF16), DType::F32),
      dim(constant(1), 0)));
  Megakernel mk = single({tensor(0, "a", Tensor::Activation, DType::BF16, {1}), tensor(1, "b", Tensor::Activation, DType::F32, {2})},
                         {outParam("a", {1}, DType::BF16), outParam("b", {2})}, std::move(body));
  interp::Interpreter in(mk);
  in.step({}, 0);
  CHECK(in.tensor(0)[0] == 1.0f);
  CHECK(in.tensor(1)[0] == 1.0f + 0x1p-9f);
  CHECK(in.tensor(1)[1] == 1.015625f);
}

TEST_CASE("interp: producer and consumer on two SMs agree under every interleaving") {
  Megakernel mk = producerConsumer({{0, 2, 4}, {1, 3}}, true);
  std::vector<std::vector<int>> orders;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    interp::Interpreter in(mk);
    for (int64_t s : {10, 20}) {  // two steps: the second waits for epoch 2 (count 8)
      in.step({s}, seed);
      CHECK(in.outputs().at("y") == std::vector<float>{2.0f * s, 2.0f * (s + 1), 2.0f * (s + 2), 2.0f * (s + 3)});
      CHECK(in.lastOrder().back() == 4);
    }
    CHECK(in.stepsRun() == 2);
    orders.push_back(in.lastOrder());
  }
  // The seeds do shuffle the SMs.
  bool varied = false;
  for (const auto& o : orders) varied |= o != orders[0];
  CHECK(varied);
}

TEST_CASE("interp: a missing wait changes the result under some interleaving") {
  Megakernel mk = producerConsumer({{0, 1, 2, 3}, {4}}, false);
  const std::vector<float> want{2, 4, 6, 8};
  int right = 0, wrong = 0;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    interp::Interpreter in(mk);
    in.step({1}, seed);
    (in.tensor(1) == want ? right : wrong)++;
  }
  CHECK(wrong > 0);
  CHECK(right > 0);
}

TEST_CASE("interp: a wait nobody can satisfy is reported as a deadlock") {
  // The consumer heads SM 1's queue, in front of two of the producers it waits for.
  Megakernel mk = producerConsumer({{0, 2}, {4, 1, 3}}, true);
  interp::Interpreter in(mk);
  std::string msg = message([&] { in.step({0}, 7); });
  CHECK(msg.find("deadlock in step 1") != std::string::npos);
  CHECK(msg.find("SM 1: task 4 (`consume`) waits on counter 0 (consume reads x[0:4]): expected 4, seen 2") != std::string::npos);

  // A task in no queue, or in two, is rejected up front.
  CHECK(message([&] { interp::Interpreter bad(producerConsumer({{0, 2, 4}, {1}}, true)); }).find("task 3 is in no SM's queue") !=
        std::string::npos);
  CHECK(message([&] { interp::Interpreter bad(producerConsumer({{0, 2, 4}, {1, 3, 0}}, true)); }).find("queued twice") !=
        std::string::npos);
}

TEST_CASE("interp: expressions, reductions and dot products") {
  // m: f32[2, 3] = [[1, 2, 3], [4, 5, 6]], v: f32[4] = [1, 3, 3, 2]; results into o: f32[16], k: i32[4].
  Block body;
  auto mload = [] { return load(0, DType::F32, dim(constant(0), 2), dim(constant(0), 3)); };
  auto vload = [] { return load(1, DType::F32, dim(constant(0), 4)); };
  auto ones = [](int64_t n) {
    auto e = constant(1, DType::F32);
    e->shape = {n};
    return e;
  };
  // rowdot -> o[0:2] = [6, 15]; coldot with [1, 1] -> o[2:5] = [5, 7, 9]
  body.push_back(store(2, ops(ExprKind::RowDot, DType::F32, {2}, mload(), ones(3)), dim(constant(0), 2)));
  body.push_back(store(2, ops(ExprKind::ColDot, DType::F32, {3}, mload(), ones(2)), dim(constant(2), 3)));
  // dot(v, v) = 23; sum 9; mean 2.25; max 3
  body.push_back(store(2, ops(ExprKind::Dot, DType::F32, {}, vload(), vload()), dim(constant(5), 0)));
  body.push_back(store(2, reduce(ReduceOp::Sum, vload(), DType::F32), dim(constant(6), 0)));
  body.push_back(store(2, reduce(ReduceOp::Mean, vload(), DType::F32), dim(constant(7), 0)));
  body.push_back(store(2, reduce(ReduceOp::Max, vload(), DType::F32), dim(constant(8), 0)));
  // select(iota(4) < 2, v, -v) -> o[9:13] = [1, 3, -3, -2]
  body.push_back(store(2,
                       ops(ExprKind::Select, DType::F32, {4}, binary(BinaryOp::Lt, iota(4), constant(2), DType::Bool), vload(),
                           unary(UnaryOp::Neg, vload(), DType::F32)),
                       dim(constant(9), 4)));
  // concat(v[0:1], v[3:4]) via slices of a local -> o[13:15] = [1, 2]
  body.push_back(let(0, vload()));
  auto slice = [](int64_t at) {
    auto e = expr(ExprKind::Slice, DType::F32, {1});
    e->operands.push_back(local(0, DType::F32, {4}));
    e->region.push_back(dim(constant(double(at)), 1));
    return e;
  };
  body.push_back(store(2, ops(ExprKind::Concat, DType::F32, {2}, slice(0), slice(3)), dim(constant(13), 2)));
  // f32 -> i32 truncates toward zero: o[15] = -2.7 as i32 = -2
  body.push_back(store(2, cast(cast(constant(-2.7, DType::F32), DType::I32), DType::F32), dim(constant(15), 0)));
  // Integers: argmax = 1 (the first of the two 3s), -7 / 2 = -3, -7 % 2 = -1, i32 wraps.
  body.push_back(store(3, reduce(ReduceOp::Argmax, vload(), DType::I32), dim(constant(0), 0)));
  body.push_back(store(3, binary(BinaryOp::Div, constant(-7), constant(2), DType::I32), dim(constant(1), 0)));
  body.push_back(store(3, binary(BinaryOp::Mod, constant(-7), constant(2), DType::I32), dim(constant(2), 0)));
  body.push_back(store(3, binary(BinaryOp::Add, constant(2147483647), constant(1), DType::I32), dim(constant(3), 0)));

  Megakernel mk = single({tensor(0, "m", Tensor::Activation, DType::F32, {2, 3}), tensor(1, "v", Tensor::Activation, DType::F32, {4}),
                          tensor(2, "o", Tensor::Activation, DType::F32, {16}), tensor(3, "k", Tensor::Activation, DType::I32, {4})},
                         {inParam("m", {2, 3}), inParam("v", {4}), outParam("o", {16}), outParam("k", {4}, DType::I32)},
                         std::move(body), {Local{"t", DType::F32, {4}}});
  interp::Interpreter in(mk);
  in.setTensor(0, {1, 2, 3, 4, 5, 6});
  in.setTensor(1, {1, 3, 3, 2});
  in.step({}, 0);
  CHECK(in.tensor(2) == std::vector<float>{6, 15, 5, 7, 9, 23, 9, 2.25f, 3, 1, 3, -3, -2, 1, 2, -2});
  CHECK(in.tensorInts(3) == std::vector<int32_t>{1, -3, -1, INT32_MIN});
}

TEST_CASE("interp: row reductions and repeated rows and columns") {
  // m: f32[2, 3] = [[1, 5, 3], [4, -2, 6]]; o: f32[7, 3].
  Block body;
  auto mload = [] { return load(0, DType::F32, dim(constant(0), 2), dim(constant(0), 3)); };
  auto rowReduce = [&](ReduceOp op) {
    auto e = ops(ExprKind::RowReduce, DType::F32, {2}, mload());
    e->reduce = op;
    return e;
  };
  // row_sum [9, 8], row_max [5, 6], row_min [1, -2] -> o[0..2, 0:2]
  body.push_back(store(1, rowReduce(ReduceOp::Sum), dim(constant(0), 0), dim(constant(0), 2)));
  body.push_back(store(1, rowReduce(ReduceOp::Max), dim(constant(1), 0), dim(constant(0), 2)));
  body.push_back(store(1, rowReduce(ReduceOp::Min), dim(constant(2), 0), dim(constant(0), 2)));
  // m - repeat_cols(row_max(m), 3): [[-4, 0, -2], [-2, -8, 0]] -> o[3:5]
  body.push_back(store(1,
                       binary(BinaryOp::Sub, mload(), ops(ExprKind::RepeatCols, DType::F32, {2, 3}, rowReduce(ReduceOp::Max)),
                              DType::F32),
                       dim(constant(3), 2), dim(constant(0), 3)));
  // repeat_rows(iota(3), 2) as f32: [[0, 1, 2], [0, 1, 2]] -> o[5:7]
  body.push_back(store(1, cast(ops(ExprKind::RepeatRows, DType::I32, {2, 3}, iota(3)), DType::F32),
                       dim(constant(5), 2), dim(constant(0), 3)));
  Megakernel mk = single({tensor(0, "m", Tensor::Activation, DType::F32, {2, 3}), tensor(1, "o", Tensor::Activation, DType::F32, {7, 3})},
                         {inParam("m", {2, 3}), outParam("o", {7, 3})}, std::move(body));
  interp::Interpreter in(mk);
  in.setTensor(0, {1, 5, 3, 4, -2, 6});
  in.step({}, 0);
  CHECK(in.tensor(1) == std::vector<float>{9, 8, 0, 5, 6, 0, 1, -2, 0, -4, 0, -2, -2, -8, 0, 0, 1, 2, 0, 1, 2});
}

TEST_CASE("interp: mma and mma_nt against a float64 reference, bf16 and f32 operands") {
  // a: [M, K], b: [K, N], bt: [N, K] (b transposed), non-square; c = mma(a, b), d = mma_nt(a, bt).
  const int64_t M = 3, K = 37, N = 5;
  std::mt19937 rng(18);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (DType dt : {DType::BF16, DType::F32}) {
    CAPTURE(dtypeName(dt));
    std::vector<float> a(size_t(M * K)), b(size_t(K * N)), bt(size_t(N * K));
    for (float& x : a) x = interp::roundTo(dt, u(rng));
    for (float& x : b) x = interp::roundTo(dt, u(rng));
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < K; ++k) bt[size_t(n * K + k)] = b[size_t(k * N + n)];
    Block body;
    auto la = [&] { return load(0, dt, dim(constant(0), M), dim(constant(0), K)); };
    body.push_back(store(3, ops(ExprKind::Mma, DType::F32, {M, N}, la(), load(1, dt, dim(constant(0), K), dim(constant(0), N))),
                         dim(constant(0), M), dim(constant(0), N)));
    body.push_back(store(4, ops(ExprKind::MmaNt, DType::F32, {M, N}, la(), load(2, dt, dim(constant(0), N), dim(constant(0), K))),
                         dim(constant(0), M), dim(constant(0), N)));
    Megakernel mk = single({tensor(0, "a", Tensor::Activation, dt, {M, K}), tensor(1, "b", Tensor::Activation, dt, {K, N}),
                            tensor(2, "bt", Tensor::Activation, dt, {N, K}), tensor(3, "c", Tensor::Activation, DType::F32, {M, N}),
                            tensor(4, "d", Tensor::Activation, DType::F32, {M, N})},
                           {inParam("a", {M, K}, dt), inParam("b", {K, N}, dt), inParam("bt", {N, K}, dt), outParam("c", {M, N}),
                            outParam("d", {M, N})},
                           std::move(body));
    interp::Interpreter in(mk);
    in.setTensor(0, a);
    in.setTensor(1, b);
    in.setTensor(2, bt);
    in.step({}, 0);
    const std::vector<float> c = in.tensor(3), d = in.tensor(4);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double ref = 0, mag = 0;
        for (int64_t k = 0; k < K; ++k) {
          ref += double(a[size_t(m * K + k)]) * double(b[size_t(k * N + n)]);
          mag += std::fabs(double(a[size_t(m * K + k)]) * double(b[size_t(k * N + n)]));
        }
        // K sequential f32 fma roundings, each within 2^-24 of the partial sum's magnitude.
        const double bound = double(K) * 0x1p-24 * mag;
        CAPTURE(m);
        CAPTURE(n);
        CHECK(std::fabs(double(c[size_t(m * N + n)]) - ref) <= bound);
        // The same products in the same order: bit-identical.
        CHECK(c[size_t(m * N + n)] == d[size_t(m * N + n)]);
      }
  }
  // The order is k increasing from 0.0f: 2^24 + 1 + 1 - 2^24 is 0 in f32 summed that way (each 1
  // is lost to rounding), 2 (exact) summed k decreasing.
  Block body;
  body.push_back(store(2, ops(ExprKind::Mma, DType::F32, {1, 1}, load(0, DType::F32, dim(constant(0), 1), dim(constant(0), 4)),
                              load(1, DType::F32, dim(constant(0), 4), dim(constant(0), 1))),
                       dim(constant(0), 1), dim(constant(0), 1)));
  Megakernel mk = single({tensor(0, "a", Tensor::Activation, DType::F32, {1, 4}), tensor(1, "b", Tensor::Activation, DType::F32, {4, 1}),
                          tensor(2, "c", Tensor::Activation, DType::F32, {1, 1})},
                         {inParam("a", {1, 4}), inParam("b", {4, 1}), outParam("c", {1, 1})}, std::move(body));
  interp::Interpreter in(mk);
  in.setTensor(0, {16777216.0f, 1.0f, 1.0f, -16777216.0f});
  in.setTensor(1, {1, 1, 1, 1});
  in.step({}, 0);
  CHECK(in.tensor(2) == std::vector<float>{0.0f});
}

TEST_CASE("interp: regions are bounds-checked, declared accesses optionally enforced") {
  // x: f32[4]; task t stores x[t * 2 : +2] for t in 0..3: task 2 runs past the end.
  auto fn = func("spill", {outParam("x", {4})}, {3}, {},
                 store(0, constant(1, DType::F32), dim(binary(BinaryOp::Mul, taskIndex(0), constant(2), DType::I32), 2)));
  Megakernel mk;
  mk.graph.tensors = {tensor(0, "x", Tensor::Activation, DType::F32, {4})};
  Node n;
  n.func = fn;
  n.tensors = {0};
  n.scalars.resize(1);
  mk.graph.nodes.push_back(n);
  for (int t = 0; t < 3; ++t) mk.tasks.push_back(task(t, 0, {t}));
  mk.queues = {{0, 1, 2}};
  interp::Interpreter in(mk);
  std::string msg = message([&] { in.step({}, 0); });
  CHECK(msg.find("task 2 (`spill` [2], node 0, SM 0, step 1)") != std::string::npos);
  CHECK(msg.find("store to 'x'[4:+2] is outside its shape [4]") != std::string::npos);

  // Declared writes: task 0 says it writes x[0:1] but writes x[0:2].
  mk.tasks.resize(1);
  mk.queues = {{0}};
  mk.tasks[0].writes = {Region{0, {{0, 1}}}};
  interp::Interpreter strict(mk);
  strict.step({}, 0);  // unchecked by default
  strict.setCheckAccesses(true);
  msg = message([&] { strict.step({}, 0); });
  CHECK(msg.find("store to 'x'[0:2] is outside the task's declared writes of it: [0:1]") != std::string::npos);
  mk.tasks[0].writes = {Region{0, {{0, 1}}}, Region{0, {{1, 3}}}};  // covered by two regions together
  interp::Interpreter ok(mk);
  ok.setCheckAccesses(true);
  ok.step({}, 0);
  CHECK(ok.tensor(0) == std::vector<float>{1, 1, 0, 0});
}

TEST_CASE("runtime: safetensors round trip, one file and shards") {
  TempDir dir;
  using namespace mk::runtime;
  std::vector<float> a{1.0f, -2.5f, 1.0f + 0x1p-9f, 3.0f, 0.0f, 65504.0f};
  std::vector<TensorData> ts = {{"a.bf16", "BF16", {2, 3}, encodeFloats(a, "BF16")},
                                {"b.f32", "F32", {6}, encodeFloats(a, "F32")},
                                {"c.f16", "F16", {3, 2}, encodeFloats(a, "F16")},
                                {"s", "I32", {}, {7, 0, 0, 0}}};
  writeSafetensors(dir / "m.safetensors", ts, {{"format", "pt"}, {"note", "quote \" and \\"}});
  auto f = SafetensorsFile::open(dir / "m.safetensors");
  CHECK(f.metadata().at("note") == "quote \" and \\");
  REQUIRE(f.tensors().size() == 4);
  const TensorInfo* t = f.find("a.bf16");
  REQUIRE(t);
  CHECK(t->dtype == "BF16");
  CHECK(t->shape == std::vector<int64_t>{2, 3});
  CHECK(f.bytes(*t).size() == 12);
  auto set = SafetensorsSet::open(dir / "m.safetensors");
  CHECK(toDoubles(*set.find("a.bf16")) == std::vector<double>{1, -2.5, 1, 3, 0, 65536});  // bf16 rounding
  CHECK(toDoubles(*set.find("b.f32"))[2] == double(1.0f + 0x1p-9f));
  CHECK(toDoubles(*set.find("c.f16"))[5] == 65504);
  CHECK(toDoubles(*set.find("s")) == std::vector<double>{7});
  CHECK(!set.find("nope"));

  // Two shards and an index.
  fs::create_directories(dir.path / "sharded");
  writeSafetensors(dir / "sharded/model-00001-of-00002.safetensors", {ts[0], ts[1]});
  writeSafetensors(dir / "sharded/model-00002-of-00002.safetensors", {ts[2]});
  writeBytes(dir / "sharded/model.safetensors.index.json",
             R"({"metadata": {"total_size": 36}, "weight_map": {"a.bf16": "model-00001-of-00002.safetensors",
                 "b.f32": "model-00001-of-00002.safetensors", "c.f16": "model-00002-of-00002.safetensors"}})");
  auto sh = SafetensorsSet::open(dir / "sharded");
  CHECK(sh.names() == std::vector<std::string>{"a.bf16", "b.f32", "c.f16"});
  CHECK(sh.files().size() == 2);
  CHECK(sh.find("c.f16")->file->path().find("00002") != std::string::npos);
  CHECK(toDoubles(*sh.find("b.f32")) == toDoubles(*set.find("b.f32")));
  SafetensorsSet copy = sh;  // copies stay valid
  CHECK(copy.find("a.bf16")->info->shape == std::vector<int64_t>{2, 3});

  // An index naming a tensor its shard lacks.
  writeBytes(dir / "sharded/model.safetensors.index.json", R"({"weight_map": {"zz": "model-00002-of-00002.safetensors"}})");
  CHECK(message([&] { SafetensorsSet::open(dir / "sharded"); }).find("tensor \"zz\" listed in") != std::string::npos);
}

TEST_CASE("runtime: malformed safetensors files are clear errors") {
  TempDir dir;
  using mk::runtime::SafetensorsFile;
  auto err = [&](const std::string& bytes) {
    writeBytes(dir / "bad.safetensors", bytes);
    return message([&] { SafetensorsFile::open(dir / "bad.safetensors"); });
  };
  auto has = [](const std::string& msg, const std::string& part) {
    INFO(msg);
    CHECK(msg.find(part) != std::string::npos);
  };
  const std::string good = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  CHECK(err(rawSafetensors(good, 8)) == "(no error)");
  has(err("abc"), "too small");
  has(err(rawSafetensors(good, 8).substr(0, 30)), "runs past the end of the file");
  has(err(rawSafetensors(good, 8, 1ull << 62)), "runs past the end");
  has(err(rawSafetensors(good, 4)), "tensor \"w\": data_offsets end 8 is past the data section (4 bytes)");  // truncated data
  has(err(rawSafetensors(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8],}})", 8)), "malformed JSON header");
  has(err(rawSafetensors(R"({"w": tru})", 0)), "malformed JSON header");
  has(err(rawSafetensors(R"({"w":{"dtype":"F32"}} x)", 0)), "unexpected text after the JSON value");
  has(err(rawSafetensors(R"({"a":1,"a":2})", 0)), "duplicate key \"a\"");
  has(err(rawSafetensors(R"(["w"])", 0)), "not a JSON object");
  has(err(rawSafetensors(R"({"w":{"dtype":"F33","shape":[2],"data_offsets":[0,8]}})", 8)), "tensor \"w\": unknown dtype \"F33\"");
  has(err(rawSafetensors(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8)),
      "tensor \"w\": shape [3] of F32 does not match data_offsets [0, 8]");
  has(err(rawSafetensors(R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8)), "negative dimension");
  has(err(rawSafetensors(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", 8)), "reversed");
  has(err(rawSafetensors(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 12)), "cover 8 bytes of a 12-byte data section");
  has(err(rawSafetensors(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 4)),
      "overlap or leave a hole");
  has(err(rawSafetensors(R"({"w":{"dtype":"F32","shape":[4611686018427387904, 4],"data_offsets":[0,8]}})", 8)), "does not match");
  has(err(rawSafetensors("{\"w\":\"\\ud800\"}", 0)), "lone surrogate");
  has(err(rawSafetensors(std::string(100, '[') + std::string(100, ']'), 0)), "nesting too deep");
  has(err(rawSafetensors(R"({"__metadata__":{"k":1}})", 0)), "__metadata__ value \"k\" is not a string");
  has(message([&] { SafetensorsFile::open(dir / "missing.safetensors"); }), "missing.safetensors: cannot open");
  // Escapes decode: a tensor named with \u00e9 and \n.
  writeBytes(dir / "esc.safetensors", rawSafetensors(R"({"\u00e9\n":{"dtype":"BF16","shape":[],"data_offsets":[0,2]}})", 2));
  CHECK(SafetensorsFile::open(dir / "esc.safetensors").find("\xc3\xa9\n"));
}

TEST_CASE("runtime: npy round trip") {
  TempDir dir;
  std::vector<float> v{1.5f, -2.0f, 3.25f, 0.0f, 1e30f, -0.0f};
  mk::runtime::writeNpy(dir / "a.npy", 2, 3, v);
  CHECK(fs::file_size(dir / "a.npy") % 64 == 24 % 64);  // 64-byte aligned header, then 24 data bytes
  auto a = mk::runtime::readNpy(dir / "a.npy");
  CHECK(a.shape == std::vector<int64_t>{2, 3});
  CHECK(a.data == v);
  mk::runtime::writeNpy(dir / "b.npy", {5}, v.data());
  CHECK(mk::runtime::readNpy(dir / "b.npy").shape == std::vector<int64_t>{5});
  writeBytes(dir / "c.npy", std::string("\x93NUMPY\x01\x00\x20\x00", 10) + "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }");
  CHECK(message([&] { mk::runtime::readNpy(dir / "c.npy"); }).find("is not float32") != std::string::npos);
  CHECK(message([&] { mk::runtime::writeNpy(dir / "d.npy", 2, 2, v); }).find("6 values for shape [2, 2]") != std::string::npos);
}

TEST_CASE("interp: weights assembled from safetensors (interleave, concat, tied head)") {
  TempDir dir;
  using namespace mk::runtime;
  auto rows = [](float base, int n, int cols) {
    std::vector<float> v;
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < cols; ++c) v.push_back(base + float(r) + 0.5f * float(c));
    return v;
  };
  writeSafetensors(dir / "w.safetensors",
                   {{"gate", "F32", {4, 2}, encodeFloats(rows(0, 4, 2), "F32")},
                    {"up", "BF16", {4, 2}, encodeFloats(rows(100, 4, 2), "BF16")},
                    {"model.embed_tokens.weight", "F32", {2, 2}, encodeFloats({1.0f + 0x1p-9f, 2, 3, 4}, "F32")},
                    {"norm", "F32", {3}, encodeFloats({1, 2, 3}, "F32")}});
  auto set = SafetensorsSet::open(dir / "w.safetensors");
  Megakernel mk;
  mk.graph.tensors = {tensor(0, "gate_up", Tensor::Weight, DType::F32, {8, 2}), tensor(1, "cat", Tensor::Weight, DType::F32, {8, 2}),
                      tensor(2, "lm_head", Tensor::Weight, DType::BF16, {2, 2})};
  mk.graph.tensors[0].layout = Layout{Layout::Interleave, {2}};
  mk.graph.tensors[0].sources = {"gate", "up"};
  mk.graph.tensors[1].layout = Layout{Layout::Tiled, {2, 2}};
  mk.graph.tensors[1].sources = {"gate", "up"};
  mk.graph.tensors[2].sources = {"lm_head.weight"};
  interp::Interpreter in(mk);
  in.loadWeights(set);
  auto g = rows(0, 4, 2), u = rows(100, 4, 2);
  auto rowOf = [](const std::vector<float>& v, int r) { return std::vector<float>{v[2 * r], v[2 * r + 1]}; };
  std::vector<float> want;
  for (int r : {0, 1}) for (float x : rowOf(g, r)) want.push_back(x);
  for (int r : {0, 1}) for (float x : rowOf(u, r)) want.push_back(x);
  for (int r : {2, 3}) for (float x : rowOf(g, r)) want.push_back(x);
  for (int r : {2, 3}) for (float x : rowOf(u, r)) want.push_back(x);
  CHECK(in.tensor(0) == want);  // [gate 0..2, up 0..2, gate 2..4, up 2..4]
  std::vector<float> cat = g;
  cat.insert(cat.end(), u.begin(), u.end());
  CHECK(in.tensor(1) == cat);
  CHECK(in.tensor(2) == std::vector<float>{1, 2, 3, 4});  // tied to the embedding, rounded to bf16

  // Errors name the weight, the source and both shapes.
  Megakernel bad;
  bad.graph.tensors = {tensor(0, "n", Tensor::Weight, DType::BF16, {4})};
  bad.graph.tensors[0].sources = {"norm"};
  CHECK(message([&] { interp::Interpreter(bad).loadWeights(set); })
            .find("weight 'n' (bf16[4]): \"norm\" in " + (dir / "w.safetensors") + " is F32[3]; expected shape [4]") != std::string::npos);
  bad.graph.tensors[0].sources = {"missing"};
  CHECK(message([&] { interp::Interpreter(bad).loadWeights(set); }).find("the checkpoint has no tensor \"missing\"") != std::string::npos);
  bad.graph.tensors[0] = tensor(0, "gu", Tensor::Weight, DType::F32, {6, 2});
  bad.graph.tensors[0].layout = Layout{Layout::Interleave, {2}};
  bad.graph.tensors[0].sources = {"gate", "up"};
  CHECK(message([&] { interp::Interpreter(bad).loadWeights(set); }).find("needs 3 rows from each") != std::string::npos);

  // Random weights: deterministic, gains near 1, matrices within 1/sqrt(cols), rounded.
  interp::Interpreter r1(mk), r2(mk);
  r1.randomWeights(42);
  r2.randomWeights(42);
  CHECK(r1.tensor(0) == r2.tensor(0));
  for (float x : r1.tensor(0)) CHECK(std::fabs(x) <= 1 / std::sqrt(2.0f));
  for (float x : r1.tensor(2)) CHECK(interp::roundTo(DType::BF16, x) == x);
  r2.randomWeights(43);
  CHECK(r1.tensor(0) != r2.tensor(0));
}
