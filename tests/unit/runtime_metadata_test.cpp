// The runtime's metadata reader (abi/metadata.h, abi/json.h): the sidecar the compiler
// writes, parsed back field by field, and every kind of malformed file rejected with a message
// that says where.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "abi/json.h"
#include "compiler/compile.h"
#include "runtime/metadata.h"
#include "tiny_llama.h"

using namespace mk::runtime;
using namespace mk::abi;
namespace fs = std::filesystem;

namespace {

const std::string kGood = R"J({
  "format": "mkdsl-kernel-metadata",
  "version": 1,
  "program": "t.mk",
  "config": "c",
  "target": "h200",
  "arch": "sm_90a",
  "entry": "mk_step",
  "grid": 4,
  "block": 160,
  "compute_threads": 128,
  "loader_warp": true,
  "ring_slots": 2,
  "ring_slot_bytes": 256,
  "dynamic_smem_bytes": 1024,
  "sync_counters": 3,
  "sync_bytes": 12,
  "error_words": 8,
  "params": ["weights", "state", "activations", "sync", "error", "inputs", "epoch", "timeout"],
  "arenas": {"weights": 1024, "state": 256, "activations": 512},
  "tensors": [
    {"name": "w", "kind": "weight", "dtype": "bf16", "shape": [4, 8], "layout": "tiled(2, 8)", "arena": "weights", "offset": 0, "bytes": 64, "sources": ["a", "b"]},
    {"name": "kv", "kind": "state", "dtype": "f32", "shape": [2, 4], "layout": "padded(5)", "arena": "state", "offset": 0, "bytes": 40},
    {"name": "x", "kind": "input", "dtype": "i32", "shape": [], "layout": "row_major", "arena": "activations", "offset": 0, "bytes": 4},
    {"name": "y", "kind": "activation", "dtype": "f32", "shape": [8], "layout": "row_major", "arena": "activations", "offset": 256, "bytes": 32}
  ],
  "inputs": [{"name": "token", "dtype": "i32", "tensor": null}, {"name": "x", "dtype": "i32", "tensor": "x"}],
  "outputs": [{"name": "y", "tensor": "y"}]
}
)J";

std::string parseError(const std::string& text) {
  try {
    parseMetadata(text, "k.meta.json");
  } catch (const MetadataError& e) {
    return e.what();
  }
  return "(no error)";
}

// kGood with `from` (which must occur exactly once) replaced by `to`.
std::string mutated(const std::string& from, const std::string& to) {
  size_t at = kGood.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  REQUIRE_MESSAGE(kGood.find(from, at + 1) == std::string::npos, from);
  std::string s = kGood;
  s.replace(at, from.size(), to);
  return s;
}

}  // namespace

TEST_CASE("runtime json: strict values and integer conversions") {
  JsonValue v = parseJson(R"({"a": [1, -2, 3.5, 1e3, "x\n", true, null], "b": {}})");
  REQUIRE(v.get("a"));
  const auto& a = v.get("a")->items;
  CHECK(jsonInt64(a[0]) == 1);
  CHECK(jsonInt64(a[1]) == -2);
  CHECK(!jsonUint64(a[1]));
  CHECK(!jsonInt64(a[2]));
  CHECK(!jsonInt64(a[3]));
  CHECK(a[4].text == "x\n");
  CHECK(!v.get("c"));
  CHECK(jsonInt64(parseJson("9223372036854775807")) == INT64_MAX);
  CHECK(jsonInt64(parseJson("-9223372036854775808")) == INT64_MIN);
  CHECK(!jsonInt64(parseJson("9223372036854775808")));
  CHECK(jsonUint64(parseJson("18446744073709551615")) == UINT64_MAX);
  CHECK(!jsonUint64(parseJson("18446744073709551616")));
  for (const char* bad : {"", "{", "[1,]", "{\"a\":1,}", "{\"a\":1 \"b\":2}", "01", "1.", "-", "tru", "\"\\x\"", "[1] 2",
                          "{\"a\":1,\"a\":2}", "\"\\ud800\"",
                          "\"\xff\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "\"\xc3\""}) {
    bool threw = false;
    try {
      parseJson(bad);
    } catch (const JsonError&) {
      threw = true;
    }
    CHECK_MESSAGE(threw, bad);
  }
  try {
    parseJson("[1, 2,]");
  } catch (const JsonError& e) {
    CHECK(e.offset() == 6);
  }
  CHECK(parseJson("\"\xc3\xa9\xf0\x9f\x98\x80\"").text == "\xc3\xa9\xf0\x9f\x98\x80");  // valid UTF-8 kept
  size_t badByte = 0;
  try {
    parseJson("{\"id\": \"a\xff\"}");
  } catch (const JsonError& e) {
    badByte = e.offset();
  }
  CHECK(badByte == 9);
  CHECK(jsonQuote("a\"b\\\n\x01") == "\"a\\\"b\\\\\\n\\u0001\"");
  CHECK(jsonQuote("\xff\xc3\xa9") == "\"\\ufffd\xc3\xa9\"");  // invalid UTF-8 replaced, valid kept
}

