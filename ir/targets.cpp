// The target registry (target.h): every architecture and every GPU mkdsl knows, listed once.
#include "ir/target.h"

namespace mk::ir {

const std::vector<ArchDesc>& archs() {
  // The matrix instructions (MmaShape): mma.sync's m16n8k16 on every NVPTX arch (sm_90a's wgmma,
  // where a product fits it, is coarser: a multiple of it); MFMA 16x16x16 on both AMDGPU archs.
  static constexpr MmaShape kMmaSync{"mma.sync m16n8k16", 16, 8, 16};
  static constexpr MmaShape kMfma{"MFMA 16x16x16", 16, 16, 16};
  static const std::vector<ArchDesc> kArchs = {
      {"sm_90a", ArchFamily::Nvptx, /*bulkAsyncCopy=*/true, /*loaderWarpOnTop=*/true, kMmaSync,
       /*warpgroupMma=*/true},
      {"sm_90", ArchFamily::Nvptx, /*bulkAsyncCopy=*/true, /*loaderWarpOnTop=*/true, kMmaSync},
      {"sm_80", ArchFamily::Nvptx, /*bulkAsyncCopy=*/false, /*loaderWarpOnTop=*/false, kMmaSync},
      // No weight ring on AMDGPU (amdgpu_target.cpp): its capabilities stay off.
      {"gfx942", ArchFamily::Amdgpu, false, false, kMfma},
      {"gfx90a", ArchFamily::Amdgpu, false, false, kMfma},
  };
  return kArchs;
}

const ArchDesc* findArch(const std::string& name) {
  for (const auto& a : archs())
    if (a.name == name) return &a;
  return nullptr;
}

std::optional<std::string> mmaMisfit(const ArchDesc& arch, long long M, long long N, long long K) {
  const MmaShape& s = arch.mma;
  if (s.m <= 0) return arch.name + " has no matrix instruction";
  std::string why;
  auto check = [&](const char* dim, long long v, int g) {
    if (v > 0 && v % g == 0) return;
    why += (why.empty() ? "" : ", ") + std::string(dim) + " = " + std::to_string(v) + " is not a multiple of " +
           std::to_string(g);
  };
  check("M", M, s.m);
  check("N", N, s.n);
  check("K", K, s.k);
  if (why.empty()) return std::nullopt;
  return why + " (" + arch.name + "'s " + s.instruction + ")";
}

namespace {
const std::vector<TargetDesc>& targets() {
  // SM (CU) counts and shared memory (LDS) per block (opt-in maximum) of the shipping parts;
  // bandwidth is the datasheet figure, used only to weigh costs.
  static const std::vector<TargetDesc> kTargets = {
      // L2 look-ahead 8: bench/results/2026-12-01-perf-7, call 4.
      {"h200", "sm_90a", 132, 227 * 1024, 32, 512, 4.8e12, 8},
      {"h100", "sm_90a", 132, 227 * 1024, 32, 512, 3.35e12},
      {"a100", "sm_80", 108, 163 * 1024, 32, 512, 2.0e12},
      {"mi300x", "gfx942", 304, 64 * 1024, 64, 512, 5.3e12},
      // One GCD of an MI250X: the package's two dies (110 CUs and 1.6 TB/s each) are two devices
      // to HIP, and a kernel runs on one.
      {"mi250x", "gfx90a", 110, 64 * 1024, 64, 512, 1.6e12},
  };
  return kTargets;
}
}  // namespace

std::optional<TargetDesc> findTarget(const std::string& name) {
  for (const auto& t : targets())
    if (t.name == name) return t;
  return std::nullopt;
}

std::vector<std::string> targetNames() {
  std::vector<std::string> out;
  for (const auto& t : targets()) out.push_back(t.name);
  return out;
}

}  // namespace mk::ir
