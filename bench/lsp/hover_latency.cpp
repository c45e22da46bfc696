// The language server's latency on a large document (docs/lsp.md records the figures): a generated
// valid 5,000-line program (tests/lsp/large_document.h) is opened in a fresh server and hovered
// (the hover checks it first), edited and hovered again (re-checked), and hovered unchanged
// (the analysis reused). Each is timed over several rounds: the CPU time of the handling thread
// (the server answers on the calling thread, with no helpers) and the wall time; the median and
// the spread are printed. A figure, not a test: nothing here passes or fails.
//
//   build/bench/lsp/mk_bench_lsp_hover [--rounds N]     (default 11)
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tests/lsp/large_document.h"

using namespace mk::lsp::testing;

namespace {

struct Sample {
  double cpuMs, wallMs;
};

double threadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}

// Times one hover; exits if it does not answer.
Sample timedHover(LargeDocumentSession& s) {
  const auto w0 = std::chrono::steady_clock::now();
  const double c0 = threadCpuMs();
  const std::vector<std::string> answer = s.hover();
  const Sample out{threadCpuMs() - c0, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - w0).count()};
  if (answer.size() != 1 || answer[0].find(kHoverSignature) == std::string::npos) {
    std::fprintf(stderr, "mk_bench_lsp_hover: the hover did not answer with scale_7's signature\n");
    std::exit(1);
  }
  return out;
}

void report(const char* what, std::vector<Sample> v) {
  auto line = [&](const char* unit, double Sample::*field) {
    std::vector<double> x;
    for (const Sample& s : v) x.push_back(s.*field);
    std::sort(x.begin(), x.end());
    std::printf("  %-34s %-4s median %8.3f ms   min %8.3f   max %8.3f   (%zu rounds)\n", what, unit, x[x.size() / 2],
                x.front(), x.back(), x.size());
  };
  line("cpu", &Sample::cpuMs);
  line("wall", &Sample::wallMs);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 11;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: mk_bench_lsp_hover [--rounds N]\n");
      return 2;
    }
  }
  if (rounds < 1) rounds = 1;
  const std::string text = generatedProgram(5000);
  const long lines = std::count(text.begin(), text.end(), '\n');
  std::vector<Sample> afterOpen, afterEdit, unchanged;
  for (int r = 0; r < rounds; ++r) {
    LargeDocumentSession s(MK_STDLIB_DIR);
    s.open(text);
    afterOpen.push_back(timedHover(s));
    s.server().idle();
    s.edit();
    afterEdit.push_back(timedHover(s));
    unchanged.push_back(timedHover(s));
  }
  std::printf("mkdsl lsp, hover on a generated %ld-line document:\n", lines);
  report("after open (checks the document)", afterOpen);
  report("after an edit (re-checks it)", afterEdit);
  report("unchanged (analysis reused)", unchanged);
  return 0;
}
