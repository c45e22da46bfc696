// Internal to backend/nvptx/: mma.sync.aligned.m16n8k16.row.col with f32 accumulators (sm_80+),
// the NVPTX target's matrix instruction (Target::mmaStep and its fragments).
#pragma once

#include "backend/target.h"

namespace mk::backend::nvptx {

int mmaSyncAccumulators();
std::pair<llvm::Value*, llvm::Value*> mmaSyncAccumulatorAt(Builder& b, llvm::Value* lane, int j);
void mmaSyncStep(Builder& b, const Target::MmaOperands& ops, llvm::Value* lane, llvm::Value* m0, llvm::Value* n0,
                 llvm::Value* k0, int mBlocks, int nBlocks, std::vector<llvm::Value*>& acc);
void mmaSyncStepRegisterA(Builder& b, const Target::MmaOperands& ops, const std::vector<llvm::Value*>& aValues,
                          llvm::Value* lane, llvm::Value* n0, llvm::Value* k0, int nBlocks,
                          std::vector<llvm::Value*>& acc);

}  // namespace mk::backend::nvptx