TEST_CASE("runtime metadata: a good file, field by field") {
  KernelMetadata m = parseMetadata(kGood, "k.meta.json");
  CHECK(m.program == "t.mk");
  CHECK(m.arch == "sm_90a");
  CHECK(m.entry == "mk_step");
  CHECK(m.grid == 4);
  CHECK(m.block == 160);
  CHECK(m.computeThreads == 128);
  CHECK(m.loaderWarp);
  CHECK(m.ringSlots == 2);
  CHECK(m.ringSlotBytes == 256);
  CHECK(m.dynamicSmemBytes == 1024);
  CHECK(m.syncCounters == 3);
  CHECK(m.errorWords == 8);
  CHECK(m.arenaBytes[0] == 1024);
  CHECK(m.arenaBytes[1] == 256);
  CHECK(m.arenaBytes[2] == 512);
  REQUIRE(m.tensors.size() == 4);
  const TensorMeta& w = m.tensors[0];
  CHECK(w.kind == TensorMeta::Weight);
  CHECK(w.dtype == mk::DType::BF16);
  CHECK(w.shape == std::vector<int64_t>{4, 8});
  CHECK(w.layout == Layout{Layout::Tiled, {2, 8}});
  CHECK(w.arena == Arena::Weights);
  CHECK(w.sources == std::vector<std::string>{"a", "b"});
  CHECK(m.tensors[1].storageBytes() == 40);  // padded(5): 2 rows of 5 f32
  CHECK(m.tensors[2].shape.empty());
  CHECK(m.find("y") == 3);
  CHECK(m.find("nope") == -1);
  REQUIRE(m.inputs.size() == 2);
  CHECK(m.inputs[0].tensor == -1);
  CHECK(m.inputs[1].tensor == 2);
  REQUIRE(m.outputs.size() == 1);
  CHECK(m.outputs[0].tensor == 3);
  CHECK(m.inputs[0].role == mk::abi::Role::None);  // "role" is optional
  // Roles: null or a name the kind allows.
  CHECK(parseMetadata(mutated(R"("tensor": null})", R"("tensor": null, "role": "token"})"), "k.json").inputs[0].role ==
        mk::abi::Role::Token);
  CHECK(parseMetadata(mutated(R"("tensor": null})", R"("tensor": null, "role": "position"})"), "k.json").inputs[0].role ==
        mk::abi::Role::Position);
  CHECK(parseMetadata(mutated(R"({"name": "y", "tensor": "y"})", R"({"name": "y", "tensor": "y", "role": "logits"})"),
                      "k.json")
            .outputs[0]
            .role == mk::abi::Role::Logits);
  auto roleError = [](const std::string& from, const std::string& to) { return parseError(mutated(from, to)); };
  CHECK(roleError(R"("tensor": null})", R"("tensor": null, "role": "logits"})") ==
        "k.meta.json: malformed metadata: \"inputs\"[0]: role \"logits\" is not \"token\" or \"position\" or \"tokens\" or \"row\" (or null)");
  CHECK(roleError(R"({"name": "y", "tensor": "y"})", R"({"name": "y", "tensor": "y", "role": "token"})") ==
        "k.meta.json: malformed metadata: \"outputs\"[0]: role \"token\" is not \"logits\" or \"next_token\" (or null)");
  CHECK(roleError(R"("tensor": null})", R"("tensor": null, "role": 3})").find("\"inputs\"[0].role is") != std::string::npos);
  // Optional fields may be absent, unknown ones are ignored.
  CHECK(parseError(mutated(R"("compute_threads": 128,)", "")) == "(no error)");
  CHECK(parseError(mutated(R"("sync_bytes": 12,)", R"("a_future_field": {"x": [1]},)")) == "(no error)");
  CHECK(parseError(mutated(R"(, "tensor": null})", "}")) == "(no error)");
}

