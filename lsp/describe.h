// How declarations and types read in hovers, completions and signature help.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "frontend/ast.h"
#include "frontend/index.h"
#include "frontend/types.h"
#include "lsp/analysis.h"

namespace mk::lsp {

// An op's or fn's call signature: `matvec<N, K, R = 16>(w: bf16[N, K] tiled(R, K), x: bf16[K]) -> y: bf16[N]`
// with the byte span of each parameter in it: the positional parameters first, then the generic
// parameters (which calls pass by name).
struct CallSignature {
  std::string label;
  std::vector<std::pair<uint32_t, uint32_t>> params;
  size_t positional = 0;  // how many of `params` are positional
  std::vector<std::string> paramNames;
};
CallSignature callSignature(std::string_view fileText, const ast::Decl* decl);
inline CallSignature callSignature(const Analysis& a, const ast::Decl* decl) {
  return callSignature(a.text(decl->name.range.valid() ? decl->name.range.file : a.root), decl);
}

// The declaration a symbol stands for, as one line of .mk (`weight proj: bf16[hidden, hidden]`,
// `op scale<N, B = 16>(...) -> y: bf16[N]`, `let v = load x[...] as f32`).
std::string declarationLine(const Analysis& a, const Symbol& s);

// A type in words, for hovers: "tile `f32[B]`", "compile-time int `2048`".
std::string describeType(const Ty& t);

// Generic values as they read: `B = 32, N = 64`.
std::string bindingsText(const std::map<std::string, Ty>& bindings);

// `shape` with the integer generic values of `bindings` put in; nullopt when that leaves a dim
// symbolic or the shape has none to begin with.
std::optional<std::string> concreteShape(const Shape& shape, const std::map<std::string, Ty>& bindings);

// The name of the module a file is (std.linear, util), or its file name.
std::string moduleName(const Analysis& a, FileId file);

}  // namespace mk::lsp
