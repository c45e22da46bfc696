// What the generic lowering asks of a GPU target. Everything target-specific (special registers,
// barriers, atomics with scopes, async copies, fast math) is behind this interface, so the
// kernel skeleton (kernel.cpp) and the tile lowering (tile/) are shared by every backend.
//
// Lanes: the generic code works in 32-lane groups (a "warp" of tile/: `tid % 32`, butterflies
// with xor masks 1..16), whatever warpSize() is. A wave64 target exchanges values within each
// 32-lane half of its wave, which is what an xor mask below 32 asks for.
#pragma once

#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "ir/target.h"
#include "ir/tile.h"

namespace mk::backend {

using Builder = llvm::IRBuilder<>;

class Target {
 public:
  virtual ~Target() = default;

  // The architecture of the registry this target emits (ir/targets.cpp).
  virtual const ir::ArchDesc& arch() const = 0;
  virtual std::string triple() const = 0;
  virtual std::string cpu() const = 0;       // sm_90a, ...
  virtual std::string features() const = 0;  // +ptx80, ...
  // How the assembly declares a kernel entry (".entry"), to check that there is exactly one.
  virtual std::string kernelDirective() const = 0;
  // Whether LLVM's ELF object is part of the output (AMDGPU: linked into the code object);
  // otherwise the assembly is (PTX, which ptxas or the driver assembles).
  virtual bool emitsObject() const { return false; }
  virtual int warpSize() const = 0;
  virtual unsigned globalSpace() const = 0;
  virtual unsigned sharedSpace() const = 0;
  // The most shared memory (LDS) one block can have, whatever the target description says.
  virtual int64_t maxSharedPerBlock() const { return std::numeric_limits<int64_t>::max(); }

  // Marks `f` as the kernel entry launched with `threads` threads per block.
  virtual void markKernel(llvm::Function* f, int threads) const = 0;

  virtual llvm::Value* threadId(Builder& b) const = 0;
  // The same, read where it is placed: LLVM cannot hoist it out of the task loop, so values
  // derived from it stay inside the task code that uses them instead of living across all tasks.
  virtual llvm::Value* threadIdHere(Builder& b) const = 0;
  virtual llvm::Value* blockId(Builder& b) const = 0;
  virtual llvm::Value* globalTimerNs(Builder& b) const = 0;  // i64
  virtual void sleep(Builder& b, int ns) const = 0;

  // Barrier `id` among the first `threads` threads of the block (the compute threads). Every
  // barrier also orders the calling threads' earlier memory accesses before their later ones.
  virtual void barrier(Builder& b, int id, int threads) const = 0;
  // The barrier that ends a task, before one thread signals its counters with a device-scope
  // release: as barrier(b, 1, threads), and that release then covers every thread's earlier
  // stores (bar.sync gives this on NVPTX).
  virtual void releaseBarrier(Builder& b, int threads) const { barrier(b, 1, threads); }
  // The lanes of the calling warp meet; their earlier shared-memory accesses are ordered before
  // what any of them does next.
  virtual void warpSync(Builder& b) const = 0;
  // Butterfly shuffle within a warp (all lanes active): the value of lane (lane ^ mask), with
  // 0 < mask < 32.
  virtual llvm::Value* shuffleXor(Builder& b, llvm::Value* v, int mask) const = 0;

  // Device-scope acquire load and release add of a u32 in global memory.
  virtual llvm::Value* loadAcquire(Builder& b, llvm::Value* ptr) const = 0;
  virtual void releaseAdd(Builder& b, llvm::Value* ptr, llvm::Value* n) const = 0;
  // Device-scope compare-and-swap of a u32 (relaxed); returns the old value.
  virtual llvm::Value* atomicCas(Builder& b, llvm::Value* ptr, llvm::Value* expected, llvm::Value* desired) const = 0;
  // A relaxed load of a u32 that is not cached in registers across iterations (for polling).
  virtual llvm::Value* loadVolatile(Builder& b, llvm::Value* ptr) const = 0;

  // Special functions on f32 the target has instructions for (sqrt, rsqrt, sin, cos); null for the
  // rest, which the generic lowering composes (exp and log from exp2 and log2, tanh and sigmoid
  // from exp).
  virtual llvm::Value* unaryMath(Builder& b, ir::UnaryOp op, llvm::Value* x) const = 0;
  virtual llvm::Value* exp2(Builder& b, llvm::Value* x) const = 0;
  virtual llvm::Value* log2(Builder& b, llvm::Value* x) const = 0;
  // f32 -> i32 truncating toward zero, saturating, NaN -> 0.
  virtual llvm::Value* floatToInt(Builder& b, llvm::Value* x) const = 0;