TEST_CASE("runtime metadata: every malformed case is a clear error") {
  auto has = [](const std::string& msg, const std::string& part) {
    INFO(msg);
    CHECK(msg.find(part) != std::string::npos);
    CHECK(msg.rfind("k.meta.json: ", 0) == 0);  // every message starts with the file
  };
  // Not JSON / not metadata.
  has(parseError(""), "malformed JSON at byte 0");
  has(parseError(kGood.substr(0, kGood.size() / 2)), "malformed JSON");
  has(parseError(mutated(R"("grid": 4,)", R"("grid": 4,,)")), "malformed JSON");
  has(parseError(mutated(R"("outputs": [{"name": "y", "tensor": "y"}])", R"("outputs": [{"name": "y", "tensor": "y"},])")),
      "malformed JSON");
  has(parseError("[1]"), "the document is an array, not an object");
  has(parseError(mutated(R"("format": "mkdsl-kernel-metadata")", R"("format": "other")")), "not mkdsl kernel metadata");
  has(parseError(mutated(R"("version": 1)", R"("version": 2)")), "metadata version 2 is not supported");
  has(parseError(mutated(R"("program": "t.mk",)", R"("program": "t.mk", "program": "u.mk",)")), "duplicate key \"program\"");
  // Launch fields.
  has(parseError(mutated(R"("arch": "sm_90a",)", "")), "missing \"arch\"");
  has(parseError(mutated(R"("arch": "sm_90a")", R"("arch": "")")), "\"arch\" is empty");
  has(parseError(mutated(R"("entry": "mk_step")", R"("entry": 3)")), "\"entry\" is a number, not a string");
  has(parseError(mutated(R"("grid": 4)", R"("grid": "4")")), "\"grid\" is a string, not an integer");
  has(parseError(mutated(R"("grid": 4)", R"("grid": 0)")), "\"grid\" is 0; expected 1 to");
  has(parseError(mutated(R"("grid": 4)", R"("grid": 4.5)")), "\"grid\" is 4.5, not an integer");
  has(parseError(mutated(R"("block": 160)", R"("block": 2048)")), "\"block\" is 2048; expected 1 to 1024");
  has(parseError(mutated(R"("compute_threads": 128)", R"("compute_threads": 999)")), "\"compute_threads\" is 999");
  has(parseError(mutated(R"("loader_warp": true)", R"("loader_warp": 1)")), "\"loader_warp\" is a number, not true or false");
  has(parseError(mutated(R"("dynamic_smem_bytes": 1024)", R"("dynamic_smem_bytes": -1)")), "\"dynamic_smem_bytes\" is -1");
  has(parseError(mutated(R"("dynamic_smem_bytes": 1024,)", "")), "missing \"dynamic_smem_bytes\"");
  has(parseError(mutated(R"("sync_bytes": 12)", R"("sync_bytes": 16)")), "\"sync_bytes\" is 16 but 3 u32 counters take 12");
  has(parseError(mutated(R"("error_words": 8)", R"("error_words": 4)")), "\"error_words\" is 4; expected 8 to");
  has(parseError(mutated(R"("inputs", "epoch")", R"("epoch", "inputs")")), "this runtime passes (weights, state, activations");
  has(parseError(mutated(R"(, "timeout"])", "]")), "the kernel takes parameters");
  has(parseError(mutated(R"("params": [)", R"("params": [1, )")), "\"params\"[0] is a number");
  // Arenas.
  has(parseError(mutated(R"("arenas": {)", R"("arenas": {"scratch": 1, )")), "unknown arena \"scratch\"");
  has(parseError(mutated(R"("state": 256, )", "")), "\"arenas\": missing \"state\"");
  has(parseError(mutated(R"("activations": 512})", R"("activations": -512})")), "\"arenas\".activations is -512");
  has(parseError(mutated(R"("arenas": {"weights": 1024, "state": 256, "activations": 512})", R"("arenas": [])")),
      "\"arenas\" is an array, not an object");
  // Tensors.
  has(parseError(mutated(R"("tensors": [)", R"("tensors": [7, )")), "\"tensors\"[0] is a number, not an object");
  has(parseError(mutated(R"({"name": "kv", )", "{")), "\"tensors\"[1]: missing \"name\"");
  has(parseError(mutated(R"({"name": "kv", )", R"({"name": "w", )")), "(\"w\"): a second tensor of this name");
  has(parseError(mutated(R"("kind": "state")", R"("kind": "scratch")")), "(\"kv\"): kind \"scratch\" is not weight");
  has(parseError(mutated(R"("dtype": "f32", "shape": [2, 4])", R"("dtype": "f64", "shape": [2, 4])")),
      "(\"kv\"): dtype \"f64\" is not bf16");
  has(parseError(mutated(R"("shape": [2, 4])", R"("shape": [2, -4])")), "\"tensors\"[1] (\"kv\").shape[1] is -4");
  has(parseError(mutated(R"("shape": [2, 4])", R"("shape": "2x4")")), ".shape is a string, not an array");
  has(parseError(mutated(R"("shape": [2, 4])", R"("shape": [1099511627776, 1099511627776])")), "is too large");
  has(parseError(mutated(R"J("layout": "padded(5)")J", R"J("layout": "padded")J")), "layout \"padded\" is not row_major");
  has(parseError(mutated(R"J("layout": "padded(5)")J", R"J("layout": "padded(3)")J")), "the pitch is smaller");
  has(parseError(mutated(R"J("layout": "tiled(2, 8)")J", R"J("layout": "tiled(3, 8)")J")), "the tile does not divide");
  has(parseError(mutated(R"J("layout": "tiled(2, 8)")J", R"J("layout": "swizzle(48)")J")), "32, 64 or 128");
  has(parseError(mutated(R"("shape": [8], "layout": "row_major")", R"("shape": [8], "layout": "col_major")")),
      "col_major needs a rank-2 tensor");
  has(parseError(mutated(R"("arena": "state")", R"("arena": null)")), "(\"kv\"): no arena");
  has(parseError(mutated(R"("arena": "state")", R"("arena": "heap")")), "arena \"heap\" is not weights");
  has(parseError(mutated(R"("arena": "state", "offset": 0)", R"("arena": "state", "offset": null)")), "no offset");
  has(parseError(mutated(R"("offset": 0, "bytes": 40)", R"("offset": 0, "bytes": 32)")),
      "32 bytes are too few for f32[2, 4] padded(5) (40 bytes)");
  has(parseError(mutated(R"("offset": 256, "bytes": 32)", R"("offset": 496, "bytes": 32)")),
      "bytes 496 .. 528 lie outside the activations arena (512 bytes)");
  has(parseError(mutated(R"("offset": 256, "bytes": 32)", R"("offset": 18446744073709551615, "bytes": 32)")),
      ".offset is 18446744073709551615, not an integer");
  has(parseError(mutated(R"("offset": 256, "bytes": 32)", R"("offset": 258, "bytes": 32)")), "not aligned to its 4-byte elements");
  has(parseError(mutated(R"(, "sources": ["a", "b"])", "")), "(\"w\"): missing \"sources\"");
  has(parseError(mutated(R"("sources": ["a", "b"])", R"("sources": ["a", 2])")), "(\"w\").sources[1] is a number");
  has(parseError(mutated(R"J("layout": "tiled(2, 8)", "arena": "weights")J", R"J("layout": "tiled(2, 8)", "arena": "state")J")),
      "a weight outside the weights arena");
  // Inputs and outputs.
  has(parseError(mutated(R"("tensor": "x"})", R"("tensor": "z"})")), "\"inputs\"[1].tensor names \"z\", which is not in \"tensors\"");
  has(parseError(mutated(R"({"name": "x", "dtype": "i32", "tensor": "x"})", R"({"name": "token", "dtype": "i32"})")),
      "a second input named \"token\"");
  has(parseError(mutated(R"({"name": "token", "dtype": "i32")", R"({"name": "token", "dtype": "u8")")),
      "\"inputs\"[0]: dtype \"u8\"");
  has(parseError(mutated(R"({"name": "y", "tensor": "y"})", R"({"name": "y"})")), "\"outputs\"[0]: missing \"tensor\"");
  has(parseError(mutated(R"({"name": "y", "tensor": "y"})", R"({"name": "y", "tensor": null})")),
      "\"outputs\"[0].tensor is null, not a string");
  has(parseError(mutated(R"("outputs": [)", R"("outputs": [{"name": "y", "tensor": "x"}, )")), "a second output named \"y\"");
  has(parseError(mutated(R"("inputs": [)", R"("inputz": [)")), "missing \"inputs\"");
}

