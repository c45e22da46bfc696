// AMDGPU (amdgcn-amd-amdhsa): gfx942 (MI300X) and gfx90a (MI250X), wave64. Everything here is
// LLVM IR that the AMDGPU backend selects natively: scoped atomics (`syncscope("agent")`),
// s_barrier between workgroup fences, DPP and ds_swizzle lane exchanges, s_memrealtime, s_sleep.
// The one piece of inline assembly is an opaque copy of the thread id (threadIdHere).
//
// There are no mbarriers and no async bulk copies, so the target has no weight ring (the Target
// defaults): the kernel runs without a loader warp and the compute threads read weights from
// global memory with 16-byte loads (global_load_dwordx4).
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/Support/ErrorHandling.h>

#include <algorithm>
#include <string>

#include "backend/amdgpu/mfma.h"
#include "backend/target.h"

namespace mk::backend {
namespace {

using llvm::Value;

// Compute units have four SIMDs (execution units); a workgroup's waves are spread over them.
constexpr int kSimdsPerCu = 4;
// s_memrealtime counts a constant 100 MHz clock on gfx90a and gfx942 (HIP reports it as
// hipDeviceAttributeWallClockRate, 100000 kHz): 10 ns per tick.
constexpr int kRealtimeNsPerTick = 10;
// s_sleep N waits about 64 * N shader clocks, ~32 N ns at the 1.7-2.1 GHz of these parts.
constexpr int kSleepNsPerUnit = 32;
constexpr const char* kWorkGroupSize = "amdgpu-flat-work-group-size";

class AmdgpuTarget final : public Target {
 public:
  explicit AmdgpuTarget(const ir::ArchDesc& arch) : desc_(arch), arch_(arch.name) {}

  const ir::ArchDesc& arch() const override { return desc_; }

  std::string triple() const override { return "amdgcn-amd-amdhsa"; }
  std::string cpu() const override { return arch_; }
  // gfx9 is wave64 only; xnack and sramecc stay "any", so the code object runs in either mode.
  std::string features() const override { return ""; }
  std::string kernelDirective() const override { return ".amdhsa_kernel"; }
  bool emitsObject() const override { return true; }
  int warpSize() const override { return 64; }
  unsigned globalSpace() const override { return 1; }
  unsigned sharedSpace() const override { return 3; }
  // LDS per workgroup on gfx90a and gfx942.
  int64_t maxSharedPerBlock() const override { return 64 * 1024; }

  void markKernel(llvm::Function* f, int threads) const override {
    f->setCallingConv(llvm::CallingConv::AMDGPU_KERNEL);
    f->addFnAttr(kWorkGroupSize, "1," + std::to_string(threads));
    // W,W with W the block's waves over a CU's four SIMDs: at least W, so the block fits one
    // CU; at most W, all the occupancy a persistent kernel of one block per CU has, so registers
    // are not traded for more. LLVM honours the maximum by reserving registers (the kernel
    // descriptor's VGPR count), which keeps a second workgroup off a CU: the grid's blocks land
    // on distinct CUs.
    const int waves = (threads + warpSize() - 1) / warpSize();
    const std::string perEu = std::to_string((waves + kSimdsPerCu - 1) / kSimdsPerCu);
    f->addFnAttr("amdgpu-waves-per-eu", perEu + "," + perEu);
  }

  Value* threadId(Builder& b) const override {
    return b.CreateIntrinsic(llvm::Intrinsic::amdgcn_workitem_id_x, {}, {});
  }
  Value* threadIdHere(Builder& b) const override {
    // The id through an opaque copy (a VGPR in, the same VGPR out): LLVM cannot hoist it.
    auto* i32 = b.getInt32Ty();
    auto* fty = llvm::FunctionType::get(i32, {i32}, false);
    auto* ia = llvm::InlineAsm::get(fty, "; mk_step thread id", "=v,0", /*hasSideEffects=*/true);
    return b.CreateCall(fty, ia, {threadId(b)});
  }
  Value* blockId(Builder& b) const override {
    return b.CreateIntrinsic(llvm::Intrinsic::amdgcn_workgroup_id_x, {}, {});
  }
  Value* globalTimerNs(Builder& b) const override {
    Value* ticks = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_s_memrealtime, {}, {});
    return b.CreateMul(ticks, b.getInt64(kRealtimeNsPerTick));
  }
  void sleep(Builder& b, int ns) const override {
    const int units = std::clamp((ns + kSleepNsPerUnit - 1) / kSleepNsPerUnit, 1, 127);
    b.CreateIntrinsic(llvm::Intrinsic::amdgcn_s_sleep, {}, {b.getInt32(units)});
  }

