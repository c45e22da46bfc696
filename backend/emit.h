// LLVM's part: the target machine, the optimisation pipeline, and the assembly and object files.
#pragma once

#include <string>

#include <llvm/IR/Module.h>

#include "backend/target.h"

namespace mk::backend {

// Sets the module's triple and data layout for `target`.
void prepareModule(llvm::Module& m, const Target& target);

// Verifies, optimises (O3) and prints the module as LLVM IR and as target assembly, and, when
// `object` is given, as an ELF object. Checks that the assembly has `expectedEntries` kernel
// entries (one per step) and calls nothing LLVM left unresolved. On failure returns false with
// `error` set.
bool optimizeAndEmit(llvm::Module& m, const Target& target, int expectedEntries, std::string& llvmIR,
                     std::string& assembly, std::string* object, std::string& error);

}  // namespace mk::backend