TEST_CASE("runtime metadata: files") {
  const fs::path dir = fs::temp_directory_path() / ("mk_runtime_meta_" + std::to_string(getpid()));
  fs::create_directories(dir);
  auto msg = [](const std::string& path) {
    try {
      readMetadata(path);
    } catch (const MetadataError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  std::ofstream((dir / "good.meta.json").string()) << kGood;
  CHECK(msg((dir / "good.meta.json").string()) == "(no error)");
  CHECK(msg((dir / "missing.meta.json").string()).find("missing.meta.json: cannot open: No such file") != std::string::npos);
  CHECK(msg(dir.string()).find("not a regular file") != std::string::npos);
  std::ofstream((dir / "empty.meta.json").string()).flush();
  CHECK(msg((dir / "empty.meta.json").string()).find("empty.meta.json: malformed JSON at byte 0") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("runtime metadata: what the compiler writes for the tiny Llama parses back exactly") {
  std::string diags;
  auto out = mk::testing::compileTinyLlama(false, &diags);
  REQUIRE_MESSAGE(out, diags);
  KernelMetadata m = parseMetadata(out->metadataJson, "tiny.meta.json");
  const auto& launch = out->artifact.launch();
  const auto& g = out->kernel().graph;
  CHECK(m.arch == launch.arch);
  CHECK(m.entry == launch.entry);
  CHECK(m.grid == launch.grid);
  CHECK(m.block == launch.block);
  CHECK(m.dynamicSmemBytes == launch.dynamicSmemBytes);
  CHECK(m.syncCounters == launch.syncCounters);
  CHECK(m.errorWords == launch.errorWords);
  CHECK(kernelParamNames(false) == launch.params);
  CHECK(m.params == launch.params);
  CHECK(m.arenaBytes[0] == uint64_t(out->kernel().memory.weightBytes));
  CHECK(m.arenaBytes[1] == uint64_t(out->kernel().memory.stateBytes));
  CHECK(m.arenaBytes[2] == uint64_t(out->kernel().memory.activationBytes));
  REQUIRE(m.tensors.size() == g.tensors.size());
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    INFO(g.tensors[i].name);
    CHECK(m.tensors[i].name == g.tensors[i].name);
    CHECK(m.tensors[i].shape == g.tensors[i].shape);
    CHECK(m.tensors[i].layout.str() == g.tensors[i].layout.str());
    CHECK(std::string(dtypeName(m.tensors[i].dtype)) == mk::dtypeName(g.tensors[i].dtype));
    CHECK(m.tensors[i].sources == g.tensors[i].sources);
    CHECK(m.tensors[i].storageBytes() == uint64_t(g.tensors[i].bytes()));
  }
  for (const auto* buffers : {&out->kernel().memory.weights, &out->kernel().memory.state, &out->kernel().memory.activations})
    for (const auto& b : *buffers) CHECK(m.tensors[size_t(b.tensor)].offset == uint64_t(b.offset));
  REQUIRE(m.inputs.size() == g.inputs.size());
  for (size_t i = 0; i < g.inputs.size(); ++i) CHECK(m.inputs[i].name == g.inputs[i].name);
  CHECK(m.inputs[0].role == mk::abi::Role::Token);
  CHECK(m.inputs[1].role == mk::abi::Role::Position);
  REQUIRE(m.outputs.size() == g.outputs.size());
  CHECK(m.outputs[0].role == mk::abi::Role::Logits);
  CHECK(m.outputs[1].role == mk::abi::Role::NextToken);
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    CHECK(m.outputs[i].name == g.outputs[i].first);
    CHECK(m.outputs[i].tensor == g.outputs[i].second);
  }
}

TEST_CASE("runtime metadata: config values, declaration sites and input bounds") {
  // Older metadata has none of them: no config values, no declarations, no bounds.
  KernelMetadata old = parseMetadata(kGood, "k.meta.json");
  CHECK(old.configValues.empty());
  CHECK(old.tensors[0].declaredAt.empty());
  CHECK(old.inputs[0].bound == -1);
  CHECK(inputRangeProblem(old, 0, 1 << 30).empty());

  std::string text = kGood;
  auto sub = [&](const std::string& from, const std::string& to) {
    size_t at = text.find(from);
    REQUIRE_MESSAGE(at != std::string::npos, from);
    text.replace(at, from.size(), to);
  };
  sub("\"config\": \"c\",",
      "\"config\": \"c\", \"config_values\": {\"vocab\": 4, \"slots\": 2, \"ctx_len\": 2, \"eps\": 1e-05, \"tied\": true},");
  sub("\"sources\": [\"a\", \"b\"]", "\"sources\": [\"a\", \"b\"], \"declared_at\": \"t.mk:3:8\"");
  sub("\"arena\": \"state\", \"offset\": 0, \"bytes\": 40", "\"arena\": \"state\", \"offset\": 0, \"bytes\": 40, \"declared_at\": \"t.mk:5:9\"");
  sub("\"tensor\": null}", "\"tensor\": null, \"bound\": 4, \"role\": \"token\"}");
  sub("\"tensor\": \"x\"}", "\"tensor\": \"x\", \"bound\": 2}");
  KernelMetadata m = parseMetadata(text, "k.meta.json");
  REQUIRE(m.configValues.size() == 5);
  CHECK(m.configValues[0].name == "vocab");
  CHECK(m.configValues[0].value == 4);
  CHECK(m.configValues[3].value == doctest::Approx(1e-5));
  CHECK(m.configValues[3].text == "1e-05");
  CHECK(m.configValues[4].isBool);
  CHECK(m.configValues[4].value == 1);
  REQUIRE(m.configValue("slots") != nullptr);
  CHECK(m.configValue("slots")->value == 2);
  CHECK(m.configValue("nope") == nullptr);
  CHECK(m.tensors[0].declaredAt == "t.mk:3:8");
  CHECK(m.tensors[1].declaredAt == "t.mk:5:9");
  CHECK(m.inputs[0].bound == 4);
  CHECK(m.inputs[1].bound == 2);

  // Out-of-bound values, in words: w has 4 rows (the token indexes them: its role says so, and kv
  // too has a dimension of 4); kv's dim 0 is 2 (a state, not named like a cache); configs that
  // equal the bound are named, hinted names first.
  CHECK(inputRangeProblem(m, 0, 3).empty());
  CHECK(inputRangeProblem(m, 0, 4) == "token 4 is past the rows of 'w': ids 0 .. 3 (vocab = 4)");
  CHECK(inputRangeProblem(m, 0, -1) == "token -1 is outside the rows of 'w': ids 0 .. 3 (vocab = 4)");
  CHECK(inputRangeProblem(m, 1, 2) == "x 2 is past the state 'kv' (f32[2, 4]): positions 0 .. 1 (ctx_len = 2)");
  CHECK(configNamesFor(m, 2) == "slots = ctx_len = 2");
  CHECK(configNamesFor(m, 2, {"len"}) == "ctx_len = 2");
  CHECK(configNamesFor(m, 7).empty());
  CHECK(inputRangeProblem(m, 5, 100).empty());  // no such input

  // Malformed: every value type is checked.
  auto bad = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    return parseError(t);
  };
  CHECK(bad("\"slots\": 2", "\"slots\": \"2\"") ==
        "k.meta.json: malformed metadata: \"config_values\".slots is a string, not a number or true/false");
  CHECK(bad("{\"vocab\": 4, \"slots\": 2, \"ctx_len\": 2, \"eps\": 1e-05, \"tied\": true}", "[4]") ==
        "k.meta.json: malformed metadata: \"config_values\" is an array, not an object");
  CHECK(bad("\"bound\": 4", "\"bound\": -4") == "k.meta.json: malformed metadata: \"inputs\"[0].bound is -4; expected at least 0");
  CHECK(bad("\"bound\": 4", "\"bound\": \"4\"").find("\"inputs\"[0].bound is a string, not an integer") != std::string::npos);
  CHECK(bad("\"declared_at\": \"t.mk:3:8\"", "\"declared_at\": 3").find(".declared_at is a number, not a string") !=
        std::string::npos);
  CHECK(parseMetadata(mutated("\"tensor\": null}", "\"tensor\": null, \"bound\": null}"), "k").inputs[0].bound == -1);
}

TEST_CASE("runtime metadata: the tiny Llama's config values, declarations and bounds") {
  const std::string src = mk::testing::tinyLlamaSource();
  mk::CompileOptions o;
  o.check.stdlibDir = MK_STDLIB_DIR;
  std::string diags;
  // Under its path in the repository: declared_at names it.
  auto out = mk::compileSource("examples/llama_tiny.mk", src, o, &diags);
  REQUIRE_MESSAGE(out, diags);
  KernelMetadata m = parseMetadata(out->metadataJson, "tiny.meta.json");
  REQUIRE(m.configValue("vocab") != nullptr);
  CHECK(m.configValue("vocab")->value == 256);
  CHECK(m.configValue("max_seq")->value == 64);
  CHECK(m.configValue("rms_eps")->value == doctest::Approx(1e-5));
  REQUIRE(m.inputs.size() == 2);
  CHECK(m.inputs[0].bound == 256);
  CHECK(m.inputs[1].bound == 64);
  // The declaration's line: where `weight embed_tokens` and `state k_cache` stand in the file.
  std::istringstream lines(src);
  std::string line;
  std::string embedAt, cacheAt;
  for (int n = 1; std::getline(lines, line); ++n) {
    if (size_t c = line.find("weight embed_tokens:"); c != std::string::npos)
      embedAt = "examples/llama_tiny.mk:" + std::to_string(n) + ":" + std::to_string(c + 8);
    if (size_t c = line.find("state k_cache:"); c != std::string::npos)
      cacheAt = "examples/llama_tiny.mk:" + std::to_string(n) + ":" + std::to_string(c + 7);
  }
  CHECK(m.tensors[size_t(m.find("embed_tokens"))].declaredAt == embedAt);
  CHECK(m.tensors[size_t(m.find("layer[1].k_cache"))].declaredAt == cacheAt);
  for (const TensorMeta& t : m.tensors)
    if (t.kind == TensorMeta::Weight || t.kind == TensorMeta::State) CHECK_MESSAGE(!t.declaredAt.empty(), t.name);
  CHECK(inputRangeProblem(m, 1, 64) == "pos 64 is past the KV cache: positions 0 .. 63 (max_seq = 64)");
  CHECK(inputRangeProblem(m, 0, 300) == "token 300 is past the rows of 'embed_tokens': ids 0 .. 255 (vocab = 256)");
}

TEST_CASE("runtime metadata: a traced kernel's \"trace\", and every malformed one") {
  // An untraced kernel has none.
  CHECK(!parseMetadata(kGood, "k.meta.json").trace);

  std::string text = kGood;
  auto sub = [](std::string& t, const std::string& from, const std::string& to) {
    size_t at = t.find(from);
    REQUIRE_MESSAGE(at != std::string::npos, from);
    t.replace(at, from.size(), to);
  };
  sub(text, "\"epoch\", \"timeout\"],", "\"epoch\", \"timeout\", \"trace\"],");
  const std::string field =
      "\"trace\": {\"records\": 3, \"record_words\": 8, \"nodes\": [{\"name\": \"a#0\", \"op\": \"a\", \"tasks\": 2, \"bytes\": 64}, "
      "{\"name\": \"b#1\", \"op\": \"b\", \"tasks\": 1, \"bytes\": 8}]}";
  sub(text, "\"arenas\":", field + ",\n  \"arenas\":");
  KernelMetadata m = parseMetadata(text, "k.meta.json");
  REQUIRE(m.trace);
  CHECK(m.trace->records == 3);
  REQUIRE(m.trace->nodes.size() == 2);
  CHECK(m.trace->nodes[0].name == "a#0");
  CHECK(m.trace->nodes[0].op == "a");
  CHECK(m.trace->nodes[0].tasks == 2);
  CHECK(m.trace->nodes[0].bytes == 64);
  CHECK(m.trace->nodes[1].name == "b#1");
  CHECK(parseMetadata(mutated("\"arenas\":", "\"trace_v2\": 1, \"arenas\":"), "k").trace == std::nullopt);  // unknown keys

  auto bad = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    sub(t, from, to);
    return parseError(t);
  };
  const std::string head = "k.meta.json: malformed metadata: ";
  // The parameter and the field come together.
  CHECK(bad("\"trace\": {\"records\"", "\"trace_off\": {\"records\"") ==
        head + "\"params\" ends with \"trace\" (a kernel built with --trace), but there is no \"trace\" field to describe its records");
  CHECK(bad(", \"trace\"],", "],") == head + "there is a \"trace\" field, but \"params\" has no \"trace\" parameter");
  CHECK(bad("\"epoch\", \"timeout\", \"trace\"]", "\"epoch\", \"trace\", \"timeout\"]")
            .find("the kernel takes parameters (weights, state, activations, sync, error, inputs, epoch, trace, timeout); this "
                  "runtime passes (weights, state, activations, sync, error, inputs, epoch, timeout), and a traced kernel also "
                  "trace") != std::string::npos);
  // The field itself.
  CHECK(bad(field, "\"trace\": [1]") ==
        head + "\"trace\" is an array, not an object");
  // records * 8 words * 8 bytes, with room to spare: at most (2^63 - 1) / 128.
  CHECK(bad("\"records\": 3", "\"records\": -1") == head + "\"trace\".records is -1; expected 0 to 72057594037927935");
  CHECK(bad("\"records\": 3", "\"records\": 72057594037927936") ==
        head + "\"trace\".records is 72057594037927936; expected 0 to 72057594037927935");
  CHECK(bad("\"records\": 3", "\"records\": \"3\"") == head + "\"trace\".records is a string, not an integer");
  CHECK(bad("\"records\": 3, ", "") == head + "\"trace\": missing \"records\"");
  // A kernel from an mkdsl of another record size (4 words before the loader's stamps).
  for (const char* words : {"4", "5", "0"})
    CHECK(bad("\"record_words\": 8", std::string("\"record_words\": ") + words) ==
          head + "\"trace\".record_words is " + words +
              "; this runtime reads records of 8 u64 words (start, ready, end, node << 32 | sm, ring wait, loader first, "
              "loader last, loader wait): rebuild the kernel with a matching mkdsl");
  CHECK(bad("\"record_words\": 8", "\"record_words\": -8") ==
        head + "\"trace\".record_words is -8; expected at least 0");
  CHECK(bad(", \"nodes\": [", ", \"nodez\": [") == head + "\"trace\": missing \"nodes\"");
  CHECK(bad("\"nodes\": [", "\"nodes\": [7, ") == head + "\"trace\".nodes[0] is a number, not an object");
  CHECK(bad("\"name\": \"a#0\"", "\"name\": \"\"") == head + "\"trace\".nodes[0].name is empty");
  CHECK(bad(", \"op\": \"b\"", "") == head + "\"trace\".nodes[1]: missing \"op\"");
  CHECK(bad("\"tasks\": 2", "\"tasks\": -2") == head + "\"trace\".nodes[0].tasks is -2; expected at least 0");
  CHECK(bad("\"bytes\": 8", "\"bytes\": 1.5") == head + "\"trace\".nodes[1].bytes is 1.5, not an integer");
  CHECK(bad("\"op\": \"a\"", "\"op\": null") == head + "\"trace\".nodes[0].op is null, not a string");
  CHECK(bad("\"bytes\": 64", "\"bytes\": 64, \"bytes_exact\": 1") ==
        head + "\"trace\".nodes[0].bytes_exact is a number, not true or false");
}

