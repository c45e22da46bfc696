// The metadata sidecar (backend::metadataJson): the exact text for a small hand-made kernel (key
// order and formatting are a contract with the runtime), and its consistency with the memory plan
// of a real program.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "backend/backend.h"
#include "compiler/compile.h"
#include "tiny_llama.h"

using namespace mk;

namespace {

ir::Tensor tensor(int id, std::string name, ir::Tensor::Kind kind, DType t, ir::Shape shape) {
  ir::Tensor x;
  x.id = id;
  x.name = std::move(name);
  x.kind = kind;
  x.dtype = t;
  x.shape = std::move(shape);
  return x;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("metadataJson: exact text of a small kernel") {
  ir::Megakernel k;
  k.graph.program = "models/\"odd\".mk";
  k.graph.config = "tiny";
  k.graph.configValues = {{"layers", "1"}, {"eps", "1e-05"}, {"tied", "false"}};
  k.target = {"h200", "sm_90a", 2, 227 * 1024, 32, 512, 4.8e12};
  ir::Tensor w = tensor(0, "layer[0].w", ir::Tensor::Weight, DType::BF16, {32, 16});
  w.layout = {ir::Layout::Tiled, {16, 16}};
  w.sources = {"model.layers.0.a.weight", "model.layers.0.b.weight"};
  w.declaredAt = "models/m.mk:3:12";
  k.graph.tensors = {w, tensor(1, "layer[0].kv", ir::Tensor::State, DType::F32, {2, 8}),
                     tensor(2, "x", ir::Tensor::Input, DType::F32, {16}),
                     tensor(3, "y.0", ir::Tensor::Activation, DType::BF16, {32}),
                     tensor(4, "loose", ir::Tensor::Activation, DType::I32, {})};
  k.graph.inputs = {{"pos", DType::I32, -1}, {"x", DType::F32, 2}};
  k.graph.outputs = {{"y", 3}};
  // Tensor 4 has no buffer: the sidecar says so with nulls rather than inventing one.
  k.memory.weights = {{0, 0, 1024}};
  k.memory.state = {{1, 0, 64}};
  k.memory.activations = {{2, 0, 64}, {3, 256, 64}};
  k.memory.weightBytes = 1024;
  k.memory.stateBytes = 256;
  k.memory.activationBytes = 512;

  backend::LaunchInfo launch;
  launch.arch = "sm_90a";
  launch.grid = 2;
  launch.block = 544;
  launch.computeThreads = 512;
  launch.loaderWarp = true;
  launch.ringSlots = 4;
  launch.ringSlotBytes = 8192;
  launch.dynamicSmemBytes = 40000;
  launch.syncCounters = 3;
  launch.params = {"weights", "state", "activations", "sync", "error", "inputs", "epoch", "timeout"};

  const char* expected = R"json({
  "format": "mkdsl-kernel-metadata",
  "version": 1,
  "program": "models/\"odd\".mk",
  "config": "tiny",
  "config_values": {"layers": 1, "eps": 1e-05, "tied": false},
  "target": "h200",
  "arch": "sm_90a",
  "entry": "mk_step",
  "grid": 2,
  "block": 544,
  "compute_threads": 512,
  "loader_warp": true,
  "ring_slots": 4,
  "ring_slot_bytes": 8192,
  "dynamic_smem_bytes": 40000,
  "sync_counters": 3,
  "sync_bytes": 12,
  "error_words": 8,
  "params": ["weights", "state", "activations", "sync", "error", "inputs", "epoch", "timeout"],
  "arenas": {"weights": 1024, "state": 256, "activations": 512},
  "shared_tensors": 2,
  "tensors": [
    {"name": "layer[0].w", "kind": "weight", "dtype": "bf16", "shape": [32, 16], "layout": "tiled(16, 16)", "arena": "weights", "offset": 0, "bytes": 1024, "sources": ["model.layers.0.a.weight", "model.layers.0.b.weight"], "declared_at": "models/m.mk:3:12"},
    {"name": "layer[0].kv", "kind": "state", "dtype": "f32", "shape": [2, 8], "layout": "row_major", "arena": "state", "offset": 0, "bytes": 64},
    {"name": "x", "kind": "input", "dtype": "f32", "shape": [16], "layout": "row_major", "arena": "activations", "offset": 0, "bytes": 64},
    {"name": "y.0", "kind": "activation", "dtype": "bf16", "shape": [32], "layout": "row_major", "arena": "activations", "offset": 256, "bytes": 64},
    {"name": "loose", "kind": "activation", "dtype": "i32", "shape": [], "layout": "row_major", "arena": null, "offset": null, "bytes": 4}
  ],
  "inputs": [{"name": "pos", "dtype": "i32", "tensor": null, "bound": null, "role": null}, {"name": "x", "dtype": "f32", "tensor": "x", "bound": null, "role": null}],
  "outputs": [{"name": "y", "tensor": "y.0", "role": null}]
}
)json";
  CHECK(backend::metadataJson({k}, {launch}) == expected);

