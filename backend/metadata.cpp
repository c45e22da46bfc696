// The metadata sidecar (backend.h, metadataJson): everything the host runtime needs to allocate
// the arenas, load the weights and launch the kernel, without reading the compiler's IR.
#include <algorithm>
#include <functional>
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

// The exclusive upper bound on the values of step input `input` that keeps every region it
// starts inside its tensor (the token indexes the embedding's rows, the position the caches'),
// or -1 when no region starts at it. The runtime checks inputs against it before a launch.
int64_t inputBound(const ir::Graph& g, int input) {
  int64_t bound = -1;
  auto tighten = [&](int64_t b) { bound = bound < 0 ? b : std::min(bound, b); };
  for (const ir::Node& n : g.nodes) {
    if (!n.func) continue;
    for (size_t p = 0; p < n.scalars.size(); ++p) {
      if (n.tensors[p] >= 0 || n.scalars[p].kind != ir::ScalarArg::Input || n.scalars[p].index != input) continue;
      auto startsAt = [&](const ir::Expr* e) {
        while (e && e->kind == ir::ExprKind::Cast && !e->operands.empty()) e = e->operands[0].get();
        return e && e->kind == ir::ExprKind::Scalar && e->index == int(p);
      };
      auto region = [&](int param, const std::vector<ir::RegionDim>& dims) {
        if (param < 0 || size_t(param) >= n.tensors.size() || n.tensors[param] < 0) return;
        const ir::Tensor& t = g.tensors[size_t(n.tensors[param])];
        for (size_t d = 0; d < dims.size() && d < t.shape.size(); ++d)
          if (startsAt(dims[d].start.get())) tighten(t.shape[d] - std::max<int64_t>(dims[d].length, 1) + 1);
      };
      std::function<void(const ir::Expr*)> expr = [&](const ir::Expr* e) {
        if (!e) return;
        if (e->kind == ir::ExprKind::Load) region(e->index, e->region);
        for (const auto& o : e->operands) expr(o.get());
        for (const auto& r : e->region) expr(r.start.get());
      };
      std::function<void(const ir::Block&)> block = [&](const ir::Block& b) {
        for (const auto& st : b) {
          if (st->kind == ir::StmtKind::Store) region(st->tensor, st->region);
          expr(st->value.get());
          expr(st->lo.get());
          expr(st->hi.get());
          for (const auto& r : st->region) expr(r.start.get());
          block(st->body);
          block(st->otherwise);
        }
      };
      block(n.func->body);
    }
  }
  return bound;
}

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
  field("config_values", "{" + [&] {
    std::string v;
    for (const auto& [name, value] : g.configValues) v += (v.empty() ? "" : ", ") + jsonQuote(name) + ": " + value;
    return v;
  }() + "}");
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
    if (!t.declaredAt.empty()) s += ", \"declared_at\": " + jsonQuote(t.declaredAt);
    s += "}";
  }
  s += g.tensors.empty() ? "],\n" : "\n  ],\n";

  auto tensorName = [&](int id) {
    return id >= 0 && id < static_cast<int>(g.tensors.size()) ? jsonQuote(g.tensors[id].name) : std::string("null");
  };
  int inputIndex = 0;
  field("inputs", array(g.inputs, [&](const ir::StepInput& in) {
          int64_t bound = inputBound(g, inputIndex++);
          return "{\"name\": " + jsonQuote(in.name) + ", \"dtype\": " + jsonQuote(dtypeName(in.dtype)) +
                 ", \"tensor\": " + tensorName(in.tensor) + ", \"bound\": " + (bound < 0 ? "null" : num(bound)) + "}";
        }));
  if (launch.traceRecords > 0) {
    // What the trace's records point at: per node, its op, task count, estimated bytes and
    // whether they are exact or an upper bound.
    std::vector<int64_t> tasks(g.nodes.size(), 0), bytes(g.nodes.size(), 0);
    std::vector<bool> exact(g.nodes.size(), true);
    for (const ir::Task& t : kernel.tasks)
      if (t.node >= 0 && size_t(t.node) < g.nodes.size()) {
        ++tasks[size_t(t.node)];
        bytes[size_t(t.node)] += t.bytes;
        if (!t.bytesExact) exact[size_t(t.node)] = false;
      }
    std::string nodes;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      // The op's name without its instantiation's arguments: "matvec_residual", not "matvec_residual<C=512, ...>".
      const std::string full = g.nodes[i].func ? g.nodes[i].func->name : "";
      const std::string op = full.substr(0, full.find('<'));
      nodes += std::string(i ? ",\n      " : "\n      ") + "{\"name\": " + jsonQuote(op + "#" + num(int64_t(i))) +
               ", \"op\": " + jsonQuote(op) + ", \"tasks\": " + num(tasks[i]) + ", \"bytes\": " + num(bytes[i]) +
               ", \"bytes_exact\": " + (exact[i] ? "true" : "false") + "}";
    }
    field("trace", "{\"records\": " + num(launch.traceRecords) + ", \"record_words\": " + num(TraceWords) +
                       ", \"nodes\": [" + nodes + "\n    ]}");
  }
  field("outputs", array(g.outputs, [&](const std::pair<std::string, int>& out) {
          return "{\"name\": " + jsonQuote(out.first) + ", \"tensor\": " + tensorName(out.second) + "}";
        }),
        true);
  return s + "}\n";
}

}  // namespace mk::backend