TEST_CASE("runtime metadata: the tiny Llama built with --trace") {
  std::string diags;
  auto out = mk::testing::compileTinyLlama(true, &diags);
  REQUIRE_MESSAGE(out, diags);
  // The compiler writes the record size this runtime reads (parseMetadata refuses any other).
  CHECK(out->metadataJson.find("\"record_words\": " + std::to_string(TraceWords) + ",") != std::string::npos);
  KernelMetadata m = parseMetadata(out->metadataJson, "tiny.meta.json");
  REQUIRE(m.trace);
  CHECK(m.trace->records == out->artifact.launch().traceRecords);
  CHECK(m.trace->records == int64_t(out->kernel().tasks.size()));
  REQUIRE(m.trace->nodes.size() == out->kernel().graph.nodes.size());
  int64_t tasks = 0;
  for (const TraceNode& n : m.trace->nodes) {
    CHECK(n.name == n.op + "#" + std::to_string(&n - m.trace->nodes.data()));
    tasks += n.tasks;
  }
  CHECK(tasks == m.trace->records);  // every queue entry is one task of one node
  CHECK(m.trace->nodes[1].op == "qkv_rope_append");
  // Only the attention partials' loops run to a run-time bound (pos): their bytes are upper bounds.
  for (const TraceNode& n : m.trace->nodes) {
    CAPTURE(n.name);
    CHECK(n.bytesExact == (n.op != "attention_partial"));
  }
  CHECK(out->artifact.launch().params == kernelParamNames(true));
  CHECK(m.params == kernelParamNames(true));
}

