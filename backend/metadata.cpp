// The metadata sidecar (backend.h, metadataJson): everything the host runtime needs to allocate
// the arenas, load the weights and launch the kernel, without reading the compiler's IR.
#include <string>
#include <vector>

#include "backend/backend.h"
#include "support/json.h"

namespace mk::backend {
namespace {

const char* kindName(ir::Tensor::Kind k) {
  switch (k) {
    case ir::Tensor::Weight: return "weight";
    case ir::Tensor::State: return "state";
    case ir::Tensor::Activation: return "activation";
    case ir::Tensor::Input: return "input";
  }
  return "?";
}

template <typename T, typename F>
std::string array(const std::vector<T>& items, F&& item) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + item(items[i]);
  return s + "]";
}

std::string quoted(const std::string& s) { return jsonQuote(s); }

}  // namespace

std::string metadataJson(const ir::Megakernel& kernel, const LaunchInfo& launch) {
  const ir::Graph& g = kernel.graph;
  // Where each tensor lives: arena name and buffer, by tensor id (planMemory gives every tensor
  // one buffer; a tensor without one, e.g. in a hand-built kernel, gets nulls).
  struct Placement {
    const char* arena = nullptr;
    const ir::Buffer* buffer = nullptr;
  };
  std::vector<Placement> placed(g.tensors.size());
  auto place = [&](const std::vector<ir::Buffer>& buffers, const char* arena) {
    for (const ir::Buffer& b : buffers)
      if (b.tensor >= 0 && b.tensor < static_cast<int>(placed.size())) placed[b.tensor] = {arena, &b};
  };
  place(kernel.memory.weights, "weights");
  place(kernel.memory.state, "state");
  place(kernel.memory.activations, "activations");

  auto num = [](int64_t v) { return std::to_string(v); };
  std::string s = "{\n";
  auto field = [&](const char* key, const std::string& value, bool last = false) {
    s += "  " + jsonQuote(key) + ": " + value + (last ? "\n" : ",\n");
  };
  field("format", jsonQuote("mkdsl-kernel-metadata"));
  field("version", "1");
  field("program", jsonQuote(g.program));
  field("config", jsonQuote(g.config));
  field("target", jsonQuote(kernel.target.name));
  field("arch", jsonQuote(launch.arch));
  field("entry", jsonQuote(launch.entry));
  field("grid", num(launch.gridSize));
  field("block", num(launch.blockSize));
  field("compute_threads", num(launch.computeThreads));
  field("loader_warp", launch.loaderWarp ? "true" : "false");
  field("ring_slots", num(launch.ringSlots));
  field("ring_slot_bytes", num(launch.ringSlotBytes));
  field("dynamic_smem_bytes", num(launch.dynamicSmemBytes));
  field("sync_counters", num(launch.syncCounters));
  field("sync_bytes", num(launch.syncCounters * 4));  // u32 counters
  field("error_words", num(launch.errorWords));
  field("params", array(launch.params, quoted));
  field("arenas", "{\"weights\": " + num(kernel.memory.weightBytes) + ", \"state\": " +
                      num(kernel.memory.stateBytes) + ", \"activations\": " +
                      num(kernel.memory.activationBytes) + "}");

  // One tensor per line: large models have thousands, and a line each keeps the file greppable.
  s += "  \"tensors\": [";
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    const ir::Tensor& t = g.tensors[i];
    const Placement& p = placed[i];
    s += i ? ",\n    " : "\n    ";
    s += "{\"name\": " + jsonQuote(t.name) + ", \"kind\": " + jsonQuote(kindName(t.kind)) +
         ", \"dtype\": " + jsonQuote(dtypeName(t.dtype)) +
         ", \"shape\": " + array(t.shape, [](int64_t d) { return std::to_string(d); }) +
         ", \"layout\": " + jsonQuote(t.layout.str()) +
         ", \"arena\": " + (p.arena ? jsonQuote(p.arena) : "null") +
         ", \"offset\": " + (p.buffer ? num(p.buffer->offset) : "null") +
         ", \"bytes\": " + num(p.buffer ? p.buffer->bytes : t.bytes());
    if (t.kind == ir::Tensor::Weight) s += ", \"sources\": " + array(t.sources, quoted);
    s += "}";
  }
  s += g.tensors.empty() ? "],\n" : "\n  ],\n";

  auto tensorName = [&](int id) {
    return id >= 0 && id < static_cast<int>(g.tensors.size()) ? jsonQuote(g.tensors[id].name) : std::string("null");
  };
  field("inputs", array(g.inputs, [&](const ir::StepInput& in) {
          return "{\"name\": " + jsonQuote(in.name) + ", \"dtype\": " + jsonQuote(dtypeName(in.dtype)) +
                 ", \"tensor\": " + tensorName(in.tensor) + "}";
        }));
  field("outputs", array(g.outputs, [&](const std::pair<std::string, int>& out) {
          return "{\"name\": " + jsonQuote(out.first) + ", \"tensor\": " + tensorName(out.second) + "}";
        }),
        true);
  return s + "}\n";
}

}  // namespace mk::backend
