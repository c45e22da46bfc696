// The kernel metadata sidecar that `mkdsl build` writes beside the kernel (`F.meta.json`): how
// the host launches the kernel, what it must allocate, and where each tensor lives. This is all
// the runtime knows of the compiled program. The backend fills a KernelMetadata from the
// megakernel IR and writes it with metadataText; the runtime reads it back with parseMetadata.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "abi/dtype.h"
#include "abi/json.h"
#include "abi/kernel_params.h"
#include "abi/layout.h"
#include "abi/records.h"

namespace mk::abi {

// Malformed or unsupported metadata; the message starts with the file name.
class MetadataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Arena { Weights = 0, State = 1, Activations = 2 };
constexpr const char* arenaName(Arena a) {
  switch (a) {
    case Arena::Weights: return "weights";
    case Arena::State: return "state";
    case Arena::Activations: return "activations";
  }
  return "?";
}

struct TensorMeta {
  enum Kind { Weight, State, Activation, Input } kind = Activation;
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  Layout layout;
  // False for a tensor the kernel gave no memory (a hand-built kernel): written with null arena
  // and offset, which the reader rejects.
  bool placed = true;
  Arena arena = Arena::Activations;
  uint64_t offset = 0;  // bytes into the arena
  uint64_t bytes = 0;   // of the buffer (at least the storage bytes of the layout)
  std::vector<std::string> sources;  // weights: safetensors names
  std::string declaredAt;            // weights and state: "examples/llama.mk:91:12" ("" unknown)

  int64_t elements() const { return shapeElements(shape); }
  uint64_t storageBytes() const { return uint64_t(storageElements(layout, shape)) * dtypeBytes(dtype); }
};

constexpr const char* tensorKindName(TensorMeta::Kind k) {
  switch (k) {
    case TensorMeta::Weight: return "weight";
    case TensorMeta::State: return "state";
    case TensorMeta::Activation: return "activation";
    case TensorMeta::Input: return "input";
  }
  return "?";
}

// What a step input or output is for, as the compiler sees it from the program (never from its
// name), so that a driver such as the decode loop knows what to feed and what to read:
//   Token:     an i32 scalar input that starts a region along dim 0 of a weight (the embedding's row);
//   Position:  an i32 scalar input that starts a region in a state tensor (the KV cache's slot);
//   Logits:    the first f32 rank-1 output;
//   NextToken: the first i32 scalar output.
// An input or output that is none of these has Role::None (written as null).
enum class Role { None, Token, Position, Logits, NextToken };
constexpr const char* roleName(Role r) {
  switch (r) {
    case Role::None: return "none";
    case Role::Token: return "token";
    case Role::Position: return "position";
    case Role::Logits: return "logits";
    case Role::NextToken: return "next_token";
  }
  return "?";
}

struct InputMeta {
  std::string name;
  DType dtype = DType::I32;
  int tensor = -1;  // a tensor input's activation buffer (the runtime copies its value there), or -1
  int64_t bound = -1;  // values must lie in [0, bound) (the token indexes the embedding's rows,
                       // the position the KV cache); -1: the kernel states no bound
  Role role = Role::None;  // None, Token or Position
};

// A field of the config the kernel was built for ("config_values"): integers, floats and
// booleans (true 1, false 0); `text` is the JSON literal as written.
struct ConfigValue {
  std::string name;
  double value = 0;
  bool isBool = false;
  std::string text;
};

struct OutputMeta {
  std::string name;
  int tensor = -1;
  Role role = Role::None;  // None, Logits or NextToken
};

// What a traced kernel's records point at ("trace" in the metadata): a node of the op graph, its
// op, how many tasks it has and the bytes the compiler estimates they move (summed over them).
struct TraceNode {
  std::string name;  // "qkv_rope_append#1"
  std::string op;    // "qkv_rope_append"
  int64_t tasks = 0;
  int64_t bytes = 0;
  // False when `bytes` is an upper bound: a loop of its tasks runs a number of trips known only
  // at run time (attention up to `pos`), and the compiler counted the whole region it may read.
  bool bytesExact = true;
};
struct TraceInfo {
  int64_t records = 0;           // one per queue entry, SM 0's first
  std::vector<TraceNode> nodes;  // indexed by node id (TraceWhere's upper half)
};

// How the host launches the kernel and what it allocates besides the arenas: what the backend
// decides (backend::LaunchInfo) and the sidecar's launch fields say.
struct Launch {
  std::string entry = "mk_step";
  std::string arch;       // "sm_90a", ..., "gfx942"
  int grid = 0;           // one block per SM
  int block = 0;          // computeThreads, plus one loader warp when loaderWarp
  int computeThreads = 0;
  bool loaderWarp = false;  // weight tiles stream through a shared-memory ring
  int ringSlots = 0;
  int64_t ringSlotBytes = 0;
  int64_t dynamicSmemBytes = 0;  // to pass at launch (and to cuFuncSetAttribute above 48 KiB); on
                                 // AMDGPU the dynamic LDS (hipModuleLaunchKernel's sharedMemBytes)
  int64_t syncCounters = 0;
  int errorWords = 8;
  std::vector<std::string> params;  // kernelParamNames(traced): abi/kernel_params.h
};

struct KernelMetadata : Launch {
  std::string program, config, target;  // informational
  uint64_t arenaBytes[3] = {0, 0, 0};  // by Arena
  std::vector<TensorMeta> tensors;
  std::vector<InputMeta> inputs;
  std::vector<OutputMeta> outputs;
  std::vector<ConfigValue> configValues;  // in file order; empty in metadata without them
  std::optional<TraceInfo> trace;         // built with --trace: it takes the trace parameter

