// The target registry (target.h): every architecture and every GPU mkdsl knows, listed once.
#include "ir/target.h"

namespace mk::ir {

const std::vector<ArchDesc>& archs() {
  static const std::vector<ArchDesc> kArchs = {
      {"sm_90a", ArchFamily::Nvptx, /*bulkAsyncCopy=*/true, /*loaderWarpOnTop=*/true},
      {"sm_90", ArchFamily::Nvptx, /*bulkAsyncCopy=*/true, /*loaderWarpOnTop=*/true},
      {"sm_80", ArchFamily::Nvptx, /*bulkAsyncCopy=*/false, /*loaderWarpOnTop=*/false},
      // No weight ring on AMDGPU (amdgpu_target.cpp): its capabilities stay off.
      {"gfx942", ArchFamily::Amdgpu},
      {"gfx90a", ArchFamily::Amdgpu},
  };
  return kArchs;
}

const ArchDesc* findArch(const std::string& name) {
  for (const auto& a : archs())
    if (a.name == name) return &a;
  return nullptr;
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
