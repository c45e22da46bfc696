// The tiny Llama that many unit tests compile: examples/llama_tiny.mk with the repository's
// stdlib, for the default target (h200, sm_90a).
#pragma once

#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "compiler/compile.h"

namespace mk::testing {

inline std::string tinyLlamaSource() {
  std::ifstream in(std::string(MK_SOURCE_DIR) + "/examples/llama_tiny.mk", std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Compiled with or without the trace stamps; nullopt with the diagnostics in `diagnostics`.
inline std::optional<CompileOutput> compileTinyLlama(bool trace = false, std::string* diagnostics = nullptr) {
  CompileOptions options;
  options.check.stdlibDir = MK_STDLIB_DIR;
  options.backend.trace = trace;
  return compileSource("llama_tiny.mk", tinyLlamaSource(), options, diagnostics);
}

}  // namespace mk::testing