  // A tensor's index by name, or -1.
  int find(const std::string& name) const {
    auto it = byName_.find(name);
    return it == byName_.end() ? -1 : it->second;
  }
  // A config value by name, or nullptr.
  const ConfigValue* configValue(const std::string& name) const {
    for (const ConfigValue& c : configValues)
      if (c.name == name) return &c;
    return nullptr;
  }

 private:
  friend KernelMetadata parseMetadata(std::string_view, const std::string&);
  std::map<std::string, int> byName_;
};

// The sidecar's text: one field per line in a stable order, one tensor per line (large models
// have thousands, and a line each keeps the file greppable).
inline std::string metadataText(const KernelMetadata& m) {
  const JsonStyle line{.spaced = true};
  auto text = [&](const JsonValue& v) { return jsonText(v, line); };
  auto strings = [](const std::vector<std::string>& v) {
    JsonValue a = jsonArray();
    for (const std::string& s : v) a.items.push_back(jsonString(s));
    return a;
  };
  // A tensor named by an input or output, null when it has none.
  auto tensorRef = [&](int id) {
    return id >= 0 && size_t(id) < m.tensors.size() ? jsonString(m.tensors[size_t(id)].name) : jsonNull();
  };
  auto role = [](Role r) { return r == Role::None ? jsonNull() : jsonString(roleName(r)); };
  // An array of objects, one per line at `indent` spaces, closed on a line of its own.
  auto lines = [&](const std::vector<JsonValue>& items, const std::string& indent, const std::string& closeIndent) {
    std::string s = "[";
    for (size_t i = 0; i < items.size(); ++i) s += (i ? ",\n" : "\n") + indent + text(items[i]);
    return s + (items.empty() ? "]" : "\n" + closeIndent + "]");
  };

  std::string s = "{\n";
  auto field = [&](const char* key, const std::string& value, bool last = false) {
    s += "  " + jsonQuote(key) + ": " + value + (last ? "\n" : ",\n");
  };
  field("format", jsonQuote("mkdsl-kernel-metadata"));
  field("version", "1");
  field("program", jsonQuote(m.program));
  field("config", jsonQuote(m.config));
  JsonValue config = jsonObject();
  for (const ConfigValue& c : m.configValues)
    config.members.push_back({c.name, c.isBool ? jsonBool(c.value != 0) : jsonNumberText(c.text)});
  field("config_values", text(config));
  field("target", jsonQuote(m.target));
  field("arch", jsonQuote(m.arch));
  field("entry", jsonQuote(m.entry));
  field("grid", std::to_string(m.grid));
  field("block", std::to_string(m.block));
  field("compute_threads", std::to_string(m.computeThreads));
  field("loader_warp", m.loaderWarp ? "true" : "false");
  field("ring_slots", std::to_string(m.ringSlots));
  field("ring_slot_bytes", std::to_string(m.ringSlotBytes));
  field("dynamic_smem_bytes", std::to_string(m.dynamicSmemBytes));
  field("sync_counters", std::to_string(m.syncCounters));
  field("sync_bytes", std::to_string(m.syncCounters * 4));  // u32 counters
  field("error_words", std::to_string(m.errorWords));
  field("params", text(strings(m.params)));
  JsonValue arenas = jsonObject();
  for (Arena a : {Arena::Weights, Arena::State, Arena::Activations})
    arenas.members.push_back({arenaName(a), jsonInt(int64_t(m.arenaBytes[int(a)]))});
  field("arenas", text(arenas));

  std::vector<JsonValue> tensors;
  for (const TensorMeta& t : m.tensors) {
    JsonValue shape = jsonArray();
    for (int64_t d : t.shape) shape.items.push_back(jsonInt(d));
    JsonValue v = jsonObject({{"name", jsonString(t.name)},
                              {"kind", jsonString(tensorKindName(t.kind))},
                              {"dtype", jsonString(dtypeName(t.dtype))},
                              {"shape", std::move(shape)},
                              {"layout", jsonString(t.layout.str())},
                              {"arena", t.placed ? jsonString(arenaName(t.arena)) : jsonNull()},
                              {"offset", t.placed ? jsonInt(int64_t(t.offset)) : jsonNull()},
                              {"bytes", jsonInt(int64_t(t.bytes))}});
    if (t.kind == TensorMeta::Weight) v.members.push_back({"sources", strings(t.sources)});
    if (!t.declaredAt.empty()) v.members.push_back({"declared_at", jsonString(t.declaredAt)});
    tensors.push_back(std::move(v));
  }
  field("tensors", lines(tensors, "    ", "  "));

  JsonValue inputs = jsonArray();
  for (const InputMeta& in : m.inputs)
    inputs.items.push_back(jsonObject({{"name", jsonString(in.name)},
                                       {"dtype", jsonString(dtypeName(in.dtype))},
                                       {"tensor", tensorRef(in.tensor)},
                                       {"bound", in.bound < 0 ? jsonNull() : jsonInt(in.bound)},
                                       {"role", role(in.role)}}));
  field("inputs", text(inputs));
  if (m.trace) {
    std::vector<JsonValue> nodes;
    for (const TraceNode& n : m.trace->nodes)
      nodes.push_back(jsonObject({{"name", jsonString(n.name)},
                                  {"op", jsonString(n.op)},
                                  {"tasks", jsonInt(n.tasks)},
                                  {"bytes", jsonInt(n.bytes)},
                                  {"bytes_exact", jsonBool(n.bytesExact)}}));
    std::string nodeLines = lines(nodes, "      ", "    ");
    if (nodes.empty()) nodeLines = "[\n    ]";
    field("trace", "{\"records\": " + std::to_string(m.trace->records) + ", \"record_words\": " +
                       std::to_string(int(TraceWords)) + ", \"nodes\": " + nodeLines + "}");
  }
  JsonValue outputs = jsonArray();
  for (const OutputMeta& out : m.outputs)
    outputs.items.push_back(
        jsonObject({{"name", jsonString(out.name)}, {"tensor", tensorRef(out.tensor)}, {"role", role(out.role)}}));
  field("outputs", text(outputs), true);
  return s + "}\n";
}

namespace metadata_detail {

// Field access with errors that say where: `what` is a JSON path like "tensors[3] (\"x\")".
class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {}

