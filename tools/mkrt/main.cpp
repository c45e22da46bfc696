// mkrt-run: greedy decoding with a compiled megakernel on a GPU, through the host runtime alone
// (runtime/mkrt.h). The decode loop is runtime/decode.h's, the one `mkdsl run` uses on every
// device: the prompt is fed one token per step (the step inputs whose metadata role is token and
// position), then each generated token (the next-token output, else the argmax of the logits) is fed back;
// --max-new 0 feeds the given tokens only (teacher forcing). Linked statically against libstdc++/libgcc: it needs only libc, and the
// CUDA driver at run time.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <sys/random.h>

#include "abi/layout.h"
#include "runtime/decode.h"
#include "runtime/mkrt.hpp"
#include "runtime/npy.h"

// Portability of the copied binary: the static libstdc++ of a glibc >= 2.36 build references
// arc4random (std::random_device, which nothing here uses), which would make the binary refuse
// to start on older systems (Ubuntu 22.04 has glibc 2.35). This definition satisfies that
// reference inside the binary. What remains is glibc >= 2.35 (the static unwinder's
// _dl_find_object); check with `objdump -T mkrt-run | grep GLIBC_`.
extern "C" uint32_t arc4random(void) {
  uint32_t v = 0;
  while (getrandom(&v, sizeof v, 0) != ssize_t(sizeof v)) {
  }
  return v;
}

namespace {

const char* kUsage = R"(usage: mkrt-run --ptx FILE.ptx [--meta FILE.meta.json] (--weights PATH | --random-weights SEED)
                --tokens 1,2,3 [--max-new N] [--dump-logits FILE.npy] [--compare-logits REF.npy]
                [--tolerance X] [--timeout-ms N] [--device N] [--trace FILE.json [--trace-step N]]
                [--no-prefill] [--warmup N]

Runs a megakernel built by `mkdsl build MODEL.mk -o FILE.ptx` on a CUDA GPU: the prompt in chunks
through the program's prefill step where it has one (else one token per step), then greedy
decoding; the decode loop of `mkdsl run` (runtime/decode.h).

