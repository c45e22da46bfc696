// What a target GPU offers the scheduler. Plain data: the backends add their own details.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace mk::ir {

struct TargetDesc {
  std::string name;          // h200, h100, a100, mi300x, mi250x
  std::string arch;          // sm_90a, sm_80, gfx942, gfx90a
  int sms = 132;             // persistent blocks: one per SM / CU
  int smemPerBlock = 227 * 1024;
  int warpSize = 32;
  int threadsPerBlock = 512;
  double memoryBandwidth = 4.8e12;  // bytes per second, for cost estimates
  // While the loader warp waits for a free ring slot (the compute side is behind, or waiting on
  // another task), it prefetches into L2 the tiles of its K loop up to this many iterations
  // ahead; 0: none (targets without a loader, and those not measured).
  int l2AheadTiles = 0;
};

std::optional<TargetDesc> findTarget(const std::string& name);
std::vector<std::string> targetNames();

}  // namespace mk::ir