  // --- The weight ring: async copies from global memory into shared memory, completing on
  // mbarriers, filled by a loader warp. A target without them (the default) runs every kernel
  // without the ring: the compute threads load weights from global memory, and none of the
  // operations below is ever called. `bulkCopy` targets copy whole rows in one instruction from
  // one lane; the others copy 16 bytes per lane and instruction.
  virtual bool asyncWeightRing() const { return false; }
  virtual bool bulkCopy() const { return false; }
  // Whether the loader warp is launched beside the block's compute threads (true) or taken from
  // them (false): a block of 17 warps leaves each thread fewer registers.
  virtual bool loaderWarpOnTop() const { return false; }
  virtual void mbarrierInit(Builder&, llvm::Value* /*bar*/, int /*count*/) const { unavailable("the weight ring"); }
  virtual void mbarrierInitFence(Builder&) const { unavailable("the weight ring"); }
  virtual void mbarrierArrive(Builder&, llvm::Value* /*bar*/) const { unavailable("the weight ring"); }
  virtual void mbarrierArriveExpectTx(Builder&, llvm::Value* /*bar*/, llvm::Value* /*bytes*/) const {
    unavailable("the weight ring");
  }
  // One non-blocking attempt: i1 true when the phase with parity `parity` has completed.
  virtual llvm::Value* mbarrierTryWait(Builder&, llvm::Value* /*bar*/, llvm::Value* /*parity*/) const {
    unavailable("the weight ring");
  }
  // bulkCopy targets: copy `bytes` (a multiple of 16) from global `src` to shared `dst`,
  // completing `bytes` transactions on `bar`.
  virtual void copyBulk(Builder&, llvm::Value* /*dst*/, llvm::Value* /*src*/, llvm::Value* /*bytes*/,
                        llvm::Value* /*bar*/) const { unavailable("the weight ring"); }
  // Other targets: copy 16 bytes; then each lane arrives on `bar` once its copies are done.
  // (copy16 also serves the compute threads' own copies: asyncCopies below.)
  virtual void copy16(Builder&, llvm::Value* /*dst*/, llvm::Value* /*src*/) const { unavailable("async copies"); }
  virtual void copyArriveOnComplete(Builder&, llvm::Value* /*bar*/) const { unavailable("the weight ring"); }

  // --- The matrix instruction (ir::ArchDesc::mma, `arch().mma`): d = a b^T + c on an
  // m x n x k block, 16-bit operands, f32 accumulators, executed by the lanes of one warp (wave)
  // together. The tile lowering (tile/mma.cpp) stages both operands in shared memory and owns the
  // tiling; the target owns the fragments: which lane holds what, and the instruction.
  //
  // Staged operands: 16-bit elements (bf16 or f16), k contiguous, a[m, k] at element
  // m * lda + k of `a` and b[n, k] at n * ldb + k of `b` (both ptr addrspace(3); lda and ldb
  // even, each row 4-byte aligned).
  struct MmaOperands {
    DType dtype = DType::BF16;
    llvm::Value* a = nullptr;
    int64_t lda = 0;
    llvm::Value* b = nullptr;
    int64_t ldb = 0;
    // b staged N-major instead: b[n, k] at k * ldb + n (mma's b[k, n] as it lies; mmaFragmentRuns).
    bool bNMajor = false;
  };
  // Whether the target has the instruction for operands of dtype `t`.
  virtual bool hasMma(DType /*t*/) const { return false; }
  // Accumulators one lane holds for one m x n block.
  virtual int mmaAccumulators() const { return 0; }
  // Where accumulator j (< mmaAccumulators()) of `lane` sits in its block: {row, column} (i32).
  virtual std::pair<llvm::Value*, llvm::Value*> mmaAccumulatorAt(Builder&, llvm::Value* /*lane*/, int /*j*/) const {
    unavailable("the matrix instruction");
  }
  // One k step over a warp tile of mBlocks x nBlocks blocks (rows m0 + i * m .., columns
  // n0 + j * n ..): acc[(i * nBlocks + j) * mmaAccumulators() + q] += its part of
  // a[rows, k0 .. k0 + k] b[columns, k0 .. k0 + k]^T, each fragment loaded once. Every lane of the
  // warp calls it with the same m0, n0 and k0; `lane` is the thread id modulo warpSize().
  virtual void mmaStep(Builder&, const MmaOperands& /*ops*/, llvm::Value* /*lane*/, llvm::Value* /*m0*/,
                       llvm::Value* /*n0*/, llvm::Value* /*k0*/, int /*mBlocks*/, int /*nBlocks*/,
                       std::vector<llvm::Value*>& /*acc*/) const {
    unavailable("the matrix instruction");
  }
  // Fragment runs (tile/rows.cpp): the target's accumulators of one m x n block lie as mma.sync's
  // (m16n8k16: accumulators 0 and 1 in row lane / 4, 2 and 3 in row lane / 4 + 8), the
  // accumulators of n blocks 2s and 2s + 1 of a strip are, as they lie, the a fragment of its k
  // step s, and mmaStep takes an N-major b. False: products stay staged in shared memory.
  virtual bool mmaFragmentRuns() const { return false; }
  // A copy of `v` that the optimizer keeps where it is made: values derived from it (a fragment
  // run's element indices, from the thread id) are not hoisted out of the task loop to stay live,
  // and take registers, through every other task of the kernel.
  virtual llvm::Value* pinned(Builder&, llvm::Value* v) const { return v; }
  // One k step of a 16-row strip whose a fragment is in registers: `aValues` are this lane's
  // accumulator-position values of n blocks 2s and 2s + 1 of a (f32, 2 * mmaAccumulators(), block
  // 2s's first), rounded to ops.dtype here; b and the accumulators as mmaStep's with mBlocks = 1.
  virtual void mmaStepRegisterA(Builder&, const MmaOperands& /*ops*/, const std::vector<llvm::Value*>& /*aValues*/,
                                llvm::Value* /*lane*/, llvm::Value* /*n0*/, llvm::Value* /*k0*/, int /*nBlocks*/,
                                std::vector<llvm::Value*>& /*acc*/) const {
    unavailable("fragment runs");
  }