  [[noreturn]] void fail(const std::string& msg) const { throw MetadataError(path_ + ": malformed metadata: " + msg); }

  const JsonValue& need(const JsonValue& obj, const char* key, const std::string& where) const {
    const JsonValue* v = obj.get(key);
    if (!v) fail(where + "missing \"" + key + "\"");
    return *v;
  }

  std::string string(const JsonValue& v, const std::string& what, bool nonEmpty = true) const {
    if (v.kind != JsonValue::String) fail(what + " is " + jsonKindName(v.kind) + ", not a string");
    if (nonEmpty && v.text.empty()) fail(what + " is empty");
    return v.text;
  }

  int64_t integer(const JsonValue& v, const std::string& what, int64_t lo, int64_t hi) const {
    if (v.kind != JsonValue::Number) fail(what + " is " + jsonKindName(v.kind) + ", not an integer");
    auto n = jsonInt64(v);
    if (!n) fail(what + " is " + v.text + ", not an integer");
    if (*n < lo || *n > hi)
      fail(what + " is " + v.text + "; expected " + (hi == std::numeric_limits<int64_t>::max()
                                                        ? "at least " + std::to_string(lo)
                                                        : std::to_string(lo) + " to " + std::to_string(hi)));
    return *n;
  }

  bool boolean(const JsonValue& v, const std::string& what) const {
    if (v.kind != JsonValue::Bool) fail(what + " is " + jsonKindName(v.kind) + ", not true or false");
    return v.b;
  }

