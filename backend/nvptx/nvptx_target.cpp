// NVPTX (the registry's ArchFamily::Nvptx architectures). What LLVM 19 cannot select, or selects without the ordering we
// need (scoped acquire loads and release reductions, mbarriers, bulk async copies, the global
// timer), is written here as inline PTX: this file and wgmma.cpp (the warpgroup matrix
// instruction) are the places that spell PTX by hand.
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <algorithm>

#include "backend/nvptx/inline_ptx.h"
#include "backend/nvptx/mma_sync.h"
#include "backend/nvptx/wgmma.h"
#include "backend/target.h"

namespace mk::backend {
namespace {

using llvm::Type;
using llvm::Value;
using nvptx::inlinePtx;

class NvptxTarget final : public Target {
 public:
  explicit NvptxTarget(const ir::ArchDesc& arch) : arch_(arch) {}

  const ir::ArchDesc& arch() const override { return arch_; }
  std::string triple() const override { return "nvptx64-nvidia-cuda"; }
  std::string cpu() const override { return arch_.name; }
  // PTX ISA 8.0 is the first with sm_90a, mbarrier expect_tx and cp.async.bulk.
  std::string features() const override { return "+ptx80"; }
  std::string kernelDirective() const override { return ".entry"; }
  int warpSize() const override { return 32; }
  unsigned globalSpace() const override { return 1; }
  unsigned sharedSpace() const override { return 3; }
  void markKernel(llvm::Function* f, int threads) const override {
    llvm::Module& m = *f->getParent();
    llvm::LLVMContext& c = m.getContext();
    auto* i32 = Type::getInt32Ty(c);
    auto* md = m.getOrInsertNamedMetadata("nvvm.annotations");
    auto add = [&](const char* key, int v) {
      md->addOperand(llvm::MDNode::get(c, {llvm::ValueAsMetadata::get(f), llvm::MDString::get(c, key),
                                           llvm::ValueAsMetadata::get(llvm::ConstantInt::get(i32, v))}));
    };
    add("kernel", 1);
    add("maxntidx", threads);
    add("minctasm", 1);
    // One block per SM may use the whole register file, in units of 8 per thread: 64K registers
    // in four 16K banks, one per scheduler, whose warps are dealt round-robin, so the bank with
    // the most warps sets the limit (128 for 16 warps, 96 for 17). Without this ptxas budgets
    // for a rounded-up block and spills.
    const int warps = (threads + 31) / 32;
    add("maxnreg", std::min(255, 16384 / (((warps + 3) / 4) * 32) / 8 * 8));
  }

