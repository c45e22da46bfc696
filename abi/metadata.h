// The kernel metadata sidecar that `mkdsl build` writes beside the kernel (`F.meta.json`): how
// the host launches the kernel, what it must allocate, and where each tensor lives. This is all
// the runtime knows of the compiled program. The backend fills a KernelMetadata from the
// megakernel IR and writes it with metadataText; the runtime reads it back with parseMetadata.
#pragma once

#include <algorithm>
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
#include <utility>
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
//   NextToken: the first i32 scalar output;
//   Tokens:    an i32 tensor input whose elements start regions along dim 0 of a weight (a
//              prefill chunk's tokens);
//   Row:       an i32 scalar input that starts regions along dim 0 of activations only (the row
//              of a chunk's last real token, whose logits a prefill step returns).
// An input or output that is none of these has Role::None (written as null). A prefill step's
// position (pos0) is a Position: it starts the chunk's KV-cache rows.
enum class Role { None, Token, Position, Logits, NextToken, Tokens, Row };
constexpr const char* roleName(Role r) {
  switch (r) {
    case Role::None: return "none";
    case Role::Token: return "token";
    case Role::Position: return "position";
    case Role::Logits: return "logits";
    case Role::NextToken: return "next_token";
    case Role::Tokens: return "tokens";
    case Role::Row: return "row";
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

namespace metadata_detail {
class MetadataParser;
}

struct KernelMetadata : Launch {
  std::string program, config, target;  // informational
  std::string step;                     // the program's step this entry runs ("decode"); "" unknown
  // tensors[0, sharedTensors) are the program's weights and state, which every step shares: the
  // same tensors at the same offsets of the same weights and state arenas in every step's view.
  int sharedTensors = 0;
  // The program's further steps (a decode step's prefill step), each a complete view like this
  // one: the same program, config, target, arch, config values, weights and state arena sizes and
  // shared tensors; its own entry, launch, activations arena and tensors past the shared ones,
  // inputs, outputs and trace. Empty for a program of one step, and within an element.
  std::vector<KernelMetadata> otherSteps;
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
  friend class metadata_detail::MetadataParser;
  std::map<std::string, int> byName_;
};

namespace metadata_detail {

// A sidecar object's fields as (key, value text), in file order.
using Fields = std::vector<std::pair<std::string, std::string>>;

// The object of `fields`, one per line at `indent` + 2 spaces, closed at `indent`.
inline std::string objectText(const Fields& fields, const std::string& indent) {
  std::string s = "{\n";
  for (size_t i = 0; i < fields.size(); ++i)
    s += indent + "  " + jsonQuote(fields[i].first) + ": " + fields[i].second + (i + 1 < fields.size() ? ",\n" : "\n");
  return s + indent + "}";
}

// The fields a step has of its own, in file order: its launch, "arenas" (all three at the top
// level, whose weights and state every step shares; only activations in an element of "steps"),
// then at the top level "shared_tensors", then its tensors past the shared ones (one per line:
// large models have thousands, and a line each keeps the file greppable), inputs, trace, outputs.
// `indent` is the object's (text's continuation lines are indented from it).
inline Fields entryFields(const KernelMetadata& m, const std::string& indent, bool top) {
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
  // An array of objects, one per line at `itemIndent`, closed on a line of its own at `closeIndent`.
  auto lines = [&](const std::vector<JsonValue>& items, const std::string& itemIndent, const std::string& closeIndent) {
    std::string s = "[";
    for (size_t i = 0; i < items.size(); ++i) s += (i ? ",\n" : "\n") + itemIndent + text(items[i]);
    return s + (items.empty() ? "]" : "\n" + closeIndent + "]");
  };

  Fields f;
  f.push_back({"entry", jsonQuote(m.entry)});
  f.push_back({"grid", std::to_string(m.grid)});
  f.push_back({"block", std::to_string(m.block)});
  f.push_back({"compute_threads", std::to_string(m.computeThreads)});
  f.push_back({"loader_warp", m.loaderWarp ? "true" : "false"});
  f.push_back({"ring_slots", std::to_string(m.ringSlots)});
  f.push_back({"ring_slot_bytes", std::to_string(m.ringSlotBytes)});
  f.push_back({"dynamic_smem_bytes", std::to_string(m.dynamicSmemBytes)});
  f.push_back({"sync_counters", std::to_string(m.syncCounters)});
  f.push_back({"sync_bytes", std::to_string(m.syncCounters * 4)});  // u32 counters
  f.push_back({"error_words", std::to_string(m.errorWords)});
  f.push_back({"params", text(strings(m.params))});
  JsonValue arenas = jsonObject();
  for (Arena a : {Arena::Weights, Arena::State, Arena::Activations})
    if (top || a == Arena::Activations) arenas.members.push_back({arenaName(a), jsonInt(int64_t(m.arenaBytes[int(a)]))});
  f.push_back({"arenas", text(arenas)});
  if (top && (m.sharedTensors > 0 || !m.otherSteps.empty()))
    f.push_back({"shared_tensors", std::to_string(m.sharedTensors)});

  std::vector<JsonValue> tensors;
  for (size_t i = top ? 0 : size_t(std::max(m.sharedTensors, 0)); i < m.tensors.size(); ++i) {
    const TensorMeta& t = m.tensors[i];
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
  f.push_back({"tensors", lines(tensors, indent + "    ", indent + "  ")});

  JsonValue inputs = jsonArray();
  for (const InputMeta& in : m.inputs)
    inputs.items.push_back(jsonObject({{"name", jsonString(in.name)},
                                       {"dtype", jsonString(dtypeName(in.dtype))},
                                       {"tensor", tensorRef(in.tensor)},
                                       {"bound", in.bound < 0 ? jsonNull() : jsonInt(in.bound)},
                                       {"role", role(in.role)}}));
  f.push_back({"inputs", text(inputs)});
  if (m.trace) {
    std::vector<JsonValue> nodes;
    for (const TraceNode& n : m.trace->nodes)
      nodes.push_back(jsonObject({{"name", jsonString(n.name)},
                                  {"op", jsonString(n.op)},
                                  {"tasks", jsonInt(n.tasks)},
                                  {"bytes", jsonInt(n.bytes)},
                                  {"bytes_exact", jsonBool(n.bytesExact)}}));
    std::string nodeLines = lines(nodes, indent + "      ", indent + "    ");
    if (nodes.empty()) nodeLines = "[\n" + indent + "    ]";
    f.push_back({"trace", "{\"records\": " + std::to_string(m.trace->records) + ", \"record_words\": " +
                              std::to_string(int(TraceWords)) + ", \"nodes\": " + nodeLines + "}"});
  }
  JsonValue outputs = jsonArray();
  for (const OutputMeta& out : m.outputs)
    outputs.items.push_back(
        jsonObject({{"name", jsonString(out.name)}, {"tensor", tensorRef(out.tensor)}, {"role", role(out.role)}}));
  f.push_back({"outputs", text(outputs)});
  return f;
}

}  // namespace metadata_detail

// The sidecar's text: one field per line in a stable order, one tensor per line. The program's
// first step is the top level, as in metadata of one step; "step" (when named) and
// "shared_tensors" (when there are weights, state or further steps) are added before its entry
// and before its tensors, and the further steps last, in "steps": an object per step with its name ("step")
// and the fields entryFields writes for it (arenas only its activations, tensors only its own),
// so that a reader that knows no "steps" runs the first step.
inline std::string metadataText(const KernelMetadata& m) {
  using metadata_detail::Fields;
  const JsonStyle line{.spaced = true};
  Fields f;
  f.push_back({"format", jsonQuote("mkdsl-kernel-metadata")});
  f.push_back({"version", "1"});
  f.push_back({"program", jsonQuote(m.program)});
  f.push_back({"config", jsonQuote(m.config)});
  JsonValue config = jsonObject();
  for (const ConfigValue& c : m.configValues)
    config.members.push_back({c.name, c.isBool ? jsonBool(c.value != 0) : jsonNumberText(c.text)});
  f.push_back({"config_values", jsonText(config, line)});
  f.push_back({"target", jsonQuote(m.target)});
  f.push_back({"arch", jsonQuote(m.arch)});
  if (!m.step.empty()) f.push_back({"step", jsonQuote(m.step)});  // before its entry, as in "steps"
  for (auto& field : metadata_detail::entryFields(m, "", true)) f.push_back(std::move(field));
  if (!m.otherSteps.empty()) {
    const std::string indent = "    ";
    std::string steps = "[";
    for (size_t i = 0; i < m.otherSteps.size(); ++i) {
      const KernelMetadata& s = m.otherSteps[i];
      Fields sf{{"step", jsonQuote(s.step)}};
      for (auto& field : metadata_detail::entryFields(s, indent, false)) sf.push_back(std::move(field));
      steps += (i ? ",\n" : "\n") + indent + metadata_detail::objectText(sf, indent);
    }
    f.push_back({"steps", steps + "\n  ]"});
  }
  return metadata_detail::objectText(f, "") + "\n";
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

  const std::string& path() const { return path_; }

 private:
  const std::string& path_;
};

// Where a step's fields lie, for messages: the top level (its keys read "\"grid\"") or an element
// of "steps" (prefix "\"steps\"[0] (\"prefill\")": its keys read "\"steps\"[0] (\"prefill\").grid").
struct Scope {
  std::string prefix;  // "" at the top level
  bool top() const { return prefix.empty(); }
  std::string name(const std::string& key) const { return top() ? "\"" + key + "\"" : prefix + "." + key; }
  std::string at() const { return top() ? "" : prefix + ": "; }  // before a message about the whole object
};

// Reads a metadata document; parseMetadata is its entry point.
class MetadataParser {
 public:
  explicit MetadataParser(const std::string& path) : rd_(path) {}

  KernelMetadata document(std::string_view text) const;

 private:
  static constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  static constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();
  Reader rd_;

  // The fields a step has of its own (metadataText's entryFields) from `obj` into `m`, whose
  // program-wide fields and shared tensors are set. With `shared`, tensors[0, *shared) must be
  // the weights and state and no later one may be (metadata without "shared_tensors" has none).
  void entry(const JsonValue& obj, const Scope& scope, KernelMetadata& m, std::optional<int> shared) const;
  void params(const JsonValue& obj, const Scope& scope, KernelMetadata& m) const;
  void arenas(const JsonValue& obj, const Scope& scope, KernelMetadata& m) const;
  void tensors(const JsonValue& obj, const Scope& scope, KernelMetadata& m, std::optional<int> shared) const;
  void inputsAndOutputs(const JsonValue& obj, const Scope& scope, KernelMetadata& m) const;
};

inline KernelMetadata MetadataParser::document(std::string_view text) const {
  const std::string& path = rd_.path();
  JsonValue root;
  try {
    root = parseJson(text);
  } catch (const JsonError& e) {
    throw MetadataError(path + ": malformed JSON at byte " + std::to_string(e.offset()) + ": " + e.what());
  }
  if (root.kind != JsonValue::Object) rd_.fail(std::string("the document is ") + jsonKindName(root.kind) + ", not an object");
  const Scope top;

  {
    const JsonValue* format = root.get("format");
    if (!format || format->kind != JsonValue::String || format->text != "mkdsl-kernel-metadata")
      throw MetadataError(path + ": not mkdsl kernel metadata (\"format\" must be \"mkdsl-kernel-metadata\"; "
                                 "`mkdsl build F.mk -o F.ptx` writes it as F.meta.json)");
    const JsonValue& version = rd_.need(root, "version", "");
    if (version.kind != JsonValue::Number || version.text != "1")
      throw MetadataError(path + ": metadata version " + (version.kind == JsonValue::Number ? version.text : "?") +
                          " is not supported; this runtime reads version 1");
  }

  KernelMetadata m;
  auto optString = [&](const char* k, std::string& out) {
    if (const JsonValue* v = root.get(k)) out = rd_.string(*v, top.name(k), false);
  };
  optString("program", m.program);
  optString("config", m.config);
  optString("target", m.target);
  optString("step", m.step);
  if (const JsonValue* cv = root.get("config_values")) {
    rd_.object(*cv, top.name("config_values"));
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
        if (!end || *end || !std::isfinite(c.value)) rd_.fail(what + " is " + c.text + ", not a finite number");
      } else {
        rd_.fail(what + " is " + jsonKindName(f.second.kind) + ", not a number or true/false");
      }
      m.configValues.push_back(std::move(c));
    }
  }
  m.arch = rd_.string(rd_.need(root, "arch", ""), top.name("arch"));
  std::optional<int> shared;
  if (const JsonValue* v = root.get("shared_tensors")) shared = int(rd_.integer(*v, top.name("shared_tensors"), 0, kMaxInt));
  entry(root, top, m, shared);
  if (shared && size_t(*shared) > m.tensors.size())
    rd_.fail("\"shared_tensors\" is " + std::to_string(*shared) + " but there are " + std::to_string(m.tensors.size()) +
             " tensors");
  m.sharedTensors = shared.value_or(0);

  const JsonValue* steps = root.get("steps");
  if (!steps) return m;
  if (!shared)
    rd_.fail("there is a \"steps\" field but no \"shared_tensors\": the steps' views cannot tell the weights and state "
             "they share");
  rd_.array(*steps, top.name("steps"));
  // Step and entry names across the program, the first step's included: where each was given.
  std::map<std::string, std::string> stepNames, entries;
  const std::string first = "the program's first step (the top level)";
  if (!m.step.empty()) stepNames[m.step] = first;
  entries[m.entry] = first;
  for (size_t i = 0; i < steps->items.size(); ++i) {
    std::string where = "\"steps\"[" + std::to_string(i) + "]";
    const JsonValue& sv = rd_.object(steps->items[i], where);
    KernelMetadata s;
    s.step = rd_.string(rd_.need(sv, "step", where + ": "), where + ".step");
    where += " (\"" + s.step + "\")";
    if (auto [it, fresh] = stepNames.emplace(s.step, where); !fresh)
      rd_.fail(where + ": a second step named \"" + s.step + "\" (the first is " + it->second + ")");
    s.program = m.program;
    s.config = m.config;
    s.target = m.target;
    s.arch = m.arch;
    s.configValues = m.configValues;
    for (Arena a : {Arena::Weights, Arena::State}) s.arenaBytes[int(a)] = m.arenaBytes[int(a)];
    s.sharedTensors = m.sharedTensors;
    for (int t = 0; t < m.sharedTensors; ++t) {
      s.byName_[m.tensors[size_t(t)].name] = t;
      s.tensors.push_back(m.tensors[size_t(t)]);
    }
    entry(sv, Scope{where}, s, m.sharedTensors);
    if (auto [it, fresh] = entries.emplace(s.entry, where); !fresh)
      rd_.fail(where + ": entry \"" + s.entry + "\" is also the entry of " + it->second);
    m.otherSteps.push_back(std::move(s));
  }
  return m;
}

inline void MetadataParser::entry(const JsonValue& obj, const Scope& scope, KernelMetadata& m, std::optional<int> shared) const {
  auto need = [&](const char* k) -> const JsonValue& { return rd_.need(obj, k, scope.at()); };
  auto key = [&](const char* k) { return scope.name(k); };
  m.entry = rd_.string(need("entry"), key("entry"));
  m.grid = int(rd_.integer(need("grid"), key("grid"), 1, kMaxInt));
  m.block = int(rd_.integer(need("block"), key("block"), 1, 1024));
  if (const JsonValue* v = obj.get("compute_threads")) m.computeThreads = int(rd_.integer(*v, key("compute_threads"), 0, m.block));
  if (const JsonValue* v = obj.get("loader_warp")) m.loaderWarp = rd_.boolean(*v, key("loader_warp"));
  if (const JsonValue* v = obj.get("ring_slots")) m.ringSlots = int(rd_.integer(*v, key("ring_slots"), 0, kMaxInt));
  if (const JsonValue* v = obj.get("ring_slot_bytes")) m.ringSlotBytes = rd_.integer(*v, key("ring_slot_bytes"), 0, kMaxInt);
  m.dynamicSmemBytes = rd_.integer(need("dynamic_smem_bytes"), key("dynamic_smem_bytes"), 0, kMaxInt);
  m.syncCounters = rd_.integer(need("sync_counters"), key("sync_counters"), 0, kMaxInt / 4);
  if (const JsonValue* v = obj.get("sync_bytes")) {
    int64_t b = rd_.integer(*v, key("sync_bytes"), 0, kMax);
    if (b != m.syncCounters * 4)
      rd_.fail(key("sync_bytes") + " is " + std::to_string(b) + " but " + std::to_string(m.syncCounters) +
               " u32 counters take " + std::to_string(m.syncCounters * 4));
  }
  m.errorWords = int(rd_.integer(need("error_words"), key("error_words"), ErrWords, 1 << 20));
  params(obj, scope, m);
  arenas(obj, scope, m);
  tensors(obj, scope, m, shared);
  inputsAndOutputs(obj, scope, m);
}

// The parameters; a traced kernel (`mkdsl build --trace`) takes one more, and then "trace" says
// what its records hold.
inline void MetadataParser::params(const JsonValue& obj, const Scope& scope, KernelMetadata& m) const {
  const JsonValue* trace = obj.get("trace");
  {
    const JsonValue& params = rd_.array(rd_.need(obj, "params", scope.at()), scope.name("params"));
    std::vector<std::string> names;
    for (size_t i = 0; i < params.items.size(); ++i)
      names.push_back(rd_.string(params.items[i], scope.name("params") + "[" + std::to_string(i) + "]"));
    const std::vector<std::string> plain = kernelParamNames(false), traced = kernelParamNames(true);
    if (names == traced && !trace)
      rd_.fail(scope.name("params") + " ends with \"trace\" (a kernel built with --trace), but there is no " +
               scope.name("trace") + " field to describe its records");
    if (names == plain && trace)
      rd_.fail("there is a " + scope.name("trace") + " field, but " + scope.name("params") + " has no \"trace\" parameter");
    if (names != plain && names != traced) {
      auto list = [](const std::vector<std::string>& v) {
        std::string s;
        for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
        return s;
      };
      throw MetadataError(rd_.path() + ": " + scope.at() + "the kernel takes parameters (" + list(names) +
                          "); this runtime passes (" + list(plain) + "), and a traced kernel also " +
                          kKernelParams[ParamTrace].name + ": rebuild the kernel with a matching mkdsl");
    }
    m.params = std::move(names);
  }
  if (!trace) return;
  const std::string tk = scope.name("trace");
  rd_.object(*trace, tk);
  TraceInfo t;
  // The runtime allocates records * TraceWords * 8 bytes: the bound keeps that addressable.
  t.records = rd_.integer(rd_.need(*trace, "records", tk + ": "), tk + ".records", 0, kMax / (TraceWords * 16));
  const int64_t words = rd_.integer(rd_.need(*trace, "record_words", tk + ": "), tk + ".record_words", 0, kMax);
  if (words != TraceWords)
    rd_.fail(tk + ".record_words is " + std::to_string(words) + "; this runtime reads records of " +
             std::to_string(TraceWords) + " u64 words (start, ready, end, node << 32 | sm, ring wait, loader first, "
             "loader last, loader wait): rebuild the kernel with a matching mkdsl");
  const JsonValue& nodes = rd_.array(rd_.need(*trace, "nodes", tk + ": "), tk + ".nodes");
  for (size_t i = 0; i < nodes.items.size(); ++i) {
    const std::string where = tk + ".nodes[" + std::to_string(i) + "]";
    const JsonValue& nv = rd_.object(nodes.items[i], where);
    TraceNode n;
    n.name = rd_.string(rd_.need(nv, "name", where + ": "), where + ".name");
    n.op = rd_.string(rd_.need(nv, "op", where + ": "), where + ".op");
    n.tasks = rd_.integer(rd_.need(nv, "tasks", where + ": "), where + ".tasks", 0, kMax);
    n.bytes = rd_.integer(rd_.need(nv, "bytes", where + ": "), where + ".bytes", 0, kMax);
    if (const JsonValue* e = nv.get("bytes_exact")) n.bytesExact = rd_.boolean(*e, where + ".bytes_exact");
    t.nodes.push_back(std::move(n));
  }
  m.trace = std::move(t);
}

// The top level gives all three arenas; a further step only its activations (the weights and
// state arenas are the program's).
inline void MetadataParser::arenas(const JsonValue& obj, const Scope& scope, KernelMetadata& m) const {
  const std::string ak = scope.name("arenas");
  const JsonValue& arenas = rd_.object(rd_.need(obj, "arenas", scope.at()), ak);
  std::vector<Arena> own = {Arena::Activations};
  if (scope.top()) own = {Arena::Weights, Arena::State, Arena::Activations};
  for (const JsonMember& a : arenas.members)
    if (std::none_of(own.begin(), own.end(), [&](Arena x) { return a.first == arenaName(x); }))
      rd_.fail(ak + " has an unknown arena \"" + a.first + "\" (expected " +
               (scope.top() ? "weights, state, activations)"
                            : "activations: a step's weights and state arenas are the program's, at the top level)"));
  for (Arena a : own)
    m.arenaBytes[int(a)] = uint64_t(rd_.integer(rd_.need(arenas, arenaName(a), ak + ": "), ak + "." + arenaName(a), 0, kMax));
}

inline void MetadataParser::tensors(const JsonValue& obj, const Scope& scope, KernelMetadata& m, std::optional<int> shared) const {
  const JsonValue& tensors = rd_.array(rd_.need(obj, "tensors", scope.at()), scope.name("tensors"));
  for (size_t i = 0; i < tensors.items.size(); ++i) {
    std::string where = scope.name("tensors") + "[" + std::to_string(i) + "]";
    const JsonValue& tv = rd_.object(tensors.items[i], where);
    TensorMeta t;
    t.name = rd_.string(rd_.need(tv, "name", where + ": "), where + ".name");
    where += " (\"" + t.name + "\")";
    const std::string at = where + ": ";
    if (m.byName_.count(t.name))
      rd_.fail(at + "a second tensor of this name" +
               (m.byName_.at(t.name) < m.sharedTensors ? " (the program's shared tensors have it)" : ""));

    const std::string kind = rd_.string(rd_.need(tv, "kind", at), where + ".kind");
    bool known = false;
    for (TensorMeta::Kind k : {TensorMeta::Weight, TensorMeta::State, TensorMeta::Activation, TensorMeta::Input})
      if (kind == tensorKindName(k)) t.kind = k, known = true;
    if (!known) rd_.fail(at + "kind \"" + kind + "\" is not weight, state, activation or input");
    // The program's weights and state come first, and only they (every step's view shares them).
    if (shared) {
      const bool programWide = t.kind == TensorMeta::Weight || t.kind == TensorMeta::State;
      const std::string n = std::to_string(*shared);
      if (!scope.top() && programWide)
        rd_.fail(at + "a " + kind + " among a step's own tensors: the weights and state are the program's, the "
                 "top-level \"tensors\"[0, " + n + ") (\"shared_tensors\")");
      if (m.tensors.size() < size_t(*shared) && !programWide)
        rd_.fail(at + "an " + kind + " among the first " + n + " tensors, which \"shared_tensors\" says are the weights "
                 "and state");
      if (m.tensors.size() >= size_t(*shared) && programWide)
        rd_.fail(at + "a " + kind + " past the first " + n + " tensors (\"shared_tensors\"): the weights and state "
                 "must all come first");
    }

    const std::string dtype = rd_.string(rd_.need(tv, "dtype", at), where + ".dtype");
    auto dt = parseDType(dtype);
    if (!dt) rd_.fail(at + "dtype \"" + dtype + "\" is not bf16, f16, f32, i32 or bool");
    t.dtype = *dt;

    const JsonValue& shape = rd_.array(rd_.need(tv, "shape", at), where + ".shape");
    unsigned __int128 elems = 1;
    for (size_t d = 0; d < shape.items.size(); ++d) {
      t.shape.push_back(rd_.integer(shape.items[d], where + ".shape[" + std::to_string(d) + "]", 0, kMax));
      elems *= uint64_t(t.shape.back());
      if (elems > (unsigned __int128)(1) << 56) rd_.fail(at + "the shape " + shapeString(t.shape) + " is too large");
    }

    const std::string layout = rd_.string(rd_.need(tv, "layout", at), where + ".layout");
    auto lay = parseLayout(layout);
    if (!lay)
      rd_.fail(at + "layout \"" + layout +
               "\" is not row_major, col_major, tiled(R, C), interleave(R), padded(P) or swizzle(B)");
    if (auto problem = layoutProblem(*lay, t.shape); !problem.empty())
      rd_.fail(at + "layout \"" + layout + "\" does not fit the shape " + shapeString(t.shape) + ": " + problem);
    t.layout = *lay;

    const JsonValue& arena = rd_.need(tv, "arena", at);
    if (arena.kind == JsonValue::Null) rd_.fail(at + "no arena: the kernel gave this tensor no memory");
    const std::string an = rd_.string(arena, where + ".arena");
    if (an == "weights") t.arena = Arena::Weights;
    else if (an == "state") t.arena = Arena::State;
    else if (an == "activations") t.arena = Arena::Activations;
    else rd_.fail(at + "arena \"" + an + "\" is not weights, state or activations");
    const JsonValue& offset = rd_.need(tv, "offset", at);
    if (offset.kind == JsonValue::Null) rd_.fail(at + "no offset: the kernel gave this tensor no memory");
    t.offset = uint64_t(rd_.integer(offset, where + ".offset", 0, kMax));
    t.bytes = uint64_t(rd_.integer(rd_.need(tv, "bytes", at), where + ".bytes", 0, kMax));
    if (t.bytes < t.storageBytes())
      rd_.fail(at + std::to_string(t.bytes) + " bytes are too few for " + dtypeName(t.dtype) + shapeString(t.shape) + " " +
               t.layout.str() + " (" + std::to_string(t.storageBytes()) + " bytes)");
    const uint64_t arenaSize = m.arenaBytes[int(t.arena)];
    if (t.offset > arenaSize || t.bytes > arenaSize - t.offset)
      rd_.fail(at + "bytes " + std::to_string(t.offset) + " .. " + std::to_string(t.offset + t.bytes) + " lie outside the " +
               an + " arena (" + std::to_string(arenaSize) + " bytes)");
    if (t.offset % dtypeBytes(t.dtype) != 0)
      rd_.fail(at + "offset " + std::to_string(t.offset) + " is not aligned to its " + std::to_string(dtypeBytes(t.dtype)) +
               "-byte elements");

    if (const JsonValue* d = tv.get("declared_at"); d && d->kind != JsonValue::Null)
      t.declaredAt = rd_.string(*d, where + ".declared_at", false);
    if (t.kind == TensorMeta::Weight) {
      if (t.arena != Arena::Weights) rd_.fail(at + "a weight outside the weights arena");
      const JsonValue& sources = rd_.array(rd_.need(tv, "sources", at), where + ".sources");
      for (size_t s = 0; s < sources.items.size(); ++s)
        t.sources.push_back(rd_.string(sources.items[s], where + ".sources[" + std::to_string(s) + "]"));
    }
    m.byName_[t.name] = int(m.tensors.size());
    m.tensors.push_back(std::move(t));
  }
}

inline void MetadataParser::inputsAndOutputs(const JsonValue& obj, const Scope& scope, KernelMetadata& m) const {
  auto tensorRef = [&](const JsonValue& v, const std::string& what, bool nullable) -> int {
    if (nullable && v.kind == JsonValue::Null) return -1;
    const std::string name = rd_.string(v, what);
    int id = m.find(name);
    if (id < 0)
      rd_.fail(what + " names \"" + name + "\", which is not in " + scope.name("tensors") +
               (scope.top() ? "" : " or the program's shared tensors"));
    return id;
  };

  // The optional "role": null, or one of `allowed` by name.
  auto readRole = [&](const JsonValue& v, const std::string& where, std::initializer_list<Role> allowed) {
    const JsonValue* r = v.get("role");
    if (!r || r->kind == JsonValue::Null) return Role::None;
    const std::string name = rd_.string(*r, where + ".role");
    std::string names;
    for (Role a : allowed) {
      if (name == roleName(a)) return a;
      names += std::string(names.empty() ? "\"" : " or \"") + roleName(a) + "\"";
    }
    rd_.fail(where + ": role \"" + name + "\" is not " + names + " (or null)");
  };

  const JsonValue& inputs = rd_.array(rd_.need(obj, "inputs", scope.at()), scope.name("inputs"));
  std::set<std::string> seen;
  for (size_t i = 0; i < inputs.items.size(); ++i) {
    const std::string where = scope.name("inputs") + "[" + std::to_string(i) + "]";
    const JsonValue& iv = rd_.object(inputs.items[i], where);
    InputMeta in;
    in.name = rd_.string(rd_.need(iv, "name", where + ": "), where + ".name");
    if (!seen.insert(in.name).second) rd_.fail(where + ": a second input named \"" + in.name + "\"");
    const std::string dtype = rd_.string(rd_.need(iv, "dtype", where + ": "), where + ".dtype");
    auto dt = parseDType(dtype);
    if (!dt) rd_.fail(where + ": dtype \"" + dtype + "\" is not bf16, f16, f32, i32 or bool");
    in.dtype = *dt;
    const JsonValue* tensor = iv.get("tensor");
    in.tensor = tensor ? tensorRef(*tensor, where + ".tensor", true) : -1;
    if (const JsonValue* b = iv.get("bound"); b && b->kind != JsonValue::Null)
      in.bound = rd_.integer(*b, where + ".bound", 0, kMax);
    in.role = readRole(iv, where, {Role::Token, Role::Position, Role::Tokens, Role::Row});
    m.inputs.push_back(std::move(in));
  }

  const JsonValue& outputs = rd_.array(rd_.need(obj, "outputs", scope.at()), scope.name("outputs"));
  seen.clear();
  for (size_t i = 0; i < outputs.items.size(); ++i) {
    const std::string where = scope.name("outputs") + "[" + std::to_string(i) + "]";
    const JsonValue& ov = rd_.object(outputs.items[i], where);
    OutputMeta out;
    out.name = rd_.string(rd_.need(ov, "name", where + ": "), where + ".name");
    if (!seen.insert(out.name).second) rd_.fail(where + ": a second output named \"" + out.name + "\"");
    out.tensor = tensorRef(rd_.need(ov, "tensor", where + ": "), where + ".tensor", false);
    out.role = readRole(ov, where, {Role::Logits, Role::NextToken});
    m.outputs.push_back(std::move(out));
  }
}

}  // namespace metadata_detail