  --ptx FILE               the kernel: PTX (or a cubin) from `mkdsl build`
  --meta FILE              its metadata sidecar (default: FILE with .meta.json for extension)
  --weights PATH           a .safetensors file, or a folder of shards with an index
  --random-weights SEED    deterministic random weights instead (identical to mkdsl run's)
  --tokens 1,2,3           the prompt
  --max-new N              greedy tokens to generate after the prompt (default 16);
                           0 feeds the given tokens only (teacher forcing)
  --dump-logits FILE.npy   every step's logits as float32 [steps, vocab]
  --compare-logits REF.npy compare every step's logits with REF (e.g. from `mkdsl run --device cpu
                           --dump-logits`, same tokens and weights): prints the worst relative L2
                           error and how often the argmax agrees; exit 1 above --tolerance
  --tolerance X            for --compare-logits (default 0.01)
  --timeout-ms N           how long one wait in the kernel may spin before the step fails with
                           the kernel's timeout record (default 2000)
  --device N               the CUDA device (default 0)
  --trace FILE.json        a kernel built with `mkdsl build --trace`: write when each task of the
                           last step started, was ready and ended as a Chrome trace (open it in
                           ui.perfetto.dev), and print a summary per op and SM on stderr
  --trace-step N           trace step N (1-based) instead of the last
  --no-prefill             feed the prompt one token per decode step even where the program has a
                           prefill step (as teacher forcing, --dump-logits, --compare-logits and
                           --trace always do: every step is then a decode step with its logits)
  --warmup N               run the whole decode N times before the reported one (default 0), then
                           reset the state: the report is then a warm process's, as a server's
                           second and later requests are (the first launch of each step pays
                           one-time costs)

Prints the generated ids on stdout (one line, comma-separated; nothing with --max-new 0), and on
stderr the device, the time to first token (host wall clock, prompt included), the per-token
latency (GPU time of each decode step's launch, CUDA events: median, p90, p99) and, with --trace,
the trace's summary.
Exit status: 0 on success, 1 on any error.
)";

struct Args {
  std::string ptx, meta, weights, dumpLogits, compareLogits, trace;
  int64_t traceStep = 0;  // 0: the last
  double tolerance = 1e-2;
  std::optional<uint64_t> randomWeights;
  std::vector<int64_t> tokens;
  int64_t maxNew = 16;
  int64_t timeoutMs = 2000;
  int64_t device = 0;
  int64_t warmup = 0;
  bool prefill = true;
};

int usage(const std::string& msg) {
  std::fprintf(stderr, "mkrt-run: error: %s\n(mkrt-run --help shows the options)\n", msg.c_str());
  return 1;
}

bool number(const std::string& s, int64_t& out) {
  if (s.empty() || s.size() > 18) return false;
  out = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  return true;
}

// Parses argv into `a`; returns an error message, or "" when fine.
std::string parse(int argc, char** argv, Args& a) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    bool inlineValue = false;
    if (size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      inlineValue = true;
    }
    auto take = [&](const char*) -> bool {
      if (inlineValue) return true;
      if (i + 1 >= argc) return false;
      value = argv[++i];
      return true;
    };
    int64_t n = 0;
    if (arg == "--ptx") {
      if (!take("--ptx")) return "--ptx needs a file";
      a.ptx = value;
    } else if (arg == "--meta") {
      if (!take("--meta")) return "--meta needs a file";
      a.meta = value;
    } else if (arg == "--weights") {
      if (!take("--weights")) return "--weights needs a path";
      a.weights = value;
    } else if (arg == "--random-weights") {
      if (!take("--random-weights") || !number(value, n)) return "--random-weights needs a non-negative integer seed";
      a.randomWeights = uint64_t(n);
    } else if (arg == "--tokens") {
      if (!take("--tokens")) return "--tokens needs a list such as 1,2,3";
      a.tokens.clear();
      size_t p = 0;
      for (;;) {
        size_t c = value.find(',', p);
        std::string item = value.substr(p, c == std::string::npos ? std::string::npos : c - p);
        if (!number(item, n) || n > INT32_MAX)
          return "--tokens needs non-negative integers separated by commas, found '" + value + "'";
        a.tokens.push_back(n);
        if (c == std::string::npos) break;
        p = c + 1;
      }
    } else if (arg == "--max-new") {
      if (!take("--max-new") || !number(value, n)) return "--max-new needs a non-negative integer";
      a.maxNew = n;
    } else if (arg == "--no-prefill") {
      a.prefill = false;
    } else if (arg == "--dump-logits") {
      if (!take("--dump-logits")) return "--dump-logits needs a file";
      a.dumpLogits = value;
    } else if (arg == "--compare-logits") {
      if (!take("--compare-logits")) return "--compare-logits needs a .npy file";
      a.compareLogits = value;
    } else if (arg == "--tolerance") {
      char* end = nullptr;
      if (!take("--tolerance")) return "--tolerance needs a number";
      a.tolerance = std::strtod(value.c_str(), &end);
      if (value.empty() || *end || !(a.tolerance >= 0)) return "--tolerance needs a non-negative number, found '" + value + "'";
    } else if (arg == "--timeout-ms") {
      if (!take("--timeout-ms") || !number(value, n) || n == 0 || n > 3600 * 1000)
        return "--timeout-ms needs a number of milliseconds from 1 to 3600000";
      a.timeoutMs = n;
    } else if (arg == "--trace") {
      if (!take("--trace") || value.empty()) return "--trace needs a file to write the trace to (FILE.json)";
      a.trace = value;
    } else if (arg == "--trace-step") {
      if (!take("--trace-step") || !number(value, n) || n == 0) return "--trace-step needs a step number (1 is the first)";
      a.traceStep = n;
    } else if (arg == "--warmup") {
      if (!take("--warmup") || !number(value, n) || n > 1000) return "--warmup needs a number of runs from 0 to 1000";
      a.warmup = n;
    } else if (arg == "--device") {
      if (!take("--device") || !number(value, n) || n > 1024) return "--device needs a device index";
      a.device = n;
    } else {
      return "unknown option '" + std::string(argv[i]) + "'";
    }
  }
  if (a.ptx.empty()) return "--ptx is required";
  if (a.meta.empty()) {
    std::string base = a.ptx;
    for (const char* ext : {".ptx", ".cubin"})
      if (base.size() > std::strlen(ext) && base.ends_with(ext)) base.resize(base.size() - std::strlen(ext));
    a.meta = base + ".meta.json";
  }
  if (a.weights.empty() == !a.randomWeights) return "give exactly one of --weights PATH and --random-weights SEED";
  if (a.tokens.empty()) return "--tokens is required";
  if (a.traceStep && a.trace.empty()) return "--trace-step goes with --trace FILE.json";
  return "";
}

// Every step's logits against a reference (e.g. `mkdsl run --device cpu --dump-logits`): the
// relative L2 error ||got - ref|| / ||ref|| and whether the argmax agrees. Exit status 1 when a
// step's error exceeds the tolerance.
int compare(const std::vector<float>& got, const mk::runtime::NpyArray& ref, int64_t steps, size_t vocab, const Args& a) {
  double worst = 0;
  int64_t worstStep = 0, argmaxSame = 0;
  for (int64_t s = 0; s < steps; ++s) {
    const float* g = got.data() + size_t(s) * vocab;
    const float* r = ref.data.data() + size_t(s) * vocab;
    double diff = 0, norm = 0;
    for (size_t k = 0; k < vocab; ++k) {
      diff += (double(g[k]) - r[k]) * (double(g[k]) - r[k]);
      norm += double(r[k]) * r[k];
    }
    const double rel = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
    if (!(rel <= worst)) worst = rel, worstStep = s;  // NaN counts as the worst
    argmaxSame += std::max_element(g, g + vocab) - g == std::max_element(r, r + vocab) - r;
  }
  const bool ok = worst <= a.tolerance;
  std::fprintf(stderr, "mkrt-run: logits against %s: worst relative L2 error %.3g (step %lld), argmax equal in %lld of %lld steps: %s\n",
               a.compareLogits.c_str(), worst, (long long)worstStep, (long long)argmaxSame, (long long)steps,
               ok ? "within" : "OVER");
  if (!ok) std::fprintf(stderr, "mkrt-run: error: the relative L2 error exceeds the tolerance %g\n", a.tolerance);
  return ok ? 0 : 1;
}

int run(const Args& a) {
  mkrt::Model m(a.ptx, a.meta, int(a.device));
  m.setTimeoutNs(uint64_t(a.timeoutMs) * 1000000ull);

  // The shared decode loop (runtime/decode.h) over this kernel; what it can check before any
  // step (tokens, the sequence against the KV cache) it checks before the weights are loaded.
  mk::runtime::MkrtStepper stepper(m);
  mk::runtime::checkDecode(stepper, a.tokens, a.maxNew);
  const size_t vocab = stepper.vocab();
  mk::runtime::DecodeOptions options;
  options.maxNew = a.maxNew;
  options.keepLogits = !a.dumpLogits.empty() || !a.compareLogits.empty();
  options.prefill = a.prefill;
  options.traced = !a.trace.empty();
  const int64_t steps = mk::runtime::plannedSteps(stepper, a.tokens.size(), options);
  std::optional<mk::runtime::TraceCapture> trace;
  if (!a.trace.empty()) trace.emplace(m, a.traceStep, steps);
  std::optional<mk::runtime::NpyArray> reference;
  if (!a.compareLogits.empty()) {
    reference = mk::runtime::readNpy(a.compareLogits);
    if (reference->shape.size() != 2 || reference->shape[1] != int64_t(vocab) || reference->shape[0] < steps)
      throw mkrt::Error(MKRT_ERR_ARGUMENT, a.compareLogits + " holds logits of shape " + mk::abi::shapeString(reference->shape) +
                                               "; expected at least [" + std::to_string(steps) + ", " + std::to_string(vocab) + "]");
  }

  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  if (a.randomWeights) m.randomWeights(*a.randomWeights);
  else m.loadWeights(a.weights);
  const double loadS = std::chrono::duration<double>(Clock::now() - t0).count();

  // Warm-up runs: the same decode unreported, then the state (caches) back to zero, so the
  // reported run starts as a cold one would, in a warm process.
  if (a.warmup > 0) {
    mk::runtime::DecodeOptions warm = options;
    warm.keepLogits = false;
    for (int64_t i = 0; i < a.warmup; ++i) mk::runtime::decode(stepper, a.tokens, warm);
    m.reset();
  }
  if (trace) options.afterStep = [&](int64_t step) { trace->afterStep(step); };
  const mk::runtime::DecodeResult r = mk::runtime::decode(stepper, a.tokens, options);
  if (!a.dumpLogits.empty()) mk::runtime::writeNpy(a.dumpLogits, r.steps, int64_t(vocab), r.logits);
  std::vector<std::string> traceLines;
  if (trace) traceLines = trace->write(a.trace);

  if (a.maxNew > 0) {
    std::string ids;
    for (int64_t t : r.generated) ids += (ids.empty() ? "" : ",") + std::to_string(t);
    std::printf("%s\n", ids.c_str());
    std::fflush(stdout);
  }
  std::fprintf(stderr, "mkrt-run: %s; weights loaded in %.2f s\n", m.device().c_str(), loadS);
  if (a.warmup > 0)
    std::fprintf(stderr, "mkrt-run: %lld warm-up run%s before the reported one\n", (long long)a.warmup, a.warmup == 1 ? "" : "s");
  for (const std::string& line : mk::runtime::decodeReport(r)) std::fprintf(stderr, "mkrt-run: %s\n", line.c_str());
  for (const std::string& line : traceLines) std::fprintf(stderr, "mkrt-run: %s\n", line.c_str());
  return reference ? compare(r.logits, *reference, r.steps, vocab, a) : 0;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(kUsage, stdout);
      return 0;
    }
  Args a;
  if (std::string err = parse(argc, argv, a); !err.empty()) return usage(err);
  try {
    return run(a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mkrt-run: error: %s\n", e.what());
    return 1;
  }
}
