// The graph IR: one step of the program as a dataflow of op instances on tensors with concrete
// shapes and layouts, after inlining fns and unrolling layer loops.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "abi/layout.h"
#include "ir/tile.h"

namespace mk::ir {

using Layout = abi::Layout;

struct Tensor {
  int id = 0;
  std::string name;  // unique in the graph: "layer[3].k_cache", "h.7"
  enum Kind { Weight, State, Activation, Input } kind = Activation;
  DType dtype = DType::F32;
  Shape shape;       // empty: a scalar
  Layout layout;
  // Weights: the safetensors names it is assembled from (templates resolved). Several sources
  // are concatenated along dim 0, or interleaved by `layout.args[0]` rows for Interleave.
  std::vector<std::string> sources;
  // Weights and state: where the program declares it ("examples/llama.mk:42:5"), for messages
  // of tools that see only the compiled kernel (the runtime names it when a weight is wrong).
  std::string declaredAt;
  int64_t elements() const;
  int64_t storageElements() const;  // elements in memory: padded(P) rows hold P
  int64_t bytes() const;            // of its storage
};

// How an op's scalar parameter gets its value each step.
struct ScalarArg {
  enum Kind { Input, Const, Tensor } kind = Const;
  int index = 0;      // Input: step input index; Tensor: a rank-0 tensor id
  double value = 0;   // Const
};

// One op call.
struct Node {
  int id = 0;
  std::shared_ptr<const TileFunc> func;
  // Per TileFunc parameter (params then results): the tensor bound to it (-1 for scalars).
  std::vector<int> tensors;
  std::vector<ScalarArg> scalars;  // per parameter; meaningful where tensors[i] < 0
  std::vector<int> after;          // @after: tensors whose writers this node also waits for
  bool gridSyncBefore = false;     // a `sync grid;` stands between the previous node and this one
  int cluster = 1;                 // @cluster(n)
  SourceRange call;                // the call that made it
};

struct StepInput {
  std::string name;
  DType dtype;
  int tensor = -1;  // for tensor inputs; scalars have none
};

struct Graph {
  std::string program;  // the root file
  std::string config;   // the config it was built for
  std::string step;     // the step it is ("decode")
  // Its fields, evaluated, as JSON number or boolean text ("128256", "500000.0", "true"), by name.
  std::vector<std::pair<std::string, std::string>> configValues;
  // The program's weights and state first (every step's graph has them all, in one order, so they
  // lie at the same offsets in every step's arenas), then the step's own tensors.
  std::vector<Tensor> tensors;
  std::vector<Node> nodes;  // in program order, a topological order of the dataflow
  std::vector<StepInput> inputs;
  std::vector<std::pair<std::string, int>> outputs;  // step result name -> tensor
};

}  // namespace mk::ir
