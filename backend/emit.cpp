#include "backend/emit.h"

#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include <mutex>
#include <regex>

namespace mk::backend {
namespace {

std::unique_ptr<llvm::TargetMachine> machine(const Target& target, std::string& error) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
    LLVMInitializeAMDGPUAsmParser();  // the object file assembles inline asm (threadIdHere)
  });
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(target.triple(), error);
  if (!t) return nullptr;
  llvm::TargetOptions options;
  return std::unique_ptr<llvm::TargetMachine>(t->createTargetMachine(
      target.triple(), target.cpu(), target.features(), options, std::nullopt, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
}

// Runs the target's code generator on `m` into `out` (which consumes the module: the code
// generator rewrites its IR). False when the target cannot emit that kind of file.
bool codegen(llvm::TargetMachine& tm, llvm::Module& m, llvm::CodeGenFileType kind, std::string& out) {
  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, kind)) return false;
  pm.run(m);
  out.assign(buffer.begin(), buffer.end());
  return true;
}

}  // namespace

void prepareModule(llvm::Module& m, const Target& target) {
  std::string error;
  m.setTargetTriple(target.triple());
  if (auto tm = machine(target, error)) m.setDataLayout(tm->createDataLayout());
}

bool optimizeAndEmit(llvm::Module& m, const Target& target, int expectedEntries, std::string& llvmIR,
                     std::string& assembly, std::string* object, std::string& error) {
  auto tm = machine(target, error);
  if (!tm) {
    error = "no LLVM target for " + target.triple() + ": " + error;
    return false;
  }
  {
    std::string problems;
    llvm::raw_string_ostream os(problems);
    if (llvm::verifyModule(m, &os)) {
      error = "the generated LLVM IR does not verify (a compiler bug): " + problems.substr(0, 2000);
      return false;
    }
  }
  {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(tm.get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cam, mam);
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    mpm.run(m, mam);
  }
  {
    llvm::raw_string_ostream os(llvmIR);
    m.print(os, nullptr);
  }
  // The object from a copy of the optimised module, since the code generator changes the module
  // it runs on; the same machine code as the assembly's.
  if (object) {
    std::unique_ptr<llvm::Module> copy = llvm::CloneModule(m);
    if (!codegen(*tm, *copy, llvm::CodeGenFileType::ObjectFile, *object)) {
      error = "LLVM cannot emit an object file for " + target.cpu();
      return false;
    }
  }
  if (!codegen(*tm, m, llvm::CodeGenFileType::AssemblyFile, assembly)) {
    error = "LLVM cannot emit assembly for " + target.cpu();
    return false;
  }
  // A kernel per entry of the module, and nothing the target does not resolve (LLVM 19 leaves
  // some intrinsics as calls).
  const std::string entry = target.kernelDirective() + " ";
  size_t entries = 0;
  for (size_t at = assembly.find(entry); at != std::string::npos; at = assembly.find(entry, at + 1)) ++entries;
  if (entries != size_t(expectedEntries)) {
    error = "the assembly has " + std::to_string(entries) + " kernel entries instead of " + std::to_string(expectedEntries);
    return false;
  }
  std::smatch m2;
  if (std::regex_search(assembly, m2, std::regex(R"(\bllvm\.[A-Za-z0-9_.]+)"))) {
    error = "the assembly calls '" + m2.str() + "', which LLVM left unresolved";
    return false;
  }
  return true;
}

}  // namespace mk::backend
