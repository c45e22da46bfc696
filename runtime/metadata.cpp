#include "runtime/metadata.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>

#include "runtime/json.h"

namespace mk::runtime {

const std::vector<std::string> kKernelParams = {"weights", "state", "activations", "sync",
                                                "error",   "inputs", "epoch",      "timeout"};
const char* const kTraceParam = "trace";

const char* arenaName(Arena a) {
  switch (a) {
    case Arena::Weights: return "weights";
    case Arena::State: return "state";
    case Arena::Activations: return "activations";
  }
  return "?";
}

int KernelMetadata::find(const std::string& name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? -1 : it->second;
}

const ConfigValue* KernelMetadata::configValue(const std::string& name) const {
  for (const ConfigValue& c : configValues)
    if (c.name == name) return &c;
  return nullptr;
}

namespace {

// Field access with errors that say where: `where` is a JSON path like "tensors[3] (\"x\")".
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

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();

}  // namespace

KernelMetadata parseMetadata(std::string_view text, const std::string& path) {
  JsonValue root;
  try {
    root = parseJson(text);
  } catch (const JsonError& e) {
    throw MetadataError(path + ": malformed JSON at byte " + std::to_string(e.offset()) + ": " + e.what());
  }
  Reader rd(path);
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
    std::vector<std::string> traced = kKernelParams;
    traced.push_back(kTraceParam);
    if (names == traced && !trace)
      rd.fail("\"params\" ends with \"trace\" (a kernel built with --trace), but there is no \"trace\" field to describe "
              "its records");
    if (names == kKernelParams && trace) rd.fail("there is a \"trace\" field, but \"params\" has no \"trace\" parameter");
    if (names != kKernelParams && names != traced) {
      auto list = [](const std::vector<std::string>& v) {
        std::string s;
        for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
        return s;
      };
      throw MetadataError(path + ": the kernel takes parameters (" + list(names) + "); this runtime passes (" +
                          list(kKernelParams) + "), and a traced kernel also " + kTraceParam +
                          ": rebuild the kernel with a matching mkdsl");
    }
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
    if (kind == "weight") t.kind = TensorMeta::Weight;
    else if (kind == "state") t.kind = TensorMeta::State;
    else if (kind == "activation") t.kind = TensorMeta::Activation;
    else if (kind == "input") t.kind = TensorMeta::Input;
    else rd.fail(at + "kind \"" + kind + "\" is not weight, state, activation or input");

    const std::string dtype = rd.string(rd.need(tv, "dtype", at), where + ".dtype");
    auto dt = parseElemType(dtype);
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
      rd.fail(at + std::to_string(t.bytes) + " bytes are too few for " + elemTypeName(t.dtype) + shapeString(t.shape) + " " +
              t.layout.str() + " (" + std::to_string(t.storageBytes()) + " bytes)");
    const uint64_t arenaSize = m.arenaBytes[int(t.arena)];
    if (t.offset > arenaSize || t.bytes > arenaSize - t.offset)
      rd.fail(at + "bytes " + std::to_string(t.offset) + " .. " + std::to_string(t.offset + t.bytes) + " lie outside the " +
              an + " arena (" + std::to_string(arenaSize) + " bytes)");
    if (t.offset % elemTypeBytes(t.dtype) != 0)
      rd.fail(at + "offset " + std::to_string(t.offset) + " is not aligned to its " + std::to_string(elemTypeBytes(t.dtype)) +
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

  const JsonValue& inputs = rd.array(rd.need(root, "inputs", ""), key("inputs"));
  std::set<std::string> seen;
  for (size_t i = 0; i < inputs.items.size(); ++i) {
    const std::string where = "\"inputs\"[" + std::to_string(i) + "]";
    const JsonValue& iv = rd.object(inputs.items[i], where);
    InputMeta in;
    in.name = rd.string(rd.need(iv, "name", where + ": "), where + ".name");
    if (!seen.insert(in.name).second) rd.fail(where + ": a second input named \"" + in.name + "\"");
    const std::string dtype = rd.string(rd.need(iv, "dtype", where + ": "), where + ".dtype");
    auto dt = parseElemType(dtype);
    if (!dt) rd.fail(where + ": dtype \"" + dtype + "\" is not bf16, f16, f32, i32 or bool");
    in.dtype = *dt;
    const JsonValue* tensor = iv.get("tensor");
    in.tensor = tensor ? tensorRef(*tensor, where + ".tensor", true) : -1;
    if (const JsonValue* b = iv.get("bound"); b && b->kind != JsonValue::Null)
      in.bound = rd.integer(*b, where + ".bound", 0, kMax);
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
    m.outputs.push_back(std::move(out));
  }
  return m;
}

std::string readWholeFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw FileError(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw FileError(path + ": not a regular file");
  }
  std::string out(size_t(st.st_size), '\0');
  size_t got = 0;
  while (got < out.size()) {
    ssize_t r = ::read(fd, out.data() + got, out.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += size_t(r);
  }
  ::close(fd);
  if (got != out.size()) throw FileError(path + ": cannot read the file (it changed size while being read?)");
  return out;
}

std::string configNamesFor(const KernelMetadata& md, int64_t n, const std::vector<std::string>& hints) {
  std::vector<const ConfigValue*> all, hinted;
  for (const ConfigValue& c : md.configValues) {
    if (c.isBool || c.value != double(n)) continue;
    all.push_back(&c);
    for (const std::string& h : hints)
      if (c.name.find(h) != std::string::npos) {
        hinted.push_back(&c);
        break;
      }
  }
  const auto& use = hinted.empty() ? all : hinted;
  if (use.empty()) return "";
  std::string s;
  for (const ConfigValue* c : use) s += c->name + " = ";
  return s + std::to_string(n);
}

std::string inputRangeProblem(const KernelMetadata& md, size_t input, int64_t value) {
  if (input >= md.inputs.size()) return "";
  const InputMeta& in = md.inputs[input];
  const int64_t bound = in.bound;
  if (bound < 0 || (value >= 0 && value < bound)) return "";
  const std::string range = bound == 0 ? "none (the bound is 0)" : "0 .. " + std::to_string(bound - 1);
  const std::string verb = value < 0 ? " is outside " : " is past ";
  const std::string head = in.name + " " + std::to_string(value);
  // What the bound protects: a state tensor with a dimension this long (the KV cache: the
  // position indexes it), or a weight with this many rows (the embedding: the token indexes it).
  const TensorMeta* state = nullptr;
  const TensorMeta* rows = nullptr;
  for (const TensorMeta& t : md.tensors) {
    if (t.kind == TensorMeta::State && !state)
      for (int64_t d : t.shape)
        if (d == bound) {
          state = &t;
          break;
        }
    if (t.kind == TensorMeta::Weight && !rows && !t.shape.empty() && t.shape[0] == bound) rows = &t;
  }
  const bool tokenLike = in.name.find("token") != std::string::npos;
  if (tokenLike && rows) state = nullptr;
  auto note = [&](const std::vector<std::string>& hints) {
    std::string c = configNamesFor(md, bound, hints);
    return c.empty() ? std::string() : " (" + c + ")";
  };
  if (state) {
    bool cache = false;
    for (const TensorMeta& t : md.tensors)
      if (t.kind == TensorMeta::State && t.name.find("cache") != std::string::npos &&
          std::find(t.shape.begin(), t.shape.end(), bound) != t.shape.end())
        cache = true;
    const std::string what = cache ? "the KV cache" : "the state '" + state->name + "' (" + elemTypeName(state->dtype) +
                                                          shapeString(state->shape) + ")";
    return head + verb + what + ": positions " + range + note({"seq", "ctx", "len", "pos"});
  }
  if (rows)
    return head + verb + "the rows of '" + rows->name + "': ids " + range + note({"vocab", "token"});
  return "input '" + in.name + "' = " + std::to_string(value) + " is out of range: it must be " + range + note({});
}

KernelMetadata readMetadata(const std::string& path) {
  std::string text;
  try {
    text = readWholeFile(path);
  } catch (const FileError& e) {
    throw MetadataError(e.what());
  }
  return parseMetadata(text, path);
}

}  // namespace mk::runtime
