// The metadata sidecar (backend.h, metadataJson): everything the host runtime needs to allocate
// the arenas, load the weights and launch the kernel, without reading the compiler's IR. Its
// schema and text are abi/metadata.h's; this fills it from the megakernel IR.
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "abi/metadata.h"
#include "backend/backend.h"
#include "ir/static_facts.h"

namespace mk::backend {
namespace {

abi::TensorMeta::Kind metaKind(ir::Tensor::Kind k) {
  switch (k) {
    case ir::Tensor::Weight: return abi::TensorMeta::Weight;
    case ir::Tensor::State: return abi::TensorMeta::State;
    case ir::Tensor::Activation: return abi::TensorMeta::Activation;
    case ir::Tensor::Input: return abi::TensorMeta::Input;
  }
  return abi::TensorMeta::Activation;
}

// What step input `input` starts: the exclusive upper bound on its values that keeps every
// region it starts inside its tensor (the token indexes the embedding's rows, the position the
// caches'), -1 when no region starts at it; and which kinds of tensor those regions are in, for
// its role. A region may start at the input plus a non-negative offset of task indices and
// constants (a prefill's `pos0 + b * BT`): the bound then leaves room for the largest offset.
// The runtime checks inputs against the bound before a launch.
struct InputUse {
  int64_t bound = -1;
  bool startsWeightRow = false;      // dim 0 of a weight region
  bool startsState = false;          // any dim of a state tensor's region
  bool startsActivationRow = false;  // dim 0 of an activation's region
};

InputUse inputUse(const ir::Graph& g, int input) {
  InputUse use;
  auto tighten = [&](int64_t b) { use.bound = use.bound < 0 ? b : std::min(use.bound, b); };
  for (const ir::Node& n : g.nodes) {
    if (!n.func) continue;
    const ir::StaticFacts facts(*n.func);
    const int inputTensor = g.inputs[size_t(input)].tensor;
    for (size_t p = 0; p < n.scalars.size(); ++p) {
      // A scalar input is the op's scalar parameter p; a tensor input (a prefill's tokens) is
      // tensor parameter p, whose elements, each loaded alone, are what start regions.
      const bool tensorParam = inputTensor >= 0 && n.tensors[p] == inputTensor;
      const bool scalarParam = inputTensor < 0 && n.tensors[p] < 0 && n.scalars[p].kind == ir::ScalarArg::Input &&
                               n.scalars[p].index == input;
      if (!tensorParam && !scalarParam) continue;
      auto isInput = [&](const ir::Expr* e) {
        if (scalarParam) return e->kind == ir::ExprKind::Scalar && e->index == int(p);
        if (e->kind != ir::ExprKind::Load || e->index != int(p)) return false;
        for (const ir::RegionDim& d : e->region)
          if (d.length > 1) return false;
        return true;
      };
      // The largest offset from the input at which `e` starts a region; nullopt when `e` is not
      // the input (cast or not) plus such an offset.
      std::function<std::optional<int64_t>(const ir::Expr*, int)> offsetFromInput = [&](const ir::Expr* e, int depth)
          -> std::optional<int64_t> {
        while (e && e->kind == ir::ExprKind::Cast && !e->operands.empty()) e = e->operands[0].get();
        if (!e || depth > 32) return std::nullopt;
        if (isInput(e)) return 0;
        if (e->kind == ir::ExprKind::Local) {
          const ir::Expr* v = facts.letValue(e->index);
          return v ? offsetFromInput(v, depth + 1) : std::nullopt;
        }
        if (e->kind == ir::ExprKind::Binary && e->binary == ir::BinaryOp::Add && e->operands.size() == 2) {
          for (int side = 0; side < 2; ++side) {
            auto base = offsetFromInput(e->operands[size_t(side)].get(), depth + 1);
            const ir::Expr* other = e->operands[size_t(1 - side)].get();
            auto off = other ? facts.largestValue(*other) : std::nullopt;
            if (base && off) return *base + *off;
          }
        }
        return std::nullopt;
      };
      auto region = [&](int param, const std::vector<ir::RegionDim>& dims) {
        if (param < 0 || size_t(param) >= n.tensors.size() || n.tensors[param] < 0) return;
        const ir::Tensor& t = g.tensors[size_t(n.tensors[param])];
        for (size_t d = 0; d < dims.size() && d < t.shape.size(); ++d) {
          const std::optional<int64_t> off = offsetFromInput(dims[d].start.get(), 0);
          if (!off) continue;
          tighten(t.shape[d] - std::max<int64_t>(dims[d].length, 1) - *off + 1);
          if (t.kind == ir::Tensor::Weight && d == 0) use.startsWeightRow = true;
          if (t.kind == ir::Tensor::State) use.startsState = true;
          if (t.kind == ir::Tensor::Activation && d == 0) use.startsActivationRow = true;
        }
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
  return use;
}

// An i32 input's role (abi::Role): a position indexes state, a token a weight's rows, and so do
// a tensor of tokens' elements; a row indexes activations' rows only. One that does several of
// these, or none, is left to the caller to name.
abi::Role inputRole(const ir::StepInput& in, const InputUse& use) {
  if (in.dtype != DType::I32) return abi::Role::None;
  if (in.tensor >= 0) return use.startsWeightRow && !use.startsState ? abi::Role::Tokens : abi::Role::None;
  if (use.startsWeightRow != use.startsState) return use.startsState ? abi::Role::Position : abi::Role::Token;
  if (!use.startsWeightRow && use.startsActivationRow) return abi::Role::Row;
  return abi::Role::None;
}

// One step's view: the shared weights and state, then its own tensors.
abi::KernelMetadata stepMetadata(const ir::Megakernel& kernel, const LaunchInfo& launch) {
  const ir::Graph& g = kernel.graph;
  abi::KernelMetadata m;
  m.program = g.program;
  m.config = g.config;
  m.step = g.step;
  while (size_t(m.sharedTensors) < g.tensors.size() && (g.tensors[size_t(m.sharedTensors)].kind == ir::Tensor::Weight ||
                                                         g.tensors[size_t(m.sharedTensors)].kind == ir::Tensor::State))
    ++m.sharedTensors;
  for (const auto& [name, text] : g.configValues) {
    abi::ConfigValue c;
    c.name = name;
    c.text = text;
    c.isBool = text == "true" || text == "false";
    c.value = c.isBool ? double(text == "true") : std::strtod(text.c_str(), nullptr);
    m.configValues.push_back(std::move(c));
  }
  m.target = kernel.target.name;
  static_cast<abi::Launch&>(m) = launch;
  m.arenaBytes[int(abi::Arena::Weights)] = uint64_t(kernel.memory.weightBytes);
  m.arenaBytes[int(abi::Arena::State)] = uint64_t(kernel.memory.stateBytes);
  m.arenaBytes[int(abi::Arena::Activations)] = uint64_t(kernel.memory.activationBytes);

  for (const ir::Tensor& t : g.tensors) {
    abi::TensorMeta tm;
    tm.kind = metaKind(t.kind);
    tm.name = t.name;
    tm.dtype = t.dtype;
    tm.shape = t.shape;
    tm.layout = t.layout;
    tm.placed = false;  // planMemory gives every tensor one buffer; a hand-built kernel may not
    tm.bytes = uint64_t(t.bytes());
    if (t.kind == ir::Tensor::Weight) tm.sources = t.sources;
    tm.declaredAt = t.declaredAt;
    m.tensors.push_back(std::move(tm));
  }
  auto place = [&](const std::vector<ir::Buffer>& buffers, abi::Arena arena) {
    for (const ir::Buffer& b : buffers)
      if (b.tensor >= 0 && b.tensor < static_cast<int>(m.tensors.size())) {
        abi::TensorMeta& tm = m.tensors[size_t(b.tensor)];
        tm.placed = true;
        tm.arena = arena;
        tm.offset = uint64_t(b.offset);
        tm.bytes = uint64_t(b.bytes);
      }
  };
  place(kernel.memory.weights, abi::Arena::Weights);
  place(kernel.memory.state, abi::Arena::State);
  place(kernel.memory.activations, abi::Arena::Activations);

  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const ir::StepInput& in = g.inputs[i];
    const InputUse use = inputUse(g, int(i));
    m.inputs.push_back({in.name, in.dtype, in.tensor, use.bound, inputRole(in, use)});
  }
  if (launch.traceRecords > 0) {
    // What the trace's records point at: per node, its op, task count, estimated bytes and
    // whether they are exact or an upper bound.
    abi::TraceInfo trace;
    trace.records = launch.traceRecords;
    trace.nodes.resize(g.nodes.size());
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      // The op's name without its instantiation's arguments: "matvec_residual", not "matvec_residual<C=512, ...>".
      const std::string full = g.nodes[i].func ? g.nodes[i].func->name : "";
      trace.nodes[i].op = full.substr(0, full.find('<'));
      trace.nodes[i].name = trace.nodes[i].op + "#" + std::to_string(i);
    }
    for (const ir::Task& t : kernel.tasks)
      if (t.node >= 0 && size_t(t.node) < g.nodes.size()) {
        abi::TraceNode& n = trace.nodes[size_t(t.node)];
        ++n.tasks;
        n.bytes += t.bytes;
        if (!t.bytesExact) n.bytesExact = false;
      }
    m.trace = std::move(trace);
  }
  // The first f32 vector is the logits, the first i32 scalar the next token (abi::Role).
  bool logits = false, next = false;
  for (const auto& [name, tensor] : g.outputs) {
    const ir::Tensor& t = g.tensors[size_t(tensor)];
    abi::Role role = abi::Role::None;
    if (!logits && t.dtype == DType::F32 && t.shape.size() == 1) role = abi::Role::Logits, logits = true;
    else if (!next && t.dtype == DType::I32 && t.shape.empty()) role = abi::Role::NextToken, next = true;
    m.outputs.push_back({name, tensor, role});
  }
  return m;
}

}  // namespace

std::string metadataJson(const std::vector<ir::Megakernel>& steps, const std::vector<LaunchInfo>& launches) {
  if (steps.empty() || launches.size() != steps.size()) return abi::metadataText({});
  abi::KernelMetadata m = stepMetadata(steps[0], launches[0]);
  for (size_t i = 1; i < steps.size(); ++i) m.otherSteps.push_back(stepMetadata(steps[i], launches[i]));
  return abi::metadataText(m);
}

}  // namespace mk::backend
