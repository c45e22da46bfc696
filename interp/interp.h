// The CPU interpreter of the megakernel IR: the reference semantics of the compiler's output.
//
// It runs the real per-SM task queues with their counter waits and signals, one whole task at a
// time, choosing the next SM at random (seeded) among those whose next task may run. A dependency
// the schedule forgot therefore changes the result under some interleaving instead of going
// unnoticed, and a wait nobody satisfies is reported as a deadlock, like the kernel's timeout
// record.
//
// Numerics: tensors live in logical row-major order (layouts only matter to the GPU backend),
// bf16/f16 values already rounded (round to nearest even); every expression is computed in f32 and
// rounded to its own dtype; reductions and dot products accumulate sequentially in f32 (dot
// products with a fused multiply-add); i32 values are exact.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/megakernel.h"

namespace mk::runtime {
class SafetensorsSet;
}

namespace mk::interp {

class InterpError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Rounds an f32 value to bf16 / f16 precision (nearest even) and back; the identity for F32.
float roundTo(DType t, float x);

class Interpreter {
 public:
  // Copies the megakernel and checks that its queues, counters and ids are consistent (each task
  // in exactly one queue, ids equal to positions); throws InterpError otherwise. Every tensor
  // starts zeroed.
  explicit Interpreter(const ir::Megakernel& mk);

  // Assembles every weight from its Tensor::sources (see the .cpp for concat / interleave and the
  // tied "lm_head.weight" fallback), converting to the declared dtype with rounding.
  void loadWeights(const runtime::SafetensorsSet& weights);
  // Deterministic random weights: rank <= 1 (norm gains): 1 + U(-0.1, 0.1); others U(-a, a) with
  // a = 1 / sqrt(last dim); each tensor's stream depends only on `seed` and its name.
  void randomWeights(uint64_t seed);

  // Runs one decode step. `scalarInputs` holds one value per Graph::inputs entry (in order); a
  // tensor input's entry is unused: its value is what setTensor last wrote to it. Throws InterpError on a deadlock, an
  // out-of-bounds region or an inconsistent IR; the interpreter's state is then unspecified.
  void step(const std::vector<int64_t>& scalarInputs, uint64_t interleaveSeed);
  int64_t stepsRun() const { return steps_; }

  // Any tensor's current contents, row-major (i32 / bool as floats; exact below 2^24).
  std::vector<float> tensor(int id) const;
  // An i32 / bool tensor's exact contents (floats are truncated toward zero).
  std::vector<int32_t> tensorInts(int id) const;
  // Overwrites a tensor (rounded to its dtype); for tests and for feeding activations by hand.
  void setTensor(int id, const std::vector<float>& values);
  // The step outputs (Graph::outputs) by name.
  std::map<std::string, std::vector<float>> outputs() const;

  // The task ids in the order the last step ran them.
  const std::vector<int>& lastOrder() const { return order_; }
  // When on, every store (and every load of a non-weight tensor) must lie inside the task's
  // declared Task::writes / Task::reads: a dependency analysis that under-approximates what a
  // task touches is an error even when the interleaving happens to hide it. Off by default.
  void setCheckAccesses(bool on) { checkAccesses_ = on; }

  const ir::Megakernel& megakernel() const { return mk_; }

 private:
  struct Storage {
    std::vector<float> f;    // float dtypes
    std::vector<int32_t> i;  // i32 and bool
  };
  friend struct TaskRunner;

  void runTask(const ir::Task& task, const std::vector<int64_t>& inputs);
  bool isInt(int tensor) const;

  ir::Megakernel mk_;
  std::vector<Storage> store_;       // per tensor id
  std::vector<int64_t> counters_;    // per counter id, never reset (epoch targets)
  std::vector<int> taskSm_;          // per task id: the SM whose queue holds it
  std::vector<int> order_;
  int64_t steps_ = 0;
  bool weightsLoaded_ = false;
  bool checkAccesses_ = false;
};

}  // namespace mk::interp
