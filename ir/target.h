// The targets mkdsl knows, in one registry (ir/targets.cpp): the code architectures the backends
// emit, with their backend family and capabilities, and the GPUs, each with its architecture
// and what it offers the scheduler. Plain data: the backends add their own details.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace mk::ir {

// Which backend emits an architecture: NVPTX (PTX) or AMDGPU (an ELF object and AMDGCN).
enum class ArchFamily { Nvptx, Amdgpu };

// The granularity of an architecture's matrix instruction for a bf16/f16 product with f32
// accumulation (mma.sync.m16n8k16 on sm_80+, v_mfma_f32_16x16x16bf16_1k on gfx90a/gfx942):
// a tile product a[M, K] b[K, N] maps onto it when M, N and K are multiples of m, n and k
// (mmaMisfit). The backends' fragment code (Target::mmaStep) implements this block.
struct MmaShape {
  const char* instruction;  // for messages: "mma.sync m16n8k16"
  int m = 0, n = 0, k = 0;  // 0: no matrix instruction
};

struct ArchDesc {
  std::string name;  // sm_90a, sm_90, sm_80, gfx942, gfx90a (`--target`)
  ArchFamily family;
  // Hopper's asynchronous-copy features (sm_90): cp.async.bulk completing on mbarrier
  // transactions, mbarrier.try_wait and fence.mbarrier_init. Without them the weight ring is
  // filled 16 bytes a lane (cp.async) and polled with mbarrier.test_wait.
  bool bulkAsyncCopy = false;
  // The loader warp runs on top of the block's compute threads: the 17 warps leave 96 registers
  // a thread, enough for the Hopper kernels (88 for Llama-3.2-1B); sm_80's spill there, so its
  // loader warp is one of the 16.
  bool loaderWarpOnTop = false;
  MmaShape mma;
  // sm_90a's warpgroup matrix instruction (wgmma.mma_async, operands in 128-byte-swizzled shared
  // memory): products whose rows come in 64s run on it, four warps together (tile/mma.cpp).
  bool warpgroupMma = false;
};

// Why a tile product of a[M, K] and b[K, N] (or b[N, K]) does not fit `arch`'s matrix
// instruction, naming each dimension that does not divide; nullopt when it fits.
std::optional<std::string> mmaMisfit(const ArchDesc& arch, long long M, long long N, long long K);

// The architectures, in the order `--target`'s messages list them; null for an unknown name.
const std::vector<ArchDesc>& archs();
const ArchDesc* findArch(const std::string& name);

struct TargetDesc {
  std::string name;          // h200, h100, a100, mi300x, mi250x
  std::string arch;          // sm_90a, sm_80, gfx942, gfx90a: an ArchDesc's name
  int sms = 132;             // persistent blocks: one per SM / CU
  int smemPerBlock = 227 * 1024;
  int warpSize = 32;
  int threadsPerBlock = 512;
  double memoryBandwidth = 4.8e12;  // bytes per second, for cost estimates
  // While the loader warp waits for a free ring slot (the compute side is behind, or waiting on
  // another task), it prefetches into L2 the tiles of its K loop up to this many iterations
  // ahead; 0: none (targets without a loader, and those not measured).
  int l2AheadTiles = 0;
  // The independent accumulator sets a warpgroup's tile deals its k steps over (1, 2 or 4; wgmma,
  // backend/nvptx/wgmma.cpp), within 64 accumulator registers a lane.
  int groupMmaChains = 1;
};

// The GPUs (`--gpu`), in the order messages list them.
std::optional<TargetDesc> findTarget(const std::string& name);
std::vector<std::string> targetNames();

}  // namespace mk::ir
