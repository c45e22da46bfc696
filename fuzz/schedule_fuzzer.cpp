// libFuzzer entry: the input bytes are a schedule in text form (what `mkdsl verify` reads), run
// through the parser and, when it parses, the verifier. Any crash, sanitizer report, timeout or
// runaway memory is a bug: `mkdsl verify` must answer every file with a verdict or diagnostics.
//
//   build-fuzz/fuzz/mk_fuzz_schedule -dict=fuzz/schedule.dict CORPUS_DIR
#include <cstddef>
#include <cstdint>
#include <string>

#include "ir/parse_ir.h"
#include "ir/verify.h"
#include "support/diagnostics.h"
#include "support/source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mk::SourceManager sources;
  mk::FileId file = sources.add("fuzz.sched", std::string(reinterpret_cast<const char*>(data), size));
  mk::DiagnosticEngine diags(sources);
  diags.setErrorLimit(100);
  if (auto kernel = mk::ir::parseSchedule(sources.file(file).text(), diags, file)) mk::ir::verify(*kernel, diags);
  for (const mk::Diagnostic& d : diags.diagnostics()) (void)mk::renderText(sources, d);
  return 0;
}
