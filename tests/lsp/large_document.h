// The large document of the language server's latency checks: a valid generated program of about
// 5,000 lines, shared by the functional test (tests/lsp/large_document_test.cpp) and the latency
// benchmark (bench/lsp/hover_latency.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lsp/json.h"
#include "lsp/server.h"

namespace mk::lsp::testing {

// A valid program of about `lines` lines: a config, then blocks of an op, a weight and a fn each,
// and a step calling every fn.
inline std::string generatedProgram(int lines) {
  std::string s =
      "/// Generated model for the large-document checks.\n"
      "config base {\n"
      "    /// hidden size\n"
      "    dim = 256;\n"
      "    vocab = 512;\n"
      "}\n\n"
      "weight embed_w: bf16[vocab, dim] = \"embed\";\n\n"
      "op embed<V, D>(table: bf16[V, D], token: i32) -> x: f32[D]\n"
      "    tasks t in 1 {\n"
      "    store x[0 : +D] = load table[token, 0 : +D] as f32;\n"
      "}\n\n";
  int blocks = (lines - 18 + 20) / 21;  // 20 lines each, and one line of the step
  for (int k = 0; k < blocks; ++k) {
    std::string n = std::to_string(k);
    s += "/// Scales x by gain " + n + ".\n"
         "op scale_" + n + "<N, B = 64>(x: f32[N], g: bf16[N]) -> y: f32[N]\n"
         "    tasks t in N / B {\n"
         "    static_assert(N % B == 0, \"B must divide N\");\n"
         "    let v = load x[t * B : +B];\n"
         "    let w = load g[t * B : +B] as f32;\n"
         "    let s = v * w + 1.0;\n"
         "    var acc: f32[B];\n"
         "    acc += s;\n"
         "    store y[t * B : +B] = acc;\n"
         "}\n\n"
         "/// Gain " + n + ".\n"
         "weight g_" + n + ": bf16[dim] = \"layers." + n + ".g\";\n\n"
         "fn block_" + n + "(x: f32[dim]) -> f32[dim] {\n"
         "    let y = scale_" + n + "(x, g_" + n + ");\n"
         "    return y;\n"
         "}\n\n";
  }
  s += "step decode(token: i32) -> (out: f32[dim]) {\n    var x: f32[dim] = embed(embed_w, token);\n";
  for (int k = 0; k < blocks; ++k) s += "    x = block_" + std::to_string(k) + "(x);\n";
  s += "    return x;\n}\n";
  return s;
}

// The hover target: `scale_7` in block_7's body, and the line holding it (0-based); the hover's
// answer holds the op's signature.
inline constexpr const char* kHoverLine = "    let y = scale_7(x, g_7);";
inline constexpr uint32_t kHoverCharacter = 14;
inline constexpr const char* kHoverSignature = "op scale_7<N, B = 64>";
inline uint32_t hoverLineOf(const std::string& text) {
  const size_t at = text.find(kHoverLine);
  return at == std::string::npos ? UINT32_MAX
                                 : static_cast<uint32_t>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

// One server session over the large document, as `mkdsl lsp` runs it (diagnostics deferred: a
// document is checked when first needed): open it, hover on `scale_7`, edit a character in a
// weight's source name three lines above, hover again.
class LargeDocumentSession {
 public:
  explicit LargeDocumentSession(const std::string& stdlibDir) {
    ServerOptions options;
    options.stdlibDir = stdlibDir;
    options.deferDiagnostics = true;
    server_ = std::make_unique<Server>(options);
    server_->handle(request(nextId_++, "initialize", R"({"capabilities":{}})"));
    server_->handle(notify("initialized"));
  }
  void open(const std::string& text) {
    line_ = hoverLineOf(text);
    server_->handle(notify("textDocument/didOpen", R"({"textDocument":{"uri":")" + std::string(kUri) +
                                                       R"(","languageId":"mk","version":1,"text":)" + dump(jstr(text)) + "}}"));
  }
  // The hover's answers (one expected).
  std::vector<std::string> hover() {
    return server_->handle(request(nextId_++, "textDocument/hover",
                                   R"({"textDocument":{"uri":")" + std::string(kUri) + R"("},"position":{"line":)" +
                                       std::to_string(line_) + R"(,"character":)" + std::to_string(kHoverCharacter) + "}}"));
  }
  void edit() {
    server_->handle(notify("textDocument/didChange",
                           R"({"textDocument":{"uri":")" + std::string(kUri) + R"(","version":)" + std::to_string(++version_) +
                               R"(},"contentChanges":[{"range":{"start":{"line":)" + std::to_string(line_ - 3) +
                               R"(,"character":24},"end":{"line":)" + std::to_string(line_ - 3) +
                               R"(,"character":24}},"text":"x"}]})"));
  }
  Server& server() { return *server_; }

 private:
  static constexpr const char* kUri = "file:///tmp/mk-lsp-large/big.mk";
  static std::string request(int id, const std::string& method, const std::string& params) {
    return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + method + R"(","params":)" + params + "}";
  }
  static std::string notify(const std::string& method, const std::string& params = "{}") {
    return R"({"jsonrpc":"2.0","method":")" + method + R"(","params":)" + params + "}";
  }
  std::unique_ptr<Server> server_;
  int nextId_ = 1;
  int version_ = 1;
  uint32_t line_ = 0;
};

}  // namespace mk::lsp::testing