// Parses and validates metadata text: the format tag and version 1, every field's type and range,
// the parameter list (it must be kernelParamNames), tensors (dtype, layout valid for the shape,
// placement inside its arena, weights in the weights arena with string sources, unique names),
// inputs and outputs naming existing tensors; the optional "config_values" (numbers and booleans),
// tensors' "declared_at" (a string), inputs' "bound" (an integer >= 0, or null), inputs' and
// outputs' "role" (a name of Role the kind allows, or null); the optional
// "trace" (records >= 0, record_words TraceWords, nodes with name, op, tasks and bytes), present
// exactly when "params" ends with "trace".
// A program of several steps: the optional "step" (the first step's name; "" when absent) and
// "shared_tensors" (when given, the first N tensors are exactly the weights and state; absent, 0
// and no "steps"), and "steps": each element a further step with a unique "step" name, a unique
// "entry", its launch fields, params and trace, "arenas" with only "activations", its own tensors
// (activations and inputs, names unique with the shared ones), inputs and outputs, validated as
// the top level's and read into a complete view in otherSteps (the shared tensors and the
// program-wide fields copied from the top level). Unknown keys are ignored (newer compilers may
// add some). Throws MetadataError("PATH: ...").
inline KernelMetadata parseMetadata(std::string_view text, const std::string& path) {
  return metadata_detail::MetadataParser(path).document(text);
}

}  // namespace mk::abi
