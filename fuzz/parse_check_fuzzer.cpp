// libFuzzer entry: the input bytes are one .mk file, run through lex, parse and check with the
// frontend library API, and every diagnostic is rendered. Any crash, sanitizer report, timeout or
// runaway memory is a bug. Built only with -DMK_FUZZ=ON (clang); scripts/test.sh runs it.
//
//   build-fuzz/fuzz/mk_fuzz_parse_check -dict=fuzz/mk.dict CORPUS_DIR
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "frontend/parse.h"
#include "frontend/sema.h"
#include "support/diagnostics.h"
#include "support/source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);

  // The lexer must cover the input exactly, in order.
  std::vector<mk::Token> tokens = mk::lex(text);
  uint32_t at = 0;
  for (const mk::Token& t : tokens) {
    if (t.begin != at || t.end < t.begin || t.end > text.size() ||
        t.text != std::string_view(text).substr(t.begin, t.end - t.begin))
      __builtin_trap();
    at = t.end;
  }
  if (at != text.size()) __builtin_trap();

  mk::SourceManager sources;
  mk::FileId file = sources.add("fuzz.mk", text);
  mk::DiagnosticEngine diags(sources);
  diags.setErrorLimit(100);
  // Parse and check as `mkdsl check` does, under every config the input declares. Imports of
  // std modules resolve against the real stdlib; other imports find nothing (no folder to search).
  mk::CheckOptions options;
  options.allConfigs = true;
  mk::checkProgram(sources, diags, file, options);

  for (const mk::Diagnostic& d : diags.diagnostics()) (void)mk::renderText(sources, d);
  (void)mk::renderJson(sources, diags.diagnostics());
  return 0;
}