  Value* threadId(Builder& b) const override {
    return b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}, {});
  }
  Value* threadIdHere(Builder& b) const override {
    return inlinePtx(b, b.getInt32Ty(), {}, "mov.u32 $0, %tid.x;", "=r", true);
  }
  Value* blockId(Builder& b) const override {
    return b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, {}, {});
  }
  Value* globalTimerNs(Builder& b) const override {
    return inlinePtx(b, b.getInt64Ty(), {}, "mov.u64 $0, %globaltimer;", "=l", true);
  }
  void sleep(Builder& b, int ns) const override {
    inlinePtx(b, b.getVoidTy(), {}, "nanosleep.u32 " + std::to_string(ns) + ";", "", true);
  }

  void barrier(Builder& b, int id, int threads) const override {
    inlinePtx(b, b.getVoidTy(), {}, "bar.sync " + std::to_string(id) + ", " + std::to_string(threads) + ";",
            "~{memory}", true);
  }
  void warpSync(Builder& b) const override {
    inlinePtx(b, b.getVoidTy(), {}, "bar.warp.sync -1;", "~{memory}", true);
  }
  Value* shuffleXor(Builder& b, Value* v, int mask) const override {
    bool f = v->getType()->isFloatTy();
    Value* x = f ? b.CreateBitCast(v, b.getInt32Ty()) : v;
    Value* r = b.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_bfly_i32, {},
                                 {b.getInt32(0xffffffffu), x, b.getInt32(mask), b.getInt32(0x1f)});
    return f ? b.CreateBitCast(r, b.getFloatTy()) : r;
  }

  Value* loadAcquire(Builder& b, Value* ptr) const override {
    return inlinePtx(b, b.getInt32Ty(), {addr(b, ptr)}, "ld.acquire.gpu.global.u32 $0, [$1];", "=r,l,~{memory}", true);
  }
  void releaseAdd(Builder& b, Value* ptr, Value* n) const override {
    inlinePtx(b, b.getVoidTy(), {addr(b, ptr), n}, "red.release.gpu.global.add.u32 [$0], $1;", "l,r,~{memory}", true);
  }
  Value* atomicCas(Builder& b, Value* ptr, Value* expected, Value* desired) const override {
    return inlinePtx(b, b.getInt32Ty(), {addr(b, ptr), expected, desired}, "atom.relaxed.gpu.global.cas.b32 $0, [$1], $2, $3;",
                   "=r,l,r,r,~{memory}", true);
  }
  Value* loadVolatile(Builder& b, Value* ptr) const override {
    return inlinePtx(b, b.getInt32Ty(), {addr(b, ptr)}, "ld.relaxed.gpu.global.u32 $0, [$1];", "=r,l,~{memory}", true);
  }

  Value* exp2(Builder& b, Value* x) const override { return fop(b, "ex2.approx.f32", x); }
  Value* log2(Builder& b, Value* x) const override { return fop(b, "lg2.approx.f32", x); }

  Value* unaryMath(Builder& b, ir::UnaryOp op, Value* x) const override {
    switch (op) {
      case ir::UnaryOp::Sqrt: return fop(b, "sqrt.rn.f32", x);
      case ir::UnaryOp::Rsqrt: return fop(b, "rsqrt.approx.f32", x);
      case ir::UnaryOp::Sin:
      case ir::UnaryOp::Cos:  // sin.approx/cos.approx are accurate on [-pi, pi]
        return fop(b, op == ir::UnaryOp::Sin ? "sin.approx.f32" : "cos.approx.f32", reduceByTwoPi(b, x));
      default: return nullptr;  // the generic lowering composes the rest from exp
    }
  }
  Value* floatToInt(Builder& b, Value* x) const override {
    return inlinePtx(b, b.getInt32Ty(), {x}, "cvt.rzi.s32.f32 $0, $1;", "=r,f", false);
  }

  bool asyncWeightRing() const override { return true; }
  bool bulkCopy() const override { return arch_.bulkAsyncCopy; }
  bool loaderWarpOnTop() const override { return arch_.loaderWarpOnTop; }
  void mbarrierInit(Builder& b, Value* bar, int count) const override {
    inlinePtx(b, b.getVoidTy(), {addr(b, bar)}, "mbarrier.init.shared.b64 [$0], " + std::to_string(count) + ";",
            "l,~{memory}", true);
  }
  void mbarrierInitFence(Builder& b) const override {
    // Makes the initialised barriers visible to the async proxy that completes bulk copies.
    if (arch_.bulkAsyncCopy) inlinePtx(b, b.getVoidTy(), {}, "fence.mbarrier_init.release.cluster;", "~{memory}", true);
  }
  void mbarrierArrive(Builder& b, Value* bar) const override {
    inlinePtx(b, b.getVoidTy(), {addr(b, bar)}, "{ .reg .b64 st; mbarrier.arrive.shared.b64 st, [$0]; }", "l,~{memory}", true);
  }
  void mbarrierArriveExpectTx(Builder& b, Value* bar, Value* bytes) const override {
    inlinePtx(b, b.getVoidTy(), {addr(b, bar), bytes},
            "{ .reg .b64 st; mbarrier.arrive.expect_tx.shared.b64 st, [$0], $1; }", "l,r,~{memory}", true);
  }
  Value* mbarrierTryWait(Builder& b, Value* bar, Value* parity) const override {
    std::string op = arch_.bulkAsyncCopy ? "mbarrier.try_wait.parity.shared.b64" : "mbarrier.test_wait.parity.shared.b64";
    Value* r = inlinePtx(b, b.getInt32Ty(), {addr(b, bar), parity},
                       "{ .reg .pred p; " + op + " p, [$1], $2; selp.u32 $0, 1, 0, p; }", "=r,l,r,~{memory}", true);
    return b.CreateICmpNE(r, b.getInt32(0));
  }
  void copyBulk(Builder& b, Value* dst, Value* src, Value* bytes, Value* bar) const override {
    inlinePtx(b, b.getVoidTy(), {addr(b, dst), addr(b, src), bytes, addr(b, bar)},
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1], $2, [$3];",
            "l,l,r,l,~{memory}", true);
  }
  void copy16(Builder& b, Value* dst, Value* src) const override {
    inlinePtx(b, b.getVoidTy(), {addr(b, dst), addr(b, src)}, "cp.async.cg.shared.global [$0], [$1], 16;",
            "l,l,~{memory}", true);
  }
  bool asyncCopies() const override { return true; }
  void asyncCopiesCommit(Builder& b) const override {
    inlinePtx(b, b.getVoidTy(), {}, "cp.async.commit_group;", "~{memory}", true);
  }
  void asyncCopiesWait(Builder& b, int pending) const override {
    inlinePtx(b, b.getVoidTy(), {}, "cp.async.wait_group " + std::to_string(pending) + ";", "~{memory}", true);
  }
  void copyArriveOnComplete(Builder& b, Value* bar) const override {
    inlinePtx(b, b.getVoidTy(), {addr(b, bar)}, "cp.async.mbarrier.arrive.noinc.shared.b64 [$0];", "l,~{memory}", true);
  }

  // mma.sync m16n8k16 (nvptx/mma_sync.cpp): every NVPTX arch of the registry is sm_80 or later.
  bool hasMma(DType t) const override { return t == DType::BF16 || t == DType::F16; }
  int mmaAccumulators() const override { return nvptx::mmaSyncAccumulators(); }
  std::pair<Value*, Value*> mmaAccumulatorAt(Builder& b, Value* lane, int j) const override {
    return nvptx::mmaSyncAccumulatorAt(b, lane, j);
  }
  void mmaStep(Builder& b, const MmaOperands& ops, Value* lane, Value* m0, Value* n0, Value* k0, int mBlocks,
               int nBlocks, std::vector<Value*>& acc) const override {
    nvptx::mmaSyncStep(b, ops, lane, m0, n0, k0, mBlocks, nBlocks, acc);
  }
  bool mmaFragmentRuns() const override { return true; }
  Value* pinned(Builder& b, Value* v) const override {
    return inlinePtx(b, v->getType(), {v}, "mov.b32 $0, $1;", "=r,r", true);
  }
  void mmaStepRegisterA(Builder& b, const MmaOperands& ops, const std::vector<Value*>& aValues, Value* lane, Value* n0,
                        Value* k0, int nBlocks, std::vector<Value*>& acc) const override {
    nvptx::mmaSyncStepRegisterA(b, ops, aValues, lane, n0, k0, nBlocks, acc);
  }
  // wgmma (nvptx/wgmma.cpp) where arch().warpgroupMma says so.
  void groupMma(Builder& b, DType dt, const std::vector<GroupMmaTile>& tiles, int64_t K, int chains,
                bool wait) const override {
    nvptx::groupMma(b, dt, tiles, K, chains, wait);
  }
  void groupMmaWait(Builder& b, std::vector<Value*>& acc) const override { nvptx::groupMmaWait(b, acc); }
  void fenceSharedForGroupMma(Builder& b) const override { nvptx::fenceSharedForGroupMma(b); }

  void prefetchLine(Builder& b, Value* ptr) const override {
    // No memory clobber: a hint orders nothing.
    inlinePtx(b, b.getVoidTy(), {addr(b, ptr)}, "prefetch.global.L1 [$0];", "l", true);
  }
  void prefetchLineL2(Builder& b, Value* ptr) const override {
    inlinePtx(b, b.getVoidTy(), {addr(b, ptr)}, "prefetch.global.L2 [$0];", "l", true);
  }

 private:
  // Pointers travel to inline asm as 64-bit integers: a state-space address for `.global` and
  // `.shared` instructions (the pointer's address space already is that space).
  static Value* addr(Builder& b, Value* p) { return b.CreatePtrToInt(p, b.getInt64Ty()); }

  static Value* fop(Builder& b, const std::string& op, Value* x) {
    return inlinePtx(b, b.getFloatTy(), {x}, op + " $0, $1;", "=f,f", false);
  }

  const ir::ArchDesc& arch_;
};

}  // namespace

std::unique_ptr<Target> makeNvptxTarget(const ir::ArchDesc& arch) {
  return std::make_unique<NvptxTarget>(arch);
}

}  // namespace mk::backend
