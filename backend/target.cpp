// What the targets share: the pieces of the Target interface that are the same for every GPU,
// and the backends' view of the target registry (ir/target.h).
#include <llvm/IR/Intrinsics.h>
#include <llvm/Support/ErrorHandling.h>

#include "backend/backend.h"
#include "backend/target.h"

namespace mk::backend {

std::vector<std::string> archNames() {
  std::vector<std::string> out;
  for (const auto& a : ir::archs()) out.push_back(a.name);
  return out;
}

bool isKnownArch(const std::string& arch) { return ir::findArch(arch) != nullptr; }

bool isAmdgpuArch(const std::string& arch) {
  const ir::ArchDesc* a = ir::findArch(arch);
  return a && a->family == ir::ArchFamily::Amdgpu;
}

std::unique_ptr<Target> makeTarget(const ir::ArchDesc& arch) {
  return arch.family == ir::ArchFamily::Amdgpu ? makeAmdgpuTarget(arch) : makeNvptxTarget(arch);
}

void Target::unavailable(const char* what) const {
  llvm::report_fatal_error(llvm::StringRef("mkdsl internal error: " + std::string(what) + " was used on target " + cpu() +
                                           ", which has none"),
                           false);
}

llvm::Value* reduceByTwoPi(Builder& b, llvm::Value* x) {
  auto* f32 = b.getFloatTy();
  llvm::Value* k = b.CreateUnaryIntrinsic(llvm::Intrinsic::rint, b.CreateFMul(x, llvm::ConstantFP::get(f32, 0.15915494309189535)));
  llvm::Value* r = x;
  for (double part : {6.28125, 0.0019353071693331003, 1.0253131677018246e-11})
    r = b.CreateIntrinsic(llvm::Intrinsic::fma, {f32}, {b.CreateFNeg(k), llvm::ConstantFP::get(f32, part), r});
  return r;
}

}  // namespace mk::backend