  // s_barrier meets every wave of the workgroup; there are no named barriers for a subset. The
  // generic code asks for barrier 1 over the compute threads, which are the whole block because
  // this target has no loader warp: checked against the kernel's workgroup size. The fences make
  // each thread's earlier loads and stores (LDS and global) visible to the others after it, as
  // bar.sync does on NVPTX (and as HIP's __syncthreads is built).
  void barrier(Builder& b, int /*id*/, int threads) const override { meet(b, threads, "workgroup"); }
  // A workgroup-scope release does not wait for a wave's global stores to complete (on gfx9
  // outside tgsplit mode it emits no s_waitcnt), and another wave's later device-scope release
  // cannot wait for them either. So before the barrier that precedes thread 0's signal, every
  // wave releases at agent scope (s_waitcnt vmcnt(0), and buffer_wbl2 on gfx942): its stores
  // have reached the device's coherence point before thread 0 adds to the counter.
  void releaseBarrier(Builder& b, int threads) const override { meet(b, threads, "agent"); }
  // A wave's lanes execute together; the fences order their LDS accesses around the point.
  void warpSync(Builder& b) const override {
    auto scope = b.getContext().getOrInsertSyncScopeID("wavefront");
    b.CreateFence(llvm::AtomicOrdering::Release, scope);
    b.CreateIntrinsic(llvm::Intrinsic::amdgcn_wave_barrier, {}, {});
    b.CreateFence(llvm::AtomicOrdering::Acquire, scope);
  }
  // Within each 32-lane half of the wave (target.h: the generic code's warps are 32 lanes).
  // Masks 1 and 2 stay within a quad: a DPP quad permutation, which rides on a VALU move. The
  // others: ds_swizzle in bitmask mode (offset bit 15 clear: and-mask 0x1f, or-mask 0, xor-mask
  // in bits 10-14), which permutes within groups of 32 lanes through the LDS crossbar without
  // touching memory.
  Value* shuffleXor(Builder& b, Value* v, int mask) const override {
    if (mask <= 0 || mask >= 32)
      llvm::report_fatal_error(llvm::StringRef("mkdsl internal error: a lane exchange with xor mask " +
                                               std::to_string(mask) + " (must be 1..31)"),
                               false);
    bool f = v->getType()->isFloatTy();
    Value* x = f ? b.CreateBitCast(v, b.getInt32Ty()) : v;
    Value* r;
    if (mask == 1 || mask == 2) {
      // quad_perm: two bits per lane of the quad name its source lane: [1,0,3,2] and [2,3,0,1].
      const uint32_t perm = mask == 1 ? 0xB1 : 0x4E;
      r = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_update_dpp, {b.getInt32Ty()},
                            {x, x, b.getInt32(perm), b.getInt32(0xF), b.getInt32(0xF), b.getFalse()});
    } else {
      r = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_ds_swizzle, {},
                            {x, b.getInt32(uint32_t(mask) << 10 | 0x1F)});
    }
    return f ? b.CreateBitCast(r, b.getFloatTy()) : r;
  }

  // Native scoped atomics: agent scope is the whole GPU (one GCD of an MI250X).
  Value* loadAcquire(Builder& b, Value* ptr) const override {
    auto* ld = b.CreateAlignedLoad(b.getInt32Ty(), ptr, llvm::Align(4));
    ld->setAtomic(llvm::AtomicOrdering::Acquire, agent(b));
    return ld;
  }
  void releaseAdd(Builder& b, Value* ptr, Value* n) const override {
    b.CreateAtomicRMW(llvm::AtomicRMWInst::Add, ptr, n, llvm::Align(4), llvm::AtomicOrdering::Release, agent(b));
  }
  Value* atomicCas(Builder& b, Value* ptr, Value* expected, Value* desired) const override {
    auto* cas = b.CreateAtomicCmpXchg(ptr, expected, desired, llvm::Align(4), llvm::AtomicOrdering::Monotonic,
                                      llvm::AtomicOrdering::Monotonic, agent(b));
    return b.CreateExtractValue(cas, 0);
  }
  Value* loadVolatile(Builder& b, Value* ptr) const override {
    auto* ld = b.CreateAlignedLoad(b.getInt32Ty(), ptr, llvm::Align(4));
    ld->setAtomic(llvm::AtomicOrdering::Monotonic, agent(b));
    return ld;
  }

  Value* exp2(Builder& b, Value* x) const override {
    return b.CreateUnaryIntrinsic(llvm::Intrinsic::amdgcn_exp2, x);  // v_exp_f32
  }
  Value* log2(Builder& b, Value* x) const override {
    return b.CreateUnaryIntrinsic(llvm::Intrinsic::amdgcn_log, x);  // v_log_f32
  }

  Value* unaryMath(Builder& b, ir::UnaryOp op, Value* x) const override {
    auto* f32 = b.getFloatTy();
    switch (op) {
      case ir::UnaryOp::Sqrt: return b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x);  // correctly rounded
      case ir::UnaryOp::Rsqrt: return b.CreateUnaryIntrinsic(llvm::Intrinsic::amdgcn_rsq, x);  // v_rsq_f32
      case ir::UnaryOp::Sin:
      case ir::UnaryOp::Cos: {
        // v_sin_f32 / v_cos_f32 take revolutions: reduce to [-pi, pi] exactly, then scale.
        Value* turns = b.CreateFMul(reduceByTwoPi(b, x), llvm::ConstantFP::get(f32, 0.15915494309189535));
        return b.CreateUnaryIntrinsic(op == ir::UnaryOp::Sin ? llvm::Intrinsic::amdgcn_sin : llvm::Intrinsic::amdgcn_cos,
                                      turns);
      }
      default: return nullptr;  // the generic lowering composes the rest from exp
    }
  }
  Value* floatToInt(Builder& b, Value* x) const override {
    // v_cvt_i32_f32 saturates and turns NaN into 0, which is what fptosi.sat means.
    return b.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {b.getInt32Ty(), x->getType()}, {x});
  }

  // MFMA 16x16x16 (amdgpu/mfma.cpp), on both archs of the registry.
  bool hasMma(DType t) const override { return t == DType::BF16 || t == DType::F16; }
  int mmaAccumulators() const override { return amdgpu::mfmaAccumulators(); }
  std::pair<Value*, Value*> mmaAccumulatorAt(Builder& b, Value* lane, int j) const override {
    return amdgpu::mfmaAccumulatorAt(b, lane, j);
  }
  void mmaStep(Builder& b, const MmaOperands& ops, Value* lane, Value* m0, Value* n0, Value* k0, int mBlocks,
               int nBlocks, std::vector<Value*>& acc) const override {
    amdgpu::mfmaStep(b, ops, lane, m0, n0, k0, mBlocks, nBlocks, acc);
  }

 private:
  static llvm::SyncScope::ID agent(Builder& b) { return b.getContext().getOrInsertSyncScopeID("agent"); }

  // s_barrier between a release fence at `releaseScope` and a workgroup acquire fence.
  void meet(Builder& b, int threads, const char* releaseScope) const {
    llvm::Function* f = b.GetInsertBlock()->getParent();
    const std::string size = f->getFnAttribute(kWorkGroupSize).getValueAsString().str();
    if (size != "1," + std::to_string(threads))
      llvm::report_fatal_error(llvm::StringRef("mkdsl internal error: a barrier of " + std::to_string(threads) +
                                               " threads in a workgroup of " + size + " on " + arch_ +
                                               ", which has only whole-workgroup barriers"),
                               false);
    b.CreateFence(llvm::AtomicOrdering::Release, b.getContext().getOrInsertSyncScopeID(releaseScope));
    b.CreateIntrinsic(llvm::Intrinsic::amdgcn_s_barrier, {}, {});
    b.CreateFence(llvm::AtomicOrdering::Acquire, b.getContext().getOrInsertSyncScopeID("workgroup"));
  }

  const ir::ArchDesc& desc_;
  std::string arch_;
};

}  // namespace

std::unique_ptr<Target> makeAmdgpuTarget(const ir::ArchDesc& arch) {
  return std::make_unique<AmdgpuTarget>(arch);
}

}  // namespace mk::backend
