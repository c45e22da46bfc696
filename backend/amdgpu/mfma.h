// Internal to backend/amdgpu/: v_mfma_f32_16x16x16 (bf16_1k, f16) with f32 accumulators
// (gfx90a, gfx942), the AMDGPU target's matrix instruction (Target::mmaStep and its fragments).
#pragma once

#include "backend/target.h"

namespace mk::backend::amdgpu {

int mfmaAccumulators();
std::pair<llvm::Value*, llvm::Value*> mfmaAccumulatorAt(Builder& b, llvm::Value* lane, int j);
void mfmaStep(Builder& b, const Target::MmaOperands& ops, llvm::Value* lane, llvm::Value* m0, llvm::Value* n0,
              llvm::Value* k0, int mBlocks, int nBlocks, std::vector<llvm::Value*>& acc);

}  // namespace mk::backend::amdgpu