namespace {

// kGood as the first step ("decode") of a program of two, whose prefill step shares its weight w
// and state kv (the first two tensors) and has its own tensors tok and h.
const std::string kPrefillStep = R"J({
      "step": "prefill", "entry": "mk_step_prefill", "grid": 4, "block": 256, "compute_threads": 256, "loader_warp": false,
      "ring_slots": 0, "ring_slot_bytes": 0, "dynamic_smem_bytes": 0, "sync_counters": 5, "sync_bytes": 20, "error_words": 8,
      "params": ["weights", "state", "activations", "sync", "error", "inputs", "epoch", "timeout"],
      "arenas": {"activations": 2048},
      "tensors": [
        {"name": "tok", "kind": "input", "dtype": "i32", "shape": [4], "layout": "row_major", "arena": "activations", "offset": 0, "bytes": 16},
        {"name": "h", "kind": "activation", "dtype": "f32", "shape": [4, 8], "layout": "row_major", "arena": "activations", "offset": 1024, "bytes": 128}
      ],
      "inputs": [{"name": "tok", "dtype": "i32", "tensor": "tok", "bound": 256}, {"name": "pos0", "dtype": "i32", "tensor": null}],
      "outputs": [{"name": "h", "tensor": "h"}, {"name": "cache", "tensor": "kv"}]
    })J";