  SUBCASE("an empty kernel is still well-formed") {
    ir::Megakernel empty;
    std::string json = backend::metadataJson({empty}, std::vector<backend::LaunchInfo>(1));
    CHECK(json.find("\"tensors\": [],\n") != std::string::npos);
    CHECK(json.find("\"inputs\": [],\n") != std::string::npos);
    CHECK(json.find("\"outputs\": []\n}") != std::string::npos);
  }
}

TEST_CASE("metadataJson: the tiny Llama's sidecar matches its memory plan") {
  CompileOptions options;
  options.check.stdlibDir = MK_STDLIB_DIR;
  options.sms = 4;
  std::string path = std::string(MK_SOURCE_DIR) + "/examples/llama_tiny.mk";
  SourceManager sm;
  DiagnosticEngine diags(sm);
  FileId root = sm.add(path, readFile(path));
  auto steps = scheduleProgram(sm, diags, root, options);
  REQUIRE(steps);
  const ir::Megakernel* kernel = &steps->front();
  // The decode step alone: its lines are the whole document.
  backend::LaunchInfo launch;
  launch.arch = kernel->target.arch;
  std::string json = backend::metadataJson({steps->front()}, {launch});

  const ir::Graph& g = kernel->graph;
  // One line per tensor, each with its arena, offset and size from the plan.
  CHECK(count(json, "{\"name\": ") == g.tensors.size() + g.inputs.size() + g.outputs.size());
  for (const auto* arena : {&kernel->memory.weights, &kernel->memory.state, &kernel->memory.activations})
    for (const ir::Buffer& b : *arena) {
      const ir::Tensor& t = g.tensors[b.tensor];
      std::string entry = "{\"name\": \"" + t.name + "\"";
      size_t at = json.find(entry);
      REQUIRE_MESSAGE(at != std::string::npos, t.name);
      std::string line = json.substr(at, json.find('\n', at) - at);
      CHECK_MESSAGE(line.find("\"offset\": " + std::to_string(b.offset) + ",") != std::string::npos, line);
      CHECK_MESSAGE(line.find("\"bytes\": " + std::to_string(b.bytes)) != std::string::npos, line);
      CHECK_MESSAGE((line.find("\"sources\": [\"") != std::string::npos) == (t.kind == ir::Tensor::Weight), line);
    }
  CHECK(json.find("\"arenas\": {\"weights\": " + std::to_string(kernel->memory.weightBytes) + ", ") != std::string::npos);
  CHECK(json.find("\"target\": \"h200\"") != std::string::npos);
  // The token indexes the embedding's 256 rows; the position the caches' 64 (max_seq).
  CHECK(json.find("{\"name\": \"token\", \"dtype\": \"i32\", \"tensor\": null, \"bound\": 256, \"role\": \"token\"}") != std::string::npos);
  CHECK(json.find("{\"name\": \"pos\", \"dtype\": \"i32\", \"tensor\": null, \"bound\": 64, \"role\": \"position\"}") != std::string::npos);
  CHECK(json.find("\"max_seq\": 64") != std::string::npos);
  CHECK(json.find("\"declared_at\": \"") != std::string::npos);
  CHECK(json.find("\"model.layers.1.mlp.down_proj.weight\"") != std::string::npos);
}