  // --- The warpgroup matrix instruction (arch().warpgroupMma: wgmma on sm_90a). The four warps
  // of a warpgroup (128 consecutive threads from a multiple of 128) multiply 64 rows of a by n
  // rows of b, both staged in the swizzled layout (tile/mma.cpp): an operand of R rows (a multiple
  // of 8) and K columns (a multiple of 64) is K / 64 panels of R * 128 bytes from a 1024-byte
  // aligned start; row r of a panel is at r * 128 and its 16-byte chunk c at (c ^ r % 8) * 16.
  struct GroupMmaTile {
    llvm::Value* a = nullptr;  // ptr addrspace(3): the tile's first a row in panel 0
    int64_t aPanelBytes = 0;
    llvm::Value* b = nullptr;  // ptr addrspace(3): its first b row in panel 0 (N-major: its first column)
    int64_t bPanelBytes = 0;
    // b N-major (mma's b[k, n] as it lies: rows of k, n contiguous, in panels of 64 columns
    // bPanelBytes apart) rather than K-major.
    bool bNMajor = false;
    int n = 0;  // b rows (N-major: columns): a multiple of 8, at most 256
    // n / 2 f32 a lane: warp w of the group holds rows 16 w .. 16 w + 15 and, for each 8 columns
    // in turn, the four of mmaAccumulatorAt.
    std::vector<llvm::Value*>* acc = nullptr;
  };
  // acc += a b^T over k 0 .. K for every tile, called by all the group's lanes alike. With `wait`
  // the products (their shared-memory reads too) are done when it returns; without, they are
  // committed and still in flight, owning their accumulators and operands until groupMmaWait.
  // The k steps are dealt over `chains` independent accumulator sets (a number dividing them),
  // summed after the products (so chains above 1 always wait).
  virtual void groupMma(Builder&, DType, const std::vector<GroupMmaTile>& /*tiles*/, int64_t /*K*/,
                        int /*chains*/, bool /*wait*/) const {
    unavailable("the warpgroup matrix instruction");
  }
  // Returns once this thread's products in flight are done. `acc` (every accumulator they own)
  // pass through it, so no instruction touches them earlier.
  virtual void groupMmaWait(Builder&, std::vector<llvm::Value*>& /*acc*/) const {
    unavailable("the warpgroup matrix instruction");
  }
  // Orders this thread's shared-memory writes (stores, landed async copies) before the matrix
  // instruction's reads of them, which a barrier after it then publishes to the block.
  virtual void fenceSharedForGroupMma(Builder&) const { unavailable("the warpgroup matrix instruction"); }

  // --- The compute threads' own asynchronous copies (a copy pipeline inside a loop), with
  // copy16: commit closes the calling thread's copies issued since the last commit into a group
  // (possibly empty); wait returns once at most `pending` of its newest groups are still in
  // flight (a barrier then shows the landed ones to the block). A target without them (the
  // default) stages synchronously, and neither is called.
  virtual bool asyncCopies() const { return false; }
  virtual void asyncCopiesCommit(Builder&) const { unavailable("async copies"); }
  virtual void asyncCopiesWait(Builder&, int /*pending*/) const { unavailable("async copies"); }

  // --- Prefetching (hints: a target without them does nothing).
  // Brings the cache line at global `ptr` towards the SM (for a table read soon).
  virtual void prefetchLine(Builder&, llvm::Value* /*ptr*/) const {}
  // Brings the line at global `ptr` into the shared L2 (for data read a loop iteration later).
  virtual void prefetchLineL2(Builder&, llvm::Value* /*ptr*/) const {}

 protected:
  // A capability used on a target without it (the weight ring, async copies, the matrix
  // instruction): a compiler bug, reported as LLVM's fatal error.
  [[noreturn]] void unavailable(const char* what) const;
};

// x - k * 2 pi with k = rint(x / 2 pi), in [-pi, pi]: 2 pi in three parts, so that k * 2 pi is
// exact for the rotary angles (|x| up to ~1e5). For sin/cos instructions accurate near 0 only.
llvm::Value* reduceByTwoPi(Builder& b, llvm::Value* x);

// The target of an architecture of the registry (ir/target.h), by its family: NVPTX or AMDGPU
// (amdgcn-amd-amdhsa).
std::unique_ptr<Target> makeTarget(const ir::ArchDesc& arch);
std::unique_ptr<Target> makeNvptxTarget(const ir::ArchDesc& arch);
std::unique_ptr<Target> makeAmdgpuTarget(const ir::ArchDesc& arch);

}  // namespace mk::backend