std::string twoSteps(const std::string& prefill = kPrefillStep) {
  std::string s = kGood;
  s.replace(s.find("  \"entry\":"), 0, "  \"step\": \"decode\",\n");
  s.replace(s.find("  \"tensors\": ["), 0, "  \"shared_tensors\": 2,\n");
  s.replace(s.rfind("\n}"), 0, ",\n  \"steps\": [\n    " + prefill + "\n  ]");
  return s;
}

// twoSteps() with `from` (which must occur exactly once) replaced by `to`.
std::string twoStepsWith(const std::string& from, const std::string& to) {
  std::string s = twoSteps();
  size_t at = s.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  REQUIRE_MESSAGE(s.find(from, at + 1) == std::string::npos, from);
  s.replace(at, from.size(), to);
  return s;
}

}  // namespace

TEST_CASE("runtime metadata: a program of two steps, each a complete view over the shared weights and state") {
  const KernelMetadata m = parseMetadata(twoSteps(), "k.meta.json");
  CHECK(m.step == "decode");
  CHECK(m.sharedTensors == 2);
  CHECK(m.entry == "mk_step");
  REQUIRE(m.otherSteps.size() == 1);
  const KernelMetadata& p = m.otherSteps[0];
  CHECK(p.step == "prefill");
  CHECK(p.entry == "mk_step_prefill");
  CHECK(p.block == 256);
  CHECK(p.syncCounters == 5);
  CHECK(p.arch == "sm_90a");
  CHECK(p.program == "t.mk");
  CHECK(p.arenaBytes[int(Arena::Weights)] == 1024);
  CHECK(p.arenaBytes[int(Arena::State)] == 256);
  CHECK(p.arenaBytes[int(Arena::Activations)] == 2048);
  REQUIRE(p.tensors.size() == 4);
  CHECK(p.tensors[0].name == "w");
  CHECK(p.tensors[0].sources == std::vector<std::string>{"a", "b"});
  CHECK(p.tensors[1].layout.str() == "padded(5)");
  CHECK(p.find("tok") == 2);
  CHECK(p.find("x") == -1);
  REQUIRE(p.outputs.size() == 2);
  CHECK(p.outputs[1].tensor == p.find("kv"));  // a step may read back the shared state
  CHECK(p.inputs[0].bound == 256);
  // The text it writes reads back to itself (metadataText orders fields its own way).
  CHECK(metadataText(parseMetadata(metadataText(m), "k")) == metadataText(m));

  // Without "shared_tensors" (an older compiler's) nothing is shared and nothing checked.
  CHECK(parseMetadata(kGood, "k").sharedTensors == 0);
  // An older reader of the same file runs the first step: the fields are additive.
  CHECK(parseMetadata(twoSteps(), "k").inputs.size() == 2);
}