TEST_CASE("metadataJson: input and output roles come from what the program does, not from names") {
  // The tiny Llama with its step's inputs renamed and swapped: p is still the position (it indexes
  // the caches), t the token (it indexes the embedding's rows).
  std::string source = mk::testing::tinyLlamaSource();
  auto sub = [&](const std::string& from, const std::string& to) {
    const size_t at = source.find(from);
    REQUIRE_MESSAGE(at != std::string::npos, from);
    source.replace(at, from.size(), to);
  };
  sub("step decode(token: i32, pos: i32) -> (logits: f32[vocab], next: i32)",
      "step decode(p: i32, t: i32) -> (scores: f32[vocab], choice: i32)");
  sub("embed(embed_tokens, token)", "embed(embed_tokens, t)");
  sub("llama_block(x, pos,", "llama_block(x, p,");
  CompileOptions options;
  options.check.stdlibDir = MK_STDLIB_DIR;
  std::string diags;
  auto out = compileSource("renamed.mk", source, options, &diags);
  REQUIRE_MESSAGE(out, diags);
  const abi::KernelMetadata m = abi::parseMetadata(out->metadataJson, "renamed.meta.json");
  REQUIRE(m.inputs.size() == 2);
  CHECK(m.inputs[0].name == "p");
  CHECK(m.inputs[0].role == abi::Role::Position);
  CHECK(m.inputs[1].name == "t");
  CHECK(m.inputs[1].role == abi::Role::Token);
  REQUIRE(m.outputs.size() == 2);
  CHECK(m.outputs[0].role == abi::Role::Logits);
  CHECK(m.outputs[1].role == abi::Role::NextToken);
}

TEST_CASE("metadataJson: an input that starts regions at an offset is bounded for the largest one, and the prefill roles") {
  // The prefill's pos0 starts the caches' rows at pos0 + b * BT for chunk rows 0 .. chunk - 1, so
  // pos0 + chunk must fit max_seq (64): the bound is 64 - 16 + 1. `last` picks one of the chunk's
  // 16 rows; every element of the tokens tensor indexes the embedding's 256 rows.
  const std::string path = std::string(MK_SOURCE_DIR) + "/examples/llama_tiny.mk";
  CompileOptions options;
  options.check.stdlibDir = MK_STDLIB_DIR;
  std::string diags;
  auto out = compileSource(path, readFile(path), options, &diags);
  REQUIRE_MESSAGE(out, diags);
  const abi::KernelMetadata program = abi::parseMetadata(out->metadataJson, "llama_tiny.meta.json");
  REQUIRE(program.otherSteps.size() == 2);
  const abi::KernelMetadata& m = program.otherSteps[0];
  CHECK(m.step == "prefill");
  REQUIRE(m.inputs.size() == 3);
  CHECK(m.inputs[0].name == "tokens");
  CHECK(m.inputs[0].bound == 256);
  CHECK(m.inputs[0].role == abi::Role::Tokens);
  CHECK(m.inputs[1].name == "pos0");
  CHECK(m.inputs[1].bound == 49);
  CHECK(m.inputs[1].role == abi::Role::Position);
  CHECK(m.inputs[2].name == "last");
  CHECK(m.inputs[2].bound == 16);
  CHECK(m.inputs[2].role == abi::Role::Row);
}

