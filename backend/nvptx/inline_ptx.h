// Internal to backend/nvptx/: a statement of inline PTX, as the NVPTX target and its matrix
// instructions write what LLVM 19 cannot select.
#pragma once

#include <llvm/IR/InlineAsm.h>

#include <string>
#include <vector>

#include "backend/target.h"

namespace mk::backend::nvptx {

// `text` over `args` with LLVM's inline-asm `constraints`, returning `ret` (void, a value, or a
// struct of values).
inline llvm::Value* inlinePtx(Builder& b, llvm::Type* ret, const std::vector<llvm::Value*>& args,
                              const std::string& text, const std::string& constraints, bool sideEffects) {
  std::vector<llvm::Type*> types;
  for (llvm::Value* a : args) types.push_back(a->getType());
  auto* fty = llvm::FunctionType::get(ret, types, false);
  auto* call = b.CreateCall(fty, llvm::InlineAsm::get(fty, text, constraints, sideEffects), args);
  // As clang does for CUDA: LLVM must not make an asm statement control-dependent on more values
  // than it was (a barrier sunk into a branch would hang the block).
  call->addFnAttr(llvm::Attribute::Convergent);
  return call;
}

}  // namespace mk::backend::nvptx
