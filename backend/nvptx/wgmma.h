// Internal to backend/nvptx/: wgmma.mma_async m64nNk16 with f32 accumulators (sm_90a), the NVPTX
// target's warpgroup matrix instruction (Target::groupMma).
#pragma once

#include "backend/target.h"

namespace mk::backend::nvptx {

void groupMma(Builder& b, DType dt, const std::vector<Target::GroupMmaTile>& tiles, int64_t K, int chains, bool wait);
void groupMmaWait(Builder& b, std::vector<llvm::Value*>& acc);
void fenceSharedForGroupMma(Builder& b);

}  // namespace mk::backend::nvptx