TEST_CASE("metadataText: a program of two steps, its exact text and its round trip") {
  // The decode step is the top level; the prefill step shares its weight and state (the first two
  // tensors) and has its own entry, launch, activations arena, tensors, inputs, outputs and trace.
  auto tensorMeta = [](std::string name, abi::TensorMeta::Kind kind, DType dtype, std::vector<int64_t> shape,
                       abi::Arena arena, uint64_t offset, uint64_t bytes) {
    abi::TensorMeta t;
    t.name = std::move(name);
    t.kind = kind;
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.arena = arena;
    t.offset = offset;
    t.bytes = bytes;
    return t;
  };
  abi::KernelMetadata m;
  m.program = "two.mk";
  m.config = "tiny";
  m.target = "h200";
  m.arch = "sm_90a";
  m.step = "decode";
  m.configValues = {{"max_seq", 64, false, "64"}};
  m.grid = 2;
  m.block = 128;
  m.computeThreads = 128;
  m.dynamicSmemBytes = 1024;
  m.syncCounters = 3;
  m.params = abi::kernelParamNames(false);
  m.arenaBytes[int(abi::Arena::Weights)] = 1024;
  m.arenaBytes[int(abi::Arena::State)] = 512;
  m.arenaBytes[int(abi::Arena::Activations)] = 256;
  abi::TensorMeta w = tensorMeta("w", abi::TensorMeta::Weight, DType::BF16, {16, 16}, abi::Arena::Weights, 0, 512);
  w.sources = {"model.w"};
  w.declaredAt = "two.mk:3:5";
  abi::TensorMeta kv = tensorMeta("kv", abi::TensorMeta::State, DType::F32, {64, 2}, abi::Arena::State, 0, 512);
  kv.declaredAt = "two.mk:4:5";
  m.sharedTensors = 2;
  m.tensors = {w, kv, tensorMeta("y", abi::TensorMeta::Activation, DType::F32, {16}, abi::Arena::Activations, 0, 64)};
  m.inputs = {{"pos", DType::I32, -1, 64, abi::Role::Position}};
  m.outputs = {{"y", 2, abi::Role::Logits}};

  abi::KernelMetadata p;
  static_cast<abi::Launch&>(p) = static_cast<const abi::Launch&>(m);
  p.program = m.program, p.config = m.config, p.target = m.target, p.configValues = m.configValues;
  p.step = "prefill";
  p.entry = "mk_step_prefill";
  p.block = 256;
  p.computeThreads = 256;
  p.syncCounters = 7;
  p.params = abi::kernelParamNames(true);
  p.arenaBytes[int(abi::Arena::Weights)] = 1024;
  p.arenaBytes[int(abi::Arena::State)] = 512;
  p.arenaBytes[int(abi::Arena::Activations)] = 4096;
  p.sharedTensors = 2;
  p.tensors = {w, kv, tensorMeta("tokens", abi::TensorMeta::Input, DType::I32, {16}, abi::Arena::Activations, 0, 64),
               tensorMeta("h", abi::TensorMeta::Activation, DType::F32, {16, 16}, abi::Arena::Activations, 1024, 1024)};
  p.inputs = {{"tokens", DType::I32, 2, 256, abi::Role::None}, {"pos0", DType::I32, -1, 49, abi::Role::Position}};
  p.outputs = {{"h", 3, abi::Role::None}};
  p.trace = abi::TraceInfo{4, {{"embed#0", "embed", 4, 512, true}}};
  m.otherSteps = {p};

  const std::string text = abi::metadataText(m);
  const char* expected = R"json({
  "format": "mkdsl-kernel-metadata",
  "version": 1,
  "program": "two.mk",
  "config": "tiny",
  "config_values": {"max_seq": 64},
  "target": "h200",
  "arch": "sm_90a",
  "step": "decode",
  "entry": "mk_step",
  "grid": 2,
  "block": 128,
  "compute_threads": 128,
  "loader_warp": false,
  "ring_slots": 0,
  "ring_slot_bytes": 0,
  "dynamic_smem_bytes": 1024,
  "sync_counters": 3,
  "sync_bytes": 12,
  "error_words": 8,
  "params": ["weights", "state", "activations", "sync", "error", "inputs", "epoch", "timeout"],
  "arenas": {"weights": 1024, "state": 512, "activations": 256},
  "shared_tensors": 2,
  "tensors": [
    {"name": "w", "kind": "weight", "dtype": "bf16", "shape": [16, 16], "layout": "row_major", "arena": "weights", "offset": 0, "bytes": 512, "sources": ["model.w"], "declared_at": "two.mk:3:5"},
    {"name": "kv", "kind": "state", "dtype": "f32", "shape": [64, 2], "layout": "row_major", "arena": "state", "offset": 0, "bytes": 512, "declared_at": "two.mk:4:5"},
    {"name": "y", "kind": "activation", "dtype": "f32", "shape": [16], "layout": "row_major", "arena": "activations", "offset": 0, "bytes": 64}
  ],
  "inputs": [{"name": "pos", "dtype": "i32", "tensor": null, "bound": 64, "role": "position"}],
  "outputs": [{"name": "y", "tensor": "y", "role": "logits"}],
  "steps": [
    {
      "step": "prefill",
      "entry": "mk_step_prefill",
      "grid": 2,
      "block": 256,
      "compute_threads": 256,
      "loader_warp": false,
      "ring_slots": 0,
      "ring_slot_bytes": 0,
      "dynamic_smem_bytes": 1024,
      "sync_counters": 7,
      "sync_bytes": 28,
      "error_words": 8,
      "params": ["weights", "state", "activations", "sync", "error", "inputs", "epoch", "timeout", "trace"],
      "arenas": {"activations": 4096},
      "tensors": [
        {"name": "tokens", "kind": "input", "dtype": "i32", "shape": [16], "layout": "row_major", "arena": "activations", "offset": 0, "bytes": 64},
        {"name": "h", "kind": "activation", "dtype": "f32", "shape": [16, 16], "layout": "row_major", "arena": "activations", "offset": 1024, "bytes": 1024}
      ],
      "inputs": [{"name": "tokens", "dtype": "i32", "tensor": "tokens", "bound": 256, "role": null}, {"name": "pos0", "dtype": "i32", "tensor": null, "bound": 49, "role": "position"}],
      "trace": {"records": 4, "record_words": 8, "nodes": [
          {"name": "embed#0", "op": "embed", "tasks": 4, "bytes": 512, "bytes_exact": true}
        ]},
      "outputs": [{"name": "h", "tensor": "h", "role": null}]
    }
  ]
}
)json";
  CHECK(text == expected);
  CHECK(abi::parseJson(text).kind == abi::JsonValue::Object);

  // Read back: the same text, and each step a complete view over the shared tensors.
  const abi::KernelMetadata r = abi::parseMetadata(text, "two.meta.json");
  CHECK(abi::metadataText(r) == text);
  CHECK(r.step == "decode");
  CHECK(r.sharedTensors == 2);
  CHECK(r.find("y") == 2);
  REQUIRE(r.otherSteps.size() == 1);
  const abi::KernelMetadata& rp = r.otherSteps[0];
  CHECK(rp.step == "prefill");
  CHECK(rp.entry == "mk_step_prefill");
  CHECK(rp.program == "two.mk");
  CHECK(rp.config == "tiny");
  CHECK(rp.target == "h200");
  CHECK(rp.arch == "sm_90a");
  CHECK(rp.configValue("max_seq"));
  CHECK(rp.sharedTensors == 2);
  CHECK(rp.otherSteps.empty());
  CHECK(rp.arenaBytes[int(abi::Arena::Weights)] == 1024);
  CHECK(rp.arenaBytes[int(abi::Arena::State)] == 512);
  CHECK(rp.arenaBytes[int(abi::Arena::Activations)] == 4096);
  REQUIRE(rp.tensors.size() == 4);
  CHECK(rp.tensors[0].name == "w");
  CHECK(rp.tensors[0].sources == std::vector<std::string>{"model.w"});
  CHECK(rp.tensors[1].declaredAt == "two.mk:4:5");
  CHECK(rp.find("kv") == 1);
  CHECK(rp.find("h") == 3);
  CHECK(rp.find("y") == -1);  // the decode step's own
  REQUIRE(rp.inputs.size() == 2);
  CHECK(rp.inputs[0].tensor == 2);
  CHECK(rp.inputs[1].bound == 49);
  REQUIRE(rp.outputs.size() == 1);
  CHECK(rp.outputs[0].tensor == 3);
  REQUIRE(rp.trace);
  CHECK(rp.trace->records == 4);
  CHECK(!r.trace);
  // Its own view is the text of a program of one step, as an older reader would run it.
  abi::KernelMetadata alone = rp;
  alone.sharedTensors = 0;
  CHECK(abi::parseMetadata(abi::metadataText(alone), "prefill.meta.json").entry == "mk_step_prefill");

  SUBCASE("metadata of one step keeps its text: no \"step\" when unnamed, no \"shared_tensors\" when 0") {
    abi::KernelMetadata one = m;
    one.otherSteps.clear();
    one.step.clear();
    one.sharedTensors = 0;
    const std::string t = abi::metadataText(one);
    CHECK(t.find("\"step") == std::string::npos);
    CHECK(t.find("\"shared_tensors\"") == std::string::npos);
    CHECK(abi::metadataText(abi::parseMetadata(t, "one.meta.json")) == t);
  }
}