  const JsonValue& array(const JsonValue& v, const std::string& what) const {
    if (v.kind != JsonValue::Array) fail(what + " is " + jsonKindName(v.kind) + ", not an array");
    return v;
  }

  const JsonValue& object(const JsonValue& v, const std::string& what) const {
    if (v.kind != JsonValue::Object) fail(what + " is " + jsonKindName(v.kind) + ", not an object");
    return v;
  }

 private:
  const std::string& path_;
};

}  // namespace metadata_detail

// Parses and validates metadata text: the format tag and version 1, every field's type and range,
// the parameter list (it must be kernelParamNames), tensors (dtype, layout valid for the shape,
// placement inside its arena, weights in the weights arena with string sources, unique names),
// inputs and outputs naming existing tensors; the optional "config_values" (numbers and booleans),
// tensors' "declared_at" (a string), inputs' "bound" (an integer >= 0, or null), inputs' and
// outputs' "role" (a name of Role the kind allows, or null); the optional
// "trace" (records >= 0, record_words TraceWords, nodes with name, op, tasks and bytes), present
// exactly when "params" ends with "trace". Unknown keys are ignored (newer compilers may add some).
// Throws MetadataError("PATH: ...").
inline KernelMetadata parseMetadata(std::string_view text, const std::string& path) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();
  JsonValue root;
  try {
    root = parseJson(text);
  } catch (const JsonError& e) {
    throw MetadataError(path + ": malformed JSON at byte " + std::to_string(e.offset()) + ": " + e.what());
  }
  metadata_detail::Reader rd(path);
  if (root.kind != JsonValue::Object) rd.fail(std::string("the document is ") + jsonKindName(root.kind) + ", not an object");
  auto key = [](const char* k) { return std::string("\"") + k + "\""; };

  {
    const JsonValue* format = root.get("format");
    if (!format || format->kind != JsonValue::String || format->text != "mkdsl-kernel-metadata")
      throw MetadataError(path + ": not mkdsl kernel metadata (\"format\" must be \"mkdsl-kernel-metadata\"; "
                                 "`mkdsl build F.mk -o F.ptx` writes it as F.meta.json)");
    const JsonValue& version = rd.need(root, "version", "");
    if (version.kind != JsonValue::Number || version.text != "1")
      throw MetadataError(path + ": metadata version " + (version.kind == JsonValue::Number ? version.text : "?") +
                          " is not supported; this runtime reads version 1");
  }

  KernelMetadata m;
  auto optString = [&](const char* k, std::string& out) {
    if (const JsonValue* v = root.get(k)) out = rd.string(*v, key(k), false);
  };
  optString("program", m.program);
  optString("config", m.config);
  optString("target", m.target);
  if (const JsonValue* cv = root.get("config_values")) {
    rd.object(*cv, key("config_values"));
    for (const JsonMember& f : cv->members) {
      const std::string what = "\"config_values\"." + f.first;
      ConfigValue c;
      c.name = f.first;
      if (f.second.kind == JsonValue::Bool) {
        c.isBool = true;
        c.value = f.second.b ? 1 : 0;
        c.text = f.second.b ? "true" : "false";
      } else if (f.second.kind == JsonValue::Number) {
        c.text = f.second.text;
        char* end = nullptr;
        c.value = std::strtod(c.text.c_str(), &end);
        if (!end || *end || !std::isfinite(c.value)) rd.fail(what + " is " + c.text + ", not a finite number");
      } else {
        rd.fail(what + " is " + jsonKindName(f.second.kind) + ", not a number or true/false");
      }
      m.configValues.push_back(std::move(c));
    }
  }
  m.arch = rd.string(rd.need(root, "arch", ""), key("arch"));
  m.entry = rd.string(rd.need(root, "entry", ""), key("entry"));
  m.grid = int(rd.integer(rd.need(root, "grid", ""), key("grid"), 1, kMaxInt));
  m.block = int(rd.integer(rd.need(root, "block", ""), key("block"), 1, 1024));
  if (const JsonValue* v = root.get("compute_threads")) m.computeThreads = int(rd.integer(*v, key("compute_threads"), 0, m.block));
  if (const JsonValue* v = root.get("loader_warp")) m.loaderWarp = rd.boolean(*v, key("loader_warp"));
  if (const JsonValue* v = root.get("ring_slots")) m.ringSlots = int(rd.integer(*v, key("ring_slots"), 0, kMaxInt));
  if (const JsonValue* v = root.get("ring_slot_bytes")) m.ringSlotBytes = rd.integer(*v, key("ring_slot_bytes"), 0, kMaxInt);
  m.dynamicSmemBytes = rd.integer(rd.need(root, "dynamic_smem_bytes", ""), key("dynamic_smem_bytes"), 0, kMaxInt);
  m.syncCounters = rd.integer(rd.need(root, "sync_counters", ""), key("sync_counters"), 0, kMaxInt / 4);
  if (const JsonValue* v = root.get("sync_bytes")) {
    int64_t b = rd.integer(*v, key("sync_bytes"), 0, kMax);
    if (b != m.syncCounters * 4)
      rd.fail("\"sync_bytes\" is " + std::to_string(b) + " but " + std::to_string(m.syncCounters) + " u32 counters take " +
              std::to_string(m.syncCounters * 4));
  }
  m.errorWords = int(rd.integer(rd.need(root, "error_words", ""), key("error_words"), ErrWords, 1 << 20));

  // The parameters; a traced kernel (`mkdsl build --trace`) takes one more, and then "trace"
  // says what its records hold.
  const JsonValue* trace = root.get("trace");
  {
    const JsonValue& params = rd.array(rd.need(root, "params", ""), key("params"));
    std::vector<std::string> names;
    for (size_t i = 0; i < params.items.size(); ++i)
      names.push_back(rd.string(params.items[i], "\"params\"[" + std::to_string(i) + "]"));
    const std::vector<std::string> plain = kernelParamNames(false), traced = kernelParamNames(true);
    if (names == traced && !trace)
      rd.fail("\"params\" ends with \"trace\" (a kernel built with --trace), but there is no \"trace\" field to describe "
              "its records");
    if (names == plain && trace) rd.fail("there is a \"trace\" field, but \"params\" has no \"trace\" parameter");
    if (names != plain && names != traced) {
      auto list = [](const std::vector<std::string>& v) {
        std::string s;
        for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
        return s;
      };
      throw MetadataError(path + ": the kernel takes parameters (" + list(names) + "); this runtime passes (" +
                          list(plain) + "), and a traced kernel also " + kKernelParams[ParamTrace].name +
                          ": rebuild the kernel with a matching mkdsl");
    }
    m.params = std::move(names);
  }
  if (trace) {
    rd.object(*trace, key("trace"));
    TraceInfo t;
    // The runtime allocates records * TraceWords * 8 bytes: the bound keeps that addressable.
    t.records = rd.integer(rd.need(*trace, "records", "\"trace\": "), "\"trace\".records", 0, kMax / (TraceWords * 16));
    const int64_t words = rd.integer(rd.need(*trace, "record_words", "\"trace\": "), "\"trace\".record_words", 0, kMax);
    if (words != TraceWords)
      rd.fail("\"trace\".record_words is " + std::to_string(words) + "; this runtime reads records of " +
              std::to_string(TraceWords) + " u64 words (start, ready, end, node << 32 | sm, ring wait, loader first, "
              "loader last, loader wait): rebuild the kernel with a matching mkdsl");
    const JsonValue& nodes = rd.array(rd.need(*trace, "nodes", "\"trace\": "), "\"trace\".nodes");
    for (size_t i = 0; i < nodes.items.size(); ++i) {
      const std::string where = "\"trace\".nodes[" + std::to_string(i) + "]";
      const JsonValue& nv = rd.object(nodes.items[i], where);
      TraceNode n;
      n.name = rd.string(rd.need(nv, "name", where + ": "), where + ".name");
      n.op = rd.string(rd.need(nv, "op", where + ": "), where + ".op");
      n.tasks = rd.integer(rd.need(nv, "tasks", where + ": "), where + ".tasks", 0, kMax);
      n.bytes = rd.integer(rd.need(nv, "bytes", where + ": "), where + ".bytes", 0, kMax);
      if (const JsonValue* e = nv.get("bytes_exact")) n.bytesExact = rd.boolean(*e, where + ".bytes_exact");
      t.nodes.push_back(std::move(n));
    }
    m.trace = std::move(t);
  }

  {
    const JsonValue& arenas = rd.object(rd.need(root, "arenas", ""), key("arenas"));
    for (const JsonMember& a : arenas.members)
      if (a.first != "weights" && a.first != "state" && a.first != "activations")
        rd.fail("\"arenas\" has an unknown arena \"" + a.first + "\" (expected weights, state, activations)");
    for (Arena a : {Arena::Weights, Arena::State, Arena::Activations}) {
      const std::string k = std::string("\"arenas\".") + arenaName(a);
      m.arenaBytes[int(a)] = uint64_t(rd.integer(rd.need(arenas, arenaName(a), "\"arenas\": "), k, 0, kMax));
    }
  }

  const JsonValue& tensors = rd.array(rd.need(root, "tensors", ""), key("tensors"));
  for (size_t i = 0; i < tensors.items.size(); ++i) {
    std::string where = "\"tensors\"[" + std::to_string(i) + "]";
    const JsonValue& tv = rd.object(tensors.items[i], where);
    TensorMeta t;
    t.name = rd.string(rd.need(tv, "name", where + ": "), where + ".name");
    where += " (\"" + t.name + "\")";
    const std::string at = where + ": ";
    if (m.byName_.count(t.name)) rd.fail(at + "a second tensor of this name");

    const std::string kind = rd.string(rd.need(tv, "kind", at), where + ".kind");
    bool known = false;
    for (TensorMeta::Kind k : {TensorMeta::Weight, TensorMeta::State, TensorMeta::Activation, TensorMeta::Input})
      if (kind == tensorKindName(k)) t.kind = k, known = true;
    if (!known) rd.fail(at + "kind \"" + kind + "\" is not weight, state, activation or input");

    const std::string dtype = rd.string(rd.need(tv, "dtype", at), where + ".dtype");
    auto dt = parseDType(dtype);
    if (!dt) rd.fail(at + "dtype \"" + dtype + "\" is not bf16, f16, f32, i32 or bool");
    t.dtype = *dt;

    const JsonValue& shape = rd.array(rd.need(tv, "shape", at), where + ".shape");
    unsigned __int128 elems = 1;
    for (size_t d = 0; d < shape.items.size(); ++d) {
      t.shape.push_back(rd.integer(shape.items[d], where + ".shape[" + std::to_string(d) + "]", 0, kMax));
      elems *= uint64_t(t.shape.back());
      if (elems > (unsigned __int128)(1) << 56) rd.fail(at + "the shape " + shapeString(t.shape) + " is too large");
    }

    const std::string layout = rd.string(rd.need(tv, "layout", at), where + ".layout");
    auto lay = parseLayout(layout);
    if (!lay)
      rd.fail(at + "layout \"" + layout +
              "\" is not row_major, col_major, tiled(R, C), interleave(R), padded(P) or swizzle(B)");
    if (auto problem = layoutProblem(*lay, t.shape); !problem.empty())
      rd.fail(at + "layout \"" + layout + "\" does not fit the shape " + shapeString(t.shape) + ": " + problem);
    t.layout = *lay;

    const JsonValue& arena = rd.need(tv, "arena", at);
    if (arena.kind == JsonValue::Null) rd.fail(at + "no arena: the kernel gave this tensor no memory");
    const std::string an = rd.string(arena, where + ".arena");
    if (an == "weights") t.arena = Arena::Weights;
    else if (an == "state") t.arena = Arena::State;
    else if (an == "activations") t.arena = Arena::Activations;
    else rd.fail(at + "arena \"" + an + "\" is not weights, state or activations");
    const JsonValue& offset = rd.need(tv, "offset", at);
    if (offset.kind == JsonValue::Null) rd.fail(at + "no offset: the kernel gave this tensor no memory");
    t.offset = uint64_t(rd.integer(offset, where + ".offset", 0, kMax));
    t.bytes = uint64_t(rd.integer(rd.need(tv, "bytes", at), where + ".bytes", 0, kMax));
    if (t.bytes < t.storageBytes())
      rd.fail(at + std::to_string(t.bytes) + " bytes are too few for " + dtypeName(t.dtype) + shapeString(t.shape) + " " +
              t.layout.str() + " (" + std::to_string(t.storageBytes()) + " bytes)");
    const uint64_t arenaSize = m.arenaBytes[int(t.arena)];
    if (t.offset > arenaSize || t.bytes > arenaSize - t.offset)
      rd.fail(at + "bytes " + std::to_string(t.offset) + " .. " + std::to_string(t.offset + t.bytes) + " lie outside the " +
              an + " arena (" + std::to_string(arenaSize) + " bytes)");
    if (t.offset % dtypeBytes(t.dtype) != 0)
      rd.fail(at + "offset " + std::to_string(t.offset) + " is not aligned to its " + std::to_string(dtypeBytes(t.dtype)) +
              "-byte elements");

    if (const JsonValue* d = tv.get("declared_at"); d && d->kind != JsonValue::Null)
      t.declaredAt = rd.string(*d, where + ".declared_at", false);
    if (t.kind == TensorMeta::Weight) {
      if (t.arena != Arena::Weights) rd.fail(at + "a weight outside the weights arena");
      const JsonValue& sources = rd.array(rd.need(tv, "sources", at), where + ".sources");
      for (size_t s = 0; s < sources.items.size(); ++s)
        t.sources.push_back(rd.string(sources.items[s], where + ".sources[" + std::to_string(s) + "]"));
    }
    m.byName_[t.name] = int(m.tensors.size());
    m.tensors.push_back(std::move(t));
  }

  auto tensorRef = [&](const JsonValue& v, const std::string& what, bool nullable) -> int {
    if (nullable && v.kind == JsonValue::Null) return -1;
    const std::string name = rd.string(v, what);
    int id = m.find(name);
    if (id < 0) rd.fail(what + " names \"" + name + "\", which is not in \"tensors\"");
    return id;
  };

  // The optional "role": null, or one of `allowed` by name.
  auto readRole = [&](const JsonValue& v, const std::string& where, std::initializer_list<Role> allowed) {
    const JsonValue* r = v.get("role");
    if (!r || r->kind == JsonValue::Null) return Role::None;
    const std::string name = rd.string(*r, where + ".role");
    std::string names;
    for (Role a : allowed) {
      if (name == roleName(a)) return a;
      names += std::string(names.empty() ? "\"" : " or \"") + roleName(a) + "\"";
    }
    rd.fail(where + ": role \"" + name + "\" is not " + names + " (or null)");
  };

  const JsonValue& inputs = rd.array(rd.need(root, "inputs", ""), key("inputs"));
  std::set<std::string> seen;
  for (size_t i = 0; i < inputs.items.size(); ++i) {
    const std::string where = "\"inputs\"[" + std::to_string(i) + "]";
    const JsonValue& iv = rd.object(inputs.items[i], where);
    InputMeta in;
    in.name = rd.string(rd.need(iv, "name", where + ": "), where + ".name");
    if (!seen.insert(in.name).second) rd.fail(where + ": a second input named \"" + in.name + "\"");
    const std::string dtype = rd.string(rd.need(iv, "dtype", where + ": "), where + ".dtype");
    auto dt = parseDType(dtype);
    if (!dt) rd.fail(where + ": dtype \"" + dtype + "\" is not bf16, f16, f32, i32 or bool");
    in.dtype = *dt;
    const JsonValue* tensor = iv.get("tensor");
    in.tensor = tensor ? tensorRef(*tensor, where + ".tensor", true) : -1;
    if (const JsonValue* b = iv.get("bound"); b && b->kind != JsonValue::Null)
      in.bound = rd.integer(*b, where + ".bound", 0, kMax);
    in.role = readRole(iv, where, {Role::Token, Role::Position});
    m.inputs.push_back(std::move(in));
  }

  const JsonValue& outputs = rd.array(rd.need(root, "outputs", ""), key("outputs"));
  seen.clear();
  for (size_t i = 0; i < outputs.items.size(); ++i) {
    const std::string where = "\"outputs\"[" + std::to_string(i) + "]";
    const JsonValue& ov = rd.object(outputs.items[i], where);
    OutputMeta out;
    out.name = rd.string(rd.need(ov, "name", where + ": "), where + ".name");
    if (!seen.insert(out.name).second) rd.fail(where + ": a second output named \"" + out.name + "\"");
    out.tensor = tensorRef(rd.need(ov, "tensor", where + ": "), where + ".tensor", false);
    out.role = readRole(ov, where, {Role::Logits, Role::NextToken});
    m.outputs.push_back(std::move(out));
  }
  return m;
}

}  // namespace mk::abi
