// Internal to backend/: what the kernel skeleton (kernel.cpp) and the tile lowering (tile/)
// share. Not part of the backend's public API (backend.h).
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "backend/target.h"
#include "ir/megakernel.h"

namespace mk::backend {

// Where things live in the block's dynamic shared memory (bytes).
struct SmemLayout {
  static constexpr int64_t kAbortFlag = 0;      // i32: a wait of this block failed; all compute threads leave
  static constexpr int64_t kTraceRingWait = 8;  // u64, traced: thread 0's ring wait in the current task
  static constexpr int64_t kBarriers = 16;      // u64 full[kMaxSlots], then empty[kMaxSlots]
  static constexpr int kMaxSlots = 32;
  static constexpr int64_t kScratch = kBarriers + 2 * kMaxSlots * 8;  // reduction scratch
  static constexpr int64_t kScratchBytes = 1024;
  static constexpr int64_t kTiles = kScratch + kScratchBytes;          // tile locals and temporaries
};

// One lowered form of an op: a TileFunc with the layouts and kinds of what its nodes bind.
struct Variant {
  std::string key;
  const ir::TileFunc* func = nullptr;
  std::vector<const ir::Tensor*> tensors;        // per parameter: a representative bound tensor, or null
  std::vector<ir::ScalarArg::Kind> scalarKinds;  // per parameter, for scalars
  std::vector<DType> scalarTensorDtypes;         // per parameter, for ScalarArg::Tensor
  std::set<const ir::Expr*> streamed;            // weight loads that go through the ring
  std::set<const ir::Expr*> contiguous;          // ... of them, those that are one contiguous block
  int64_t largestStreamedBytes = 0;
  int maxStreamedPerStatement = 0;
};

// Decides which weight loads of `v` stream through the ring (fills v.streamed and the sizes).
void planStreaming(Variant& v, int64_t maxSlotBytes);

// What a task's code sees while it is being generated.
struct TaskEnv {
  const Target* target = nullptr;
  Builder* b = nullptr;
  llvm::Function* fn = nullptr;
  int computeThreads = 0;
  llvm::Value* tid = nullptr;        // i32; loader lanes see tid - computeThreads
  llvm::Value* smem = nullptr;       // ptr addrspace(3): the dynamic shared memory
  llvm::Value* ringBase = nullptr;   // i32 byte offset of slot 0 (folded to a constant later)
  llvm::Value* ringSlots = nullptr;  // i32
  int64_t slotBytes = 0;
  llvm::Value* seq = nullptr;        // alloca i32: ring uses so far on this side
  bool ablateCopies = false, ablateMath = false;  // Options::ablation
  int l2AheadTiles = 0;                             // ir::TargetDesc::l2AheadTiles
  int groupMmaChains = 1;                           // ir::TargetDesc::groupMmaChains
  bool warpgroupMma = false;                        // Options::warpgroupMma
  llvm::Value* traceRecord = nullptr;  // traced: ptr addrspace(1) to the entry's TraceWord record
  // Traced, compute side: thread 0's ring wait so far in the task (ptr addrspace(3) to
  // SmemLayout::kTraceRingWait; written to the record with the task's end, so the matvec loops
  // touch no global memory and hold no register for it).
  llvm::Value* ringWaitNs = nullptr;
  // Traced, loader side: allocas i64 of lane 0's wait for free slots in the task and when it
  // issued the task's first and last tile copy (0: none yet), written with the task's end.
  llvm::Value* loaderWaitNs = nullptr, *loaderFirst = nullptr, *loaderLast = nullptr;
  llvm::Value* error = nullptr;      // ptr addrspace(1) u32[errorWords]
  llvm::Value* sm = nullptr, *epoch = nullptr, *timeout = nullptr, *taskId = nullptr;
  llvm::BasicBlock* exit = nullptr;  // where a failed wait goes (after recording)
  int64_t* tilePeak = nullptr;       // the largest tile area any task used, bytes
  // The block's shared memory (ir::TargetDesc::smemPerBlock) and what the ring needs of it at the
  // least: a loop's copy pipeline (mma.cpp) takes stages from what is left.
  int64_t smemPerBlock = 0, ringNeedBytes = 0;
  // Told of each bf16/f16 `mma` that takes the scalar lowering (its shape does not fit the
  // matrix instruction), with why; the kernel reports each source place once, as a warning.
  std::function<void(const ir::Expr&, const std::string&)> scalarMma;
  std::vector<llvm::AllocaInst*>* scalarSlots = nullptr;  // kernel-entry allocas reused by every task
};

// Per parameter of the task's TileFunc: a tensor's base pointer (ptr addrspace(1)) or a scalar's
// value (float or i32).
struct TaskArgs {
  std::vector<llvm::Value*> params;
  std::vector<llvm::Value*> index;  // i32 task indices
  // Scalar parameters bound to rank-0 tensors (their index, their address): loaded after the waits.
  std::vector<std::pair<size_t, llvm::Value*>> tensorScalars;
};

enum class Side { Compute, Loader };

// Thrown by the lowering for a program it cannot lower; generate() turns it into a diagnostic.
struct Unsupported {
  std::string what;  // "a reduction of ...", in words
  std::string op;    // the TileFunc's name
};

// Emits the task body (Compute) or its weight-streaming program (Loader) at the builder's point.
void emitTask(const TaskEnv& env, const Variant& v, const TaskArgs& args, Side side);

// Shared helpers of the skeleton and the tile code.
// Whether `e` is an mma or mma_nt that runs on the target's matrix instruction: two rank-2
// operands of one dtype the instruction takes, a shape that is a multiple of its block
// (ir::mmaMisfit). The tile lowering uses it (tile/mma.cpp), and so does the block's plan.
bool onMatrixInstruction(const Target& tg, const ir::Expr& e);
// if (cond) then(), at the builder's point; the builder continues after it.
void emitIf(Builder& b, llvm::Function* fn, llvm::Value* cond, const std::function<void()>& then);
// for (i = lo; i < hi; i += step) body(i) over i32 with a signed compare. `unroll` > 0 caps
// LLVM's unrolling (1: none): a fully unrolled long loop keeps every load in flight in registers.
void emitLoop(Builder& b, llvm::Function* fn, llvm::Value* lo, llvm::Value* hi, llvm::Value* step,
              const std::function<void(llvm::Value*)>& body, int unroll = 0);
llvm::Value* smemPtr(const TaskEnv& env, llvm::Value* byteOffset);  // byteOffset: i32
// How an element of dtype `t` is stored (i16 for bf16/f16, i8 for bool), and its value once
// loaded: f32 for float dtypes, i32 for i32 and bool (the tile lowering's representation).
llvm::Type* storageType(Builder& b, DType t);
llvm::Value* widenStorage(Builder& b, DType t, llvm::Value* raw);
llvm::Value* loadStorage(Builder& b, DType t, llvm::Value* ptr);
// A bounded wait: loops until `poll(seen)` (emitted in the loop; it sets `seen` to the value it
// observed) is true. With `quickPoll`, one poll comes first and the clock is read only when it
// fails (the poll's code is then emitted twice). Past the timeout, or once another block has
// failed, it records (kind, counter, expected, seen) in the error buffer (the first failure of
// the launch wins) and gives up. Returns i1: true when it gave up. The builder continues after the loop.
llvm::Value* boundedWait(const TaskEnv& env, const std::function<llvm::Value*(llvm::Value*& seen)>& poll, int kind,
                         llvm::Value* counter, llvm::Value* expected, bool quickPoll = true);

}  // namespace mk::backend