TEST_CASE("runtime metadata: every malformed program of several steps is a located error") {
  const std::string head = "k.meta.json: malformed metadata: ";
  const std::string at = head + "\"steps\"[0] (\"prefill\")";
  // A step's own tensors are activations and inputs: the weights and state are the program's.
  CHECK(parseError(twoStepsWith(R"({"name": "h", "kind": "activation")", R"({"name": "h", "kind": "weight")")) ==
        at + ".tensors[1] (\"h\"): a weight among a step's own tensors: the weights and state are the program's, the "
             "top-level \"tensors\"[0, 2) (\"shared_tensors\")");
  CHECK(parseError(twoStepsWith(R"({"name": "tok", "kind": "input")", R"({"name": "kv", "kind": "input")")) ==
        at + ".tensors[0] (\"kv\"): a second tensor of this name (the program's shared tensors have it)");
  // Step names are unique across the program, the first step's included; so are entries.
  CHECK(parseError(twoStepsWith(R"("step": "prefill")", R"("step": "decode")")) ==
        head + "\"steps\"[0] (\"decode\"): a second step named \"decode\" (the first is the program's first step (the top "
               "level))");
  CHECK(parseError(twoSteps(kPrefillStep + ",\n    " + kPrefillStep)) ==
        head + "\"steps\"[1] (\"prefill\"): a second step named \"prefill\" (the first is \"steps\"[0] (\"prefill\"))");
  CHECK(parseError(twoStepsWith(R"("entry": "mk_step_prefill")", R"("entry": "mk_step")")) ==
        at + ": entry \"mk_step\" is also the entry of the program's first step (the top level)");
  CHECK(parseError(twoStepsWith(R"("step": "prefill", )", "")) == head + "\"steps\"[0]: missing \"step\"");
  // "shared_tensors" must be exactly the weights and state, first.
  CHECK(parseError(twoStepsWith(R"("shared_tensors": 2)", R"("shared_tensors": 1)")) ==
        head + "\"tensors\"[1] (\"kv\"): a state past the first 1 tensors (\"shared_tensors\"): the weights and state must "
               "all come first");
  CHECK(parseError(twoStepsWith(R"("shared_tensors": 2)", R"("shared_tensors": 3)")) ==
        head + "\"tensors\"[2] (\"x\"): an input among the first 3 tensors, which \"shared_tensors\" says are the weights "
               "and state");
  CHECK(parseError(twoStepsWith(R"("shared_tensors": 2,)", "")) ==
        head + "there is a \"steps\" field but no \"shared_tensors\": the steps' views cannot tell the weights and state "
               "they share");
  CHECK(parseError(twoStepsWith(R"("shared_tensors": 2)", R"("shared_tensors": -1)")) ==
        head + "\"shared_tensors\" is -1; expected 0 to 2147483647");
  // Inputs and outputs name the step's tensors or the shared ones.
  CHECK(parseError(twoStepsWith(R"("tensor": "tok")", R"("tensor": "x")")) ==
        at + ".inputs[0].tensor names \"x\", which is not in \"steps\"[0] (\"prefill\").tensors or the program's shared "
             "tensors");
  // The fields a step has of its own are checked as the top level's, located in the step.
  CHECK(parseError(twoStepsWith(R"("block": 256)", R"("block": 2048)")) ==
        at + ".block is 2048; expected 1 to 1024");
  CHECK(parseError(twoStepsWith(R"("grid": 4, "block": 256, )", R"("block": 256, )")) == at + ": missing \"grid\"");
  CHECK(parseError(twoStepsWith(R"("sync_bytes": 20, "error)", R"("sync_bytes": 24, "error)")) ==
        at + ".sync_bytes is 24 but 5 u32 counters take 20");
  CHECK(parseError(twoStepsWith(R"("arenas": {"activations": 2048})", R"("arenas": {"weights": 1, "activations": 2048})")) ==
        at + ".arenas has an unknown arena \"weights\" (expected activations: a step's weights and state arenas are the "
             "program's, at the top level)");
  CHECK(parseError(twoStepsWith(R"("offset": 1024, "bytes": 128)", R"("offset": 2000, "bytes": 128)")) ==
        at + ".tensors[1] (\"h\"): bytes 2000 .. 2128 lie outside the activations arena (2048 bytes)");
  CHECK(parseError(twoStepsWith(R"("outputs": [{"name": "h", "tensor": "h"}, )", R"("outputs": [{"name": "h", "tensor": "q"}, )")) ==
        at + ".outputs[0].tensor names \"q\", which is not in \"steps\"[0] (\"prefill\").tensors or the program's shared "
             "tensors");
  CHECK(parseError(twoStepsWith(R"("sync_counters": 5, "sync_bytes": 20, "error_words": 8,
      "params": ["weights", "state", "activations", "sync", "error", "inputs", "epoch", "timeout"],)",
                                R"("sync_counters": 5, "sync_bytes": 20, "error_words": 8,
      "params": ["weights", "state", "activations", "sync", "error", "inputs", "epoch", "timeout", "trace"],)")) ==
        at + ".params ends with \"trace\" (a kernel built with --trace), but there is no \"steps\"[0] (\"prefill\").trace "
             "field to describe its records");
  CHECK(parseError(twoStepsWith("\"steps\": [\n", "\"steps\": [7, \n")) == head + "\"steps\"[0] is a number, not an object");
}
