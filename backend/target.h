// What the generic lowering asks of a GPU target. Everything target-specific (special registers,
// barriers, atomics with scopes, async copies, fast math) is behind this interface, so the
// kernel skeleton (kernel.cpp) and the tile lowering (tile.cpp) are shared by every backend.
#pragma once

#include <memory>
#include <string>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "ir/tile.h"

namespace mk::backend {

using Builder = llvm::IRBuilder<>;

class Target {
 public:
  virtual ~Target() = default;

  virtual std::string triple() const = 0;
  virtual std::string cpu() const = 0;       // sm_90a, ...
  virtual std::string features() const = 0;  // +ptx80, ...
  virtual int warpSize() const = 0;
  virtual unsigned globalSpace() const = 0;
  virtual unsigned sharedSpace() const = 0;

  // Marks `f` as the kernel entry launched with `threads` threads per block.
  virtual void markKernel(llvm::Function* f, int threads) const = 0;

  virtual llvm::Value* threadId(Builder& b) const = 0;
  // The same, read where it is placed: LLVM cannot hoist it out of the task loop, so values
  // derived from it stay inside the task code that uses them instead of living across all tasks.
  virtual llvm::Value* threadIdHere(Builder& b) const = 0;
  virtual llvm::Value* blockId(Builder& b) const = 0;
  virtual llvm::Value* globalTimerNs(Builder& b) const = 0;  // i64
  virtual void sleep(Builder& b, int ns) const = 0;

  // Barrier `id` among the first `threads` threads of the block (the compute threads).
  virtual void barrier(Builder& b, int id, int threads) const = 0;
  // The lanes of the calling warp meet; their earlier shared-memory accesses are ordered before
  // what any of them does next.
  virtual void warpSync(Builder& b) const = 0;
  // Butterfly shuffle within a warp (all lanes active): the value of lane (lane ^ mask).
  virtual llvm::Value* shuffleXor(Builder& b, llvm::Value* v, int mask) const = 0;

  // Device-scope acquire load and release add of a u32 in global memory.
  virtual llvm::Value* loadAcquire(Builder& b, llvm::Value* ptr) const = 0;
  virtual void releaseAdd(Builder& b, llvm::Value* ptr, llvm::Value* n) const = 0;
  // Device-scope compare-and-swap of a u32 (relaxed); returns the old value.
  virtual llvm::Value* atomicCas(Builder& b, llvm::Value* ptr, llvm::Value* expected, llvm::Value* desired) const = 0;
  // A relaxed load of a u32 that is not cached in registers across iterations (for polling).
  virtual llvm::Value* loadVolatile(Builder& b, llvm::Value* ptr) const = 0;

  // Special functions on f32 (exp, log, sqrt, rsqrt, sin, cos, tanh, sigmoid's exp).
  virtual llvm::Value* unaryMath(Builder& b, ir::UnaryOp op, llvm::Value* x) const = 0;
  virtual llvm::Value* exp2(Builder& b, llvm::Value* x) const = 0;
  virtual llvm::Value* log2(Builder& b, llvm::Value* x) const = 0;
  // f32 -> i32 truncating toward zero, saturating, NaN -> 0.
  virtual llvm::Value* floatToInt(Builder& b, llvm::Value* x) const = 0;

  // --- The weight ring: async copies from global memory into shared memory, completing on
  // mbarriers. `bulkCopy` targets copy whole rows in one instruction from one lane; the others
  // copy 16 bytes per lane and instruction.
  virtual bool bulkCopy() const = 0;
  // Whether the loader warp is launched beside the block's compute threads (true) or taken from
  // them (false): a block of 17 warps leaves each thread fewer registers.
  virtual bool loaderWarpOnTop() const = 0;
  virtual void mbarrierInit(Builder& b, llvm::Value* bar, int count) const = 0;
  virtual void mbarrierInitFence(Builder& b) const = 0;
  virtual void mbarrierArrive(Builder& b, llvm::Value* bar) const = 0;
  virtual void mbarrierArriveExpectTx(Builder& b, llvm::Value* bar, llvm::Value* bytes) const = 0;
  // One non-blocking attempt: i1 true when the phase with parity `parity` has completed.
  virtual llvm::Value* mbarrierTryWait(Builder& b, llvm::Value* bar, llvm::Value* parity) const = 0;
  // bulkCopy targets: copy `bytes` (a multiple of 16) from global `src` to shared `dst`,
  // completing `bytes` transactions on `bar`.
  virtual void copyBulk(Builder& b, llvm::Value* dst, llvm::Value* src, llvm::Value* bytes, llvm::Value* bar) const = 0;
  // Other targets: copy 16 bytes; then each lane arrives on `bar` once its copies are done.
  virtual void copy16(Builder& b, llvm::Value* dst, llvm::Value* src) const = 0;
  virtual void copyArriveOnComplete(Builder& b, llvm::Value* bar) const = 0;

  // --- Prefetching (hints: a target without them does nothing).
  // Brings the cache line at global `ptr` towards the SM (for a table read soon).
  virtual void prefetchLine(Builder&, llvm::Value* /*ptr*/) const {}
};

// NVPTX: sm_90a, sm_90, sm_80. Null for an unknown architecture.
std::unique_ptr<Target> makeNvptxTarget(const std::string& arch);

}  // namespace mk::backend
