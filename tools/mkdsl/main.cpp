// The mkdsl driver: a thin command-line client of the compiler libraries.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/amdgpu.h"
#include "compiler/compile.h"
#include "compiler/ptxas.h"
#include "frontend/format.h"
#include "frontend/parse.h"
#include "interp/interp.h"
#include "ir/html.h"
#include "ir/parse_ir.h"
#include "ir/print.h"
#include "ir/verify.h"
#include "lsp/server.h"
#include "lsp/transport.h"
#include "runtime/decode.h"
#include "runtime/metadata.h"
#include "runtime/mkrt.h"
#include "runtime/mkrt.hpp"
#include "runtime/npy.h"
#include "runtime/safetensors.h"
#include "runtime/weights.h"

#ifndef MKDSL_VERSION
#define MKDSL_VERSION "0.0.0"
#endif

namespace {

constexpr const char* kUsage = R"(mkdsl: compile .mk model descriptions into one GPU megakernel

Usage:
  mkdsl check [options] FILE...     parse and check programs; report every error found
  mkdsl build [options] FILE        compile a program's step into one GPU megakernel (PTX, or an
                                    AMDGPU code object)
  mkdsl run [options] FILE          decode with the compiled step on a GPU (--device cuda) or
                                    on the CPU interpreter (--device cpu)
  mkdsl verify FILE.sched           check a schedule in text form (--emit=schedule) for races,
                                    missing waits and deadlocks
  mkdsl fmt [--check] FILE...       rewrite files in the canonical format
  mkdsl lsp [-I DIR] [--stdlib DIR] serve the Language Server Protocol on stdin/stdout (for editors;
                                    docs/lsp.md)
  mkdsl --help                      this text
  mkdsl --version                   the compiler's version

Options for check:
  -I DIR                            also look for imported modules in DIR (repeatable)
  --config NAME                     check with this config only (default: every config in the file)
  --set NAME=VALUE                  override a field of the selected config, e.g. --set layers=1
  --stdlib DIR                      where `import std.*` looks (default: the installed stdlib)
  --diagnostics-format=text|json    how errors are printed (json: one array on stdout)
  --max-errors N                    stop after N errors (default 20; 0: no limit)
  --color=auto|always|never         colour in text diagnostics (default auto)

Options for build (and run):
  -I DIR, --config NAME, --stdlib DIR, --diagnostics-format, --max-errors, --color   as for check
  --gpu NAME                        target description: h200, h100, a100, mi300x, mi250x (one
                                    GCD); default: the --target's AMD GPU (gfx942: mi300x,
                                    gfx90a: mi250x), else h200
  --sms N, --smem BYTES, --warp N   override the target's SM count, shared memory per block,
                                    warp (wave) size
  --l2-ahead N                      override the target's L2 look-ahead of the loader warp, in
                                    tiles (h200: 8; 0: none)
  --mma=warp|warpgroup              the matrix instruction of tile products: per warp (mma.sync,
                                    MFMA) or, where a product's rows come in 64s, sm_90a's
                                    warpgroup wgmma (the default on sm_90a; per warp elsewhere)
  --mma-chains N                    wgmma: deal a tile's k steps over N independent accumulator
                                    sets (1, 2 or 4; default 1), summed after the products

Options for build:
  -o FILE                           write the output to FILE instead of standard output (`-o -`:
                                    standard output); its extension picks the format: .ptx, .cubin,
                                    .s (AMDGCN), .hsaco, .ll (LLVM IR)
  --emit=ptx|cubin                  NVPTX targets: the kernel as PTX (the default), or a cubin
                                    (needs ptxas, and -o)
  --emit=amdgcn|hsaco               AMDGPU targets: the kernel as AMDGCN assembly (the default), or
                                    a code object (linked by ld.lld, needs -o)
  --emit=llvm                       the LLVM IR the kernel is made from (either backend)
  --emit=graph|tasks|schedule       a stage instead: the op graph, the tasks with their regions,
                                    or the verified schedule (counters and per-SM queues)
  --format=text|json|html           for --emit=schedule: JSON for tools, HTML for a browser
  --step NAME                       for --emit=graph|tasks|schedule: the stage of that step of
                                    the program (default: its first); a kernel has them all
  --target ARCH                     code architecture: {archs}
                                    (default: the GPU's)
  --metadata FILE                   where the kernel's metadata sidecar (JSON) goes; with -o it
                                    defaults to the output's name with .meta.json for extension
  -v                                after building, print each kernel's registers, shared memory
                                    (LDS), spills and stack or scratch on stderr: ptxas's report
                                    (NVPTX), or the code object metadata (AMDGPU)
  --trace                           a kernel that records when each task starts, is ready and
                                    ends (an extra `trace` parameter; see mkrt-run --trace)

Options for run (and --gpu, --sms, --smem, --warp, --l2-ahead, --mma, --mma-chains, --target as for build):
  --device cuda|cuda:N|cpu          compile to PTX in-process and run it on CUDA device 0 (or N),
                                    or run the schedule on the CPU interpreter of the megakernel IR
                                    (AMDGPU code objects run from a HIP host: runtime/README.md)
  --weights PATH                    a .safetensors file, or a folder of shards with an index
  --random-weights SEED             deterministic random weights instead
  --tokens 1,2,3                    the prompt; each token is one decode step
  --max-new N                       greedy tokens to generate after the prompt (default 16);
                                    0 feeds the given tokens only (teacher forcing)
  --dump-logits FILE.npy            every step's logits as float32 [steps, vocab]
  --timeout-ms N                    cuda: how long one wait in the kernel may spin before the step
                                    fails with the kernel's timeout record (default 2000)
  --interleave-seed N               cpu: the seed of the interpreter's random SM interleaving
                                    (default 1)
  --trace FILE.json                 cuda: build the kernel with --trace and write when each task
                                    of the last step started, was ready and ended as a Chrome
                                    trace (ui.perfetto.dev); a summary per op and SM on stderr
  --trace-step N                    trace step N (1-based) instead of the last
  --no-prefill                      cuda: feed the prompt one token per decode step even where the
                                    program has a prefill step (as cpu, teacher forcing,
                                    --dump-logits and --trace always do)
  Prints the generated ids on stdout; the time to first token and the per-token latency
  (median, p90, p99) on stderr.

Options for fmt:
  --check                           change nothing; exit 1 and name the files that are not formatted
  --stdout                          print the formatted text instead of rewriting the file

Options for lsp:
  -I DIR, --stdlib DIR              as for check, for every document the server checks

ptxas (for --emit=cubin and -v): $MKDSL_PTXAS, else ptxas on PATH, else /usr/local/cuda/bin/ptxas.
ld.lld (for --emit=hsaco): $MKDSL_LLD, else ld.lld-19 or ld.lld on PATH, else /usr/bin/ld.lld-19
or /usr/lib/llvm-19/bin/ld.lld.

Exit status: 0 on success, 1 when the input has errors or the command line is wrong.
)";

// kUsage with its list of architectures filled in from the target registry (ir/targets.cpp).
std::string usage() {
  std::string archs;
  for (const std::string& a : mk::backend::archNames()) archs += (archs.empty() ? "" : ", ") + a;
  std::string text = kUsage;
  const std::string_view slot = "{archs}";
  return text.replace(text.find(slot), slot.size(), archs);
}

struct Args {
  std::string cmd;
  std::vector<std::string> files;
  mk::CompileOptions compile;  // -I, --config, --set, --stdlib, --gpu, --sms, ..., --target
  std::string emit;            // after parseArgs, never empty for build
  std::string format = "text";
  std::string step;            // build --emit=graph|tasks|schedule: which step ("": the first)
  std::string output;
  std::string metadata;        // the sidecar's path, after parseArgs (empty: none)
  bool verbose = false;
  bool amdgpu = false;         // build: the target is an AMDGPU architecture (after parseArgs)
  std::string device;          // run: "cuda" or "cpu"
  int deviceIndex = 0;         // run: the N of --device cuda:N
  int64_t timeoutMs = 2000;    // run --device cuda
  bool interleaveSeedGiven = false;
  std::string weights;
  std::optional<uint64_t> randomWeights;
  std::vector<int64_t> tokens;
  int64_t maxNew = 16;
  uint64_t interleaveSeed = 1;
  std::string dumpLogits;
  std::string trace;           // run --trace FILE.json
  int64_t traceStep = 0;       // run --trace-step N (0: the last)
  bool prefill = true;         // run: the prompt through the program's prefill step (cuda)
  bool json = false;
  unsigned maxErrors = 20;
  enum class Color { Auto, Always, Never } color = Color::Auto;
  bool fmtCheck = false;
  bool fmtStdout = false;
};

bool isEmit(const std::string& v) {
  return v == "ptx" || v == "llvm" || v == "cubin" || v == "amdgcn" || v == "hsaco" || v == "graph" || v == "tasks" ||
         v == "schedule";
}
bool isCodegen(const std::string& emit) {
  return emit == "ptx" || emit == "llvm" || emit == "cubin" || emit == "amdgcn" || emit == "hsaco";
}
// The kernel formats of one backend: NVPTX's PTX and cubin, AMDGPU's assembly and code object
// (LLVM IR is either's).
bool isAmdgpuFormat(const std::string& emit) { return emit == "amdgcn" || emit == "hsaco"; }
bool isNvptxFormat(const std::string& emit) { return emit == "ptx" || emit == "cubin"; }
bool isBinary(const std::string& emit) { return emit == "cubin" || emit == "hsaco"; }

// The format an output file's name asks for: .ptx, .cubin, .s, .hsaco, .ll; empty for any other name.
std::string formatOfExtension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  return ext == ".ptx" ? "ptx" : ext == ".ll" ? "llvm" : ext == ".cubin" ? "cubin" : ext == ".s" ? "amdgcn"
       : ext == ".hsaco" ? "hsaco" : "";
}

std::string describeFormat(const std::string& format) {
  return format == "ptx"      ? "a PTX file (.ptx)"
         : format == "llvm"   ? "an LLVM IR file (.ll)"
         : format == "cubin"  ? "a cubin (.cubin)"
         : format == "amdgcn" ? "AMDGCN assembly (.s)"
                              : "an AMDGPU code object (.hsaco)";
}

// `mkdsl build`: what to emit (from --emit, else -o's extension, else the target's assembly: PTX
// or AMDGCN), where the metadata sidecar goes, and whether the options fit together. An error
// message, or nullopt.
std::optional<std::string> resolveBuildOutput(Args& a) {
  std::string byName = a.output.empty() ? "" : formatOfExtension(a.output);
  const bool emitGiven = !a.emit.empty();
  if (a.emit.empty()) {
    if (!a.output.empty() && byName.empty())
      return "cannot tell the output format from the name '" + a.output +
             "': name it .ptx, .cubin, .s, .hsaco or .ll, or give --emit";
    a.emit = byName;
  } else if (!byName.empty() && byName != a.emit) {
    return "-o " + a.output + " names " + describeFormat(byName) + ", but --emit=" + a.emit + " was given";
  }
  // The GPU and the architecture, as the compiler will resolve them (--gpu h200 --target gfx942
  // fails here, before any work).
  std::string why;
  auto target = mk::resolveTarget(a.compile, why);
  if (!target) return why;
  const bool amdgpu = a.amdgpu = mk::backend::isAmdgpuArch(target->arch);
  if (a.emit.empty()) a.emit = amdgpu ? "amdgcn" : "ptx";
  const std::string kernelFormats = "--emit=ptx, cubin, amdgcn, hsaco or llvm";
  bool codegen = isCodegen(a.emit);
  if ((amdgpu && isNvptxFormat(a.emit)) || (!amdgpu && isAmdgpuFormat(a.emit)))
    return (emitGiven ? "--emit=" + a.emit : "-o " + a.output) + " is " + (amdgpu ? "NVPTX" : "AMDGPU") +
           " output, but the target " + target->arch + " is " + (amdgpu ? "AMDGPU" : "NVPTX") + ": use " +
           (amdgpu ? "--emit=amdgcn (.s), hsaco (.hsaco)" : "--emit=ptx (.ptx), cubin (.cubin)") + " or llvm (.ll)";
  if (isBinary(a.emit) && a.output.empty())
    return "--emit=" + a.emit + " needs -o FILE: " + (a.emit == "cubin" ? "a cubin" : "a code object") +
           " is binary and never goes to standard output";
  if (!codegen && !a.metadata.empty()) return "--metadata goes with " + kernelFormats;
  if (!codegen && a.verbose) return "-v goes with " + kernelFormats;
  if (!codegen && a.compile.backend.trace) return "--trace goes with " + kernelFormats;
  if (!codegen && a.compile.backend.dropSignalOfTask) return "--test-drop-signal goes with " + kernelFormats;
  if (!codegen && a.compile.backend.ablation != mk::backend::Ablation::None)
    return "--diagnostic-ablate goes with " + kernelFormats;
  if (!codegen) return std::nullopt;
  // The sidecar goes beside a file; -o /dev/null or a FIFO gets one only with --metadata.
  std::error_code ec;
  auto status = std::filesystem::status(a.output, ec);
  bool special = !a.output.empty() && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
                 !std::filesystem::is_directory(status);
  if (a.metadata.empty() && !a.output.empty() && !special)
    a.metadata = std::filesystem::path(a.output).replace_extension(".meta.json").string();
  if (!a.metadata.empty() && !a.output.empty() &&
      std::filesystem::path(a.metadata).lexically_normal() == std::filesystem::path(a.output).lexically_normal())
    return "the metadata sidecar and the output would both be '" + a.output + "'; choose another --metadata";
  return std::nullopt;
}

int usageError(const std::string& msg) {
  std::fprintf(stderr, "mkdsl: error: %s\n(run `mkdsl --help` for usage)\n", msg.c_str());
  return 1;
}

// Parses the options after the subcommand. Returns an error message, or nullopt when fine.
std::optional<std::string> parseArgs(const std::string& cmd, int argc, char** argv, int first, Args& a) {
  auto value = [&](int& i, const std::string& flag, std::string& out) -> bool {
    std::string arg = argv[i];
    if (arg.size() > flag.size() && arg.compare(0, flag.size() + 1, flag + "=") == 0) {
      out = arg.substr(flag.size() + 1);
      return true;
    }
    if (i + 1 >= argc) return false;
    out = argv[++i];
    return true;
  };
  auto is = [](const std::string& arg, const std::string& flag) {
    return arg == flag || arg.rfind(flag + "=", 0) == 0;
  };
  // Options about the program (-I, --config, --set, --stdlib) mean nothing to `verify`, which
  // reads a schedule; the diagnostics options apply to every command that reports.
  bool compiles = cmd == "check" || cmd == "build" || cmd == "run";
  bool searches = compiles || cmd == "lsp";  // -I and --stdlib
  bool reports = compiles || cmd == "verify";
  auto number = [](const std::string& v, int64_t& out) {
    if (v.empty() || v.size() > 18 || v.find_first_not_of("0123456789") != std::string::npos) return false;
    out = std::stoll(v);
    return true;
  };
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    std::string v;
    int64_t n = 0;
    if (arg == "--" ) {
      for (++i; i < argc; ++i) a.files.push_back(argv[i]);
      break;
    }
    if (arg.size() > 1 && arg[0] == '-') {
      if (searches && (arg == "-I" || (arg.rfind("-I", 0) == 0 && arg.size() > 2))) {
        if (arg.size() > 2) a.compile.check.includeDirs.push_back(arg.substr(2));
        else if (i + 1 < argc) a.compile.check.includeDirs.push_back(argv[++i]);
        else return "-I needs a directory";
      } else if (compiles && is(arg, "--config")) {
        if (!value(i, "--config", v) || v.empty()) return "--config needs a config name";
        a.compile.check.configName = v;
      } else if (compiles && is(arg, "--set")) {
        if (!value(i, "--set", v) || v.find('=') == std::string::npos || v.find('=') == 0)
          return "--set needs NAME=VALUE, e.g. --set layers=1";
        a.compile.check.overrides.push_back({v.substr(0, v.find('=')), v.substr(v.find('=') + 1)});
      } else if (searches && is(arg, "--stdlib")) {
        if (!value(i, "--stdlib", v) || v.empty()) return "--stdlib needs a directory";
        a.compile.check.stdlibDir = v;
      } else if (reports && is(arg, "--diagnostics-format")) {
        if (!value(i, "--diagnostics-format", v) || (v != "text" && v != "json"))
          return "--diagnostics-format must be text or json";
        a.json = v == "json";
      } else if (reports && is(arg, "--max-errors")) {
        if (!value(i, "--max-errors", v) || v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos)
          return "--max-errors needs a number";
        a.maxErrors = static_cast<unsigned>(std::stoul(v));
      } else if (reports && is(arg, "--color")) {
        if (!value(i, "--color", v) || (v != "auto" && v != "always" && v != "never"))
          return "--color must be auto, always or never";
        a.color = v == "always" ? Args::Color::Always : v == "never" ? Args::Color::Never : Args::Color::Auto;
      } else if ((cmd == "build" || cmd == "run") && is(arg, "--gpu")) {
        if (!value(i, "--gpu", v) || !mk::ir::findTarget(v)) {
          std::string names;
          for (const auto& t : mk::ir::targetNames()) names += (names.empty() ? "" : ", ") + t;
          return "--gpu must be one of " + names;
        }
        a.compile.gpu = v;
      } else if ((cmd == "build" || cmd == "run") && (is(arg, "--sms") || is(arg, "--smem") || is(arg, "--warp"))) {
        std::string flag = arg.substr(0, arg.find('='));
        if (!value(i, flag, v) || !number(v, n) || n <= 0 || n > (1 << 30)) return flag + " needs a positive number";
        (flag == "--sms" ? a.compile.sms : flag == "--smem" ? a.compile.smem : a.compile.warp) = static_cast<int>(n);
      } else if ((cmd == "build" || cmd == "run") && is(arg, "--l2-ahead")) {
        if (!value(i, "--l2-ahead", v) || !number(v, n) || n > 64) return "--l2-ahead needs a tile count from 0 to 64";
        a.compile.l2Ahead = static_cast<int>(n);
      } else if ((cmd == "build" || cmd == "run") && is(arg, "--mma-chains")) {
        if (!value(i, "--mma-chains", v) || !number(v, n) || (n != 1 && n != 2 && n != 4))
          return "--mma-chains must be 1, 2 or 4";
        a.compile.mmaChains = static_cast<int>(n);
      } else if ((cmd == "build" || cmd == "run") && is(arg, "--mma")) {
        if (!value(i, "--mma", v) || (v != "warp" && v != "warpgroup")) return "--mma must be warp or warpgroup";
        a.compile.backend.warpgroupMma = v == "warpgroup";
      } else if (cmd == "build" && is(arg, "--emit")) {
        if (!value(i, "--emit", v) || !isEmit(v))
          return "--emit must be ptx, cubin, amdgcn, hsaco, llvm, graph, tasks or schedule";
        a.emit = v;
      } else if ((cmd == "build" || cmd == "run") && is(arg, "--target")) {
        if (!value(i, "--target", v)) return "--target needs an architecture such as sm_90a";
        if (auto why = mk::archError(v)) return "--target: " + *why;
        a.compile.arch = v;
      } else if (cmd == "build" && is(arg, "--metadata")) {
        if (!value(i, "--metadata", v) || v.empty()) return "--metadata needs a file";
        a.metadata = v;
      } else if (cmd == "build" && arg == "--trace") {
        a.compile.backend.trace = true;
      } else if (cmd == "build" && arg == "-v") {
        a.verbose = true;
      } else if (cmd == "build" && is(arg, "--diagnostic-ablate")) {
        // Diagnostic builds with wrong results (docs/cli.md): which side bounds the streaming.
        if (!value(i, "--diagnostic-ablate", v) || (v != "weight-copies" && v != "weight-math"))
          return "--diagnostic-ablate must be weight-copies or weight-math";
        a.compile.backend.ablation = v == "weight-copies" ? mk::backend::Ablation::WeightCopies : mk::backend::Ablation::WeightMath;
      } else if (cmd == "build" && is(arg, "--test-drop-signal")) {
        // Test-only fault injection (docs/cli.md): the task signals nothing, so waits time out.
        if (!value(i, "--test-drop-signal", v) || !number(v, n) || n > INT32_MAX) return "--test-drop-signal needs a task id";
        a.compile.backend.dropSignalOfTask = static_cast<int>(n);
      } else if (cmd == "build" && is(arg, "--step")) {
        if (!value(i, "--step", v) || v.empty()) return "--step needs a step name";
        a.step = v;
      } else if (cmd == "build" && is(arg, "--format")) {
        if (!value(i, "--format", v) || (v != "text" && v != "json" && v != "html"))
          return "--format must be text, json or html";
        a.format = v;
      } else if (cmd == "build" && (arg == "-o" || is(arg, "--output"))) {
        if (arg == "-o" ? !(i + 1 < argc && (v = argv[++i], true)) : !value(i, "--output", v)) return "-o needs a file";
        a.output = v == "-" ? "" : v;  // `-o -`: standard output, as without -o
      } else if (cmd == "run" && is(arg, "--device")) {
        if (!value(i, "--device", v)) v.clear();
        if (v.rfind("cuda:", 0) == 0 && number(v.substr(5), n) && n <= 1024) {
          a.device = "cuda";
          a.deviceIndex = static_cast<int>(n);
        } else if (v == "cuda" || v == "cpu") {
          a.device = v;
        } else {
          return "--device must be cuda, cuda:N (a CUDA device index) or cpu";
        }
      } else if (cmd == "run" && is(arg, "--timeout-ms")) {
        if (!value(i, "--timeout-ms", v) || !number(v, n) || n == 0 || n > 3600 * 1000)
          return "--timeout-ms needs a number of milliseconds from 1 to 3600000";
        a.timeoutMs = n;
      } else if (cmd == "run" && is(arg, "--weights")) {
        if (!value(i, "--weights", v) || v.empty()) return "--weights needs a path";
        a.weights = v;
      } else if (cmd == "run" && is(arg, "--random-weights")) {
        if (!value(i, "--random-weights", v) || !number(v, n)) return "--random-weights needs a number";
        a.randomWeights = static_cast<uint64_t>(n);
      } else if (cmd == "run" && is(arg, "--tokens")) {
        if (!value(i, "--tokens", v)) return "--tokens needs a list such as 1,2,3";
        size_t at = 0;
        while (at <= v.size()) {
          size_t comma = v.find(',', at);
          std::string item = v.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
          if (!number(item, n) || n > INT32_MAX) return "--tokens needs non-negative integers separated by commas, found '" + v + "'";
          a.tokens.push_back(n);
          if (comma == std::string::npos) break;
          at = comma + 1;
        }
      } else if (cmd == "run" && is(arg, "--max-new")) {
        if (!value(i, "--max-new", v) || !number(v, n) || n > 1000000) return "--max-new needs a number";
        a.maxNew = n;
      } else if (cmd == "run" && is(arg, "--interleave-seed")) {
        if (!value(i, "--interleave-seed", v) || !number(v, n)) return "--interleave-seed needs a number";
        a.interleaveSeed = static_cast<uint64_t>(n);
        a.interleaveSeedGiven = true;
      } else if (cmd == "run" && is(arg, "--trace")) {
        if (!value(i, "--trace", v) || v.empty()) return "--trace needs a file to write the trace to (FILE.json)";
        a.trace = v;
      } else if (cmd == "run" && arg == "--no-prefill") {
        a.prefill = false;
      } else if (cmd == "run" && is(arg, "--trace-step")) {
        if (!value(i, "--trace-step", v) || !number(v, n) || n == 0) return "--trace-step needs a step number (1 is the first)";
        a.traceStep = n;
      } else if (cmd == "run" && is(arg, "--dump-logits")) {
        if (!value(i, "--dump-logits", v) || v.empty()) return "--dump-logits needs a file";
        a.dumpLogits = v;
      } else if (cmd == "fmt" && arg == "--check") {
        a.fmtCheck = true;
      } else if (cmd == "fmt" && arg == "--stdout") {
        a.fmtStdout = true;
      } else {
        return "unknown option '" + arg + "' for `mkdsl " + cmd + "`";
      }
      continue;
    }
    a.files.push_back(arg);
  }
  if (cmd == "lsp") {
    if (!a.files.empty()) return "`mkdsl lsp` takes no files; it reads LSP messages on standard input";
    return std::nullopt;
  }
  if (a.files.empty()) return "`mkdsl " + cmd + "` needs at least one file";
  if ((cmd == "build" || cmd == "run") && a.files.size() != 1) return "`mkdsl " + cmd + "` takes one program";
  if (cmd == "run") {
    if (a.device.empty()) return "`mkdsl run` needs --device cuda or --device cpu";
    if (a.device == "cuda" && a.interleaveSeedGiven) return "--interleave-seed goes with --device cpu (the interpreter)";
    if (a.weights.empty() == !a.randomWeights) return "`mkdsl run` needs exactly one of --weights PATH and --random-weights SEED";
    if (a.tokens.empty()) return "`mkdsl run` needs --tokens";
    if (!a.trace.empty() && a.device != "cuda") return "--trace needs --device cuda";
    if (a.traceStep && a.trace.empty()) return "--trace-step goes with --trace FILE.json";
    if (a.device == "cuda") {
      std::string why;
      auto target = mk::resolveTarget(a.compile, why);
      if (!target) return why;
      if (mk::backend::isAmdgpuArch(target->arch))
        return "--device cuda runs NVPTX code, but the target " + target->arch +
               " is AMDGPU (the runtime has no HIP path; build a .hsaco and load it from a HIP host: runtime/README.md)";
    }
    a.compile.backend.trace = !a.trace.empty();
  }
  if (cmd == "build") {
    if (auto err = resolveBuildOutput(a)) return err;
    if (a.format != "text" && a.emit != "schedule") return "--format json or html goes with --emit=schedule";
    if (!a.step.empty() && isCodegen(a.emit))
      return "--step goes with --emit=graph, tasks or schedule: a kernel holds every step of the program";
  }
  return std::nullopt;
}

MK_DIAGNOSTIC(CannotWrite, Error, "cannot write '{0}': {1}", std::string, std::string);
MK_DIAGNOSTIC(RunFailed, Error, "{0}", std::string);
MK_DIAGNOSTIC(PtxasNotFound, Error, "--emit=cubin needs ptxas: {0}", std::string);
MK_DIAGNOSTIC(PtxasFailed, Error, "ptxas failed on the generated PTX: {0}", std::string);
MK_DIAGNOSTIC(LldNotFound, Error, "--emit=hsaco needs ld.lld: {0}", std::string);
MK_DIAGNOSTIC(LldFailed, Error, "ld.lld failed to link the code object: {0}", std::string);
MK_DIAGNOSTIC(UnknownStep, Error, "the program has no step '{0}'; its steps: {1}", std::string, std::string);

void printDiagnostics(const mk::SourceManager& sm, const mk::DiagnosticEngine& diags, const Args& a) {
  if (a.json) {
    std::fputs(mk::renderJson(sm, diags.diagnostics()).c_str(), stdout);
    return;
  }
  bool color = a.color == Args::Color::Always || (a.color == Args::Color::Auto && isatty(STDERR_FILENO));
  for (const auto& d : diags.diagnostics()) std::fputs(mk::renderText(sm, d, color).c_str(), stderr);
}

int runCheck(const Args& a) {
  mk::SourceManager sm;
  mk::DiagnosticEngine diags(sm);
  diags.setErrorLimit(a.maxErrors);
  mk::CheckOptions options = a.compile.check;
  options.allConfigs = true;
  for (const auto& path : a.files)
    if (auto id = mk::loadFile(sm, diags, path)) mk::checkProgram(sm, diags, *id, options);
  printDiagnostics(sm, diags, a);
  return diags.hasErrors() ? 1 : 0;
}

// The temporary files of open OutputFiles, for the signal handler: an interrupted build (Ctrl-C
// during a long compile) leaves nothing behind either. Fixed storage: the handler may only call
// async-signal-safe functions.
constexpr int kMaxTemps = 4;
char gTemps[kMaxTemps][4096];
volatile sig_atomic_t gTempUsed[kMaxTemps];

void removeTempsAndDie(int sig) {
  for (int i = 0; i < kMaxTemps; ++i)
    if (gTempUsed[i]) unlink(gTemps[i]);
  signal(sig, SIG_DFL);
  raise(sig);
}

// A file written whole or not at all. A regular file (or a new one) gets its bytes in a temporary
// file beside it, renamed over it on commit; until then (an error, a failed compile, Ctrl-C) the
// destination is untouched and the temporary file removed. Anything else that exists at the path
// (a FIFO, /dev/null, a terminal) is written into directly at commit and never replaced. Opened
// before compiling, so a bad path fails fast.
class OutputFile {
 public:
  OutputFile() = default;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile() {
    if (fd_ >= 0) close(fd_);
    if (!temp_.empty()) unlink(temp_.c_str());
    forget();
  }

  // False with `error` set when the folder is missing or not writable, or `path` is a folder or
  // a file we may not write.
  bool open(const std::string& path, std::string& error) {
    path_ = dest_ = path;
    struct stat st;
    mode_t mode = 0;
    if (stat(path.c_str(), &st) == 0) {  // follows symlinks: a link's target is what gets written
      if (S_ISDIR(st.st_mode)) {
        error = "it is a directory";
        return false;
      }
      if (access(path.c_str(), W_OK) != 0) {
        error = std::strerror(errno);
        return false;
      }
      if (!S_ISREG(st.st_mode)) {
        direct_ = true;
        if (S_ISCHR(st.st_mode)) {
          int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
          terminal_ = fd >= 0 && isatty(fd);
          if (fd >= 0) close(fd);
        }
        return true;
      }
      std::error_code ec;
      auto real = std::filesystem::canonical(path, ec);  // replace the link's target, not the link
      if (!ec) dest_ = real.string();
      mode = st.st_mode & 07777;
    } else {
      mode_t mask = umask(0);
      umask(mask);
      mode = 0666 & ~mask;
    }
    std::filesystem::path p(dest_);
    std::string dir = p.parent_path().empty() ? "." : p.parent_path().string();
    std::string pattern = dir + "/." + p.filename().string() + ".tmp-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    fd_ = mkstemp(buf.data());
    if (fd_ < 0) {
      error = errno == ENOENT ? "the directory '" + dir + "' does not exist" : std::strerror(errno);
      return false;
    }
    temp_ = buf.data();
    for (int i = 0; i < kMaxTemps && slot_ < 0 && temp_.size() < sizeof gTemps[i]; ++i)
      if (!gTempUsed[i]) {
        std::memcpy(gTemps[i], temp_.c_str(), temp_.size() + 1);
        gTempUsed[i] = 1;
        slot_ = i;
      }
    static bool handlersInstalled = false;
    if (!handlersInstalled) {
      for (int sig : {SIGINT, SIGTERM, SIGHUP}) signal(sig, removeTempsAndDie);
      handlersInstalled = true;
    }
    // mkstemp makes the file private (0600): give it the mode the file had, or a plain create's.
    fchmod(fd_, mode);
    return true;
  }

  // Puts the bytes in place to commit: into the temporary file, or kept for a direct write.
  bool stage(std::string data, std::string& error) {
    if (direct_) {
      data_ = std::move(data);
      return true;
    }
    return writeAll(fd_, data, error);
  }

  bool commit(std::string& error) {
    if (direct_) {
      int fd = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) {
        error = std::strerror(errno);
        return false;
      }
      bool ok = writeAll(fd, data_, error);
      close(fd);
      return ok;
    }
    int fd = fd_;
    fd_ = -1;
    if (close(fd) != 0) {
      error = std::strerror(errno);
      return false;
    }
    if (rename(temp_.c_str(), dest_.c_str()) != 0) {
      error = std::strerror(errno);
      return false;
    }
    temp_.clear();
    forget();
    return true;
  }

  const std::string& path() const { return path_; }
  bool terminal() const { return terminal_; }

 private:
  static bool writeAll(int fd, const std::string& data, std::string& error) {
    for (size_t done = 0; done < data.size();) {
      ssize_t n = ::write(fd, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        error = std::strerror(errno);
        return false;
      }
      done += static_cast<size_t>(n);
    }
    return true;
  }

  void forget() {
    if (slot_ >= 0) gTempUsed[slot_] = 0;
    slot_ = -1;
  }

  std::string path_;  // as given
  std::string dest_;  // what is replaced: path_, or the file a symlink at path_ points to
  std::string temp_;
  std::string data_;  // direct writes, until commit
  int fd_ = -1;
  int slot_ = -1;     // in gTemps
  bool direct_ = false;
  bool terminal_ = false;
};

bool openOutput(OutputFile& file, const std::string& path, mk::DiagnosticEngine& diags) {
  std::string error;
  if (file.open(path, error)) return true;
  diags.emit(mk::SourceRange{}, CannotWrite, path, error);
  return false;
}

// Writes every file, or (as far as the file system allows) none: all are staged before any is
// committed, so a full disk cannot leave a kernel without its metadata.
bool writeOutputs(const std::vector<std::pair<OutputFile*, std::string>>& files, mk::DiagnosticEngine& diags) {
  std::string error;
  for (const auto& [f, data] : files)
    if (!f->stage(data, error)) {
      diags.emit(mk::SourceRange{}, CannotWrite, f->path(), error);
      return false;
    }
  for (const auto& [f, data] : files)
    if (!f->commit(error)) {
      diags.emit(mk::SourceRange{}, CannotWrite, f->path(), error);
      return false;
    }
  return true;
}

// The launch of the entry named `name` (one per step), or null.
const mk::backend::LaunchInfo* launchOf(const std::vector<mk::backend::LaunchInfo>& launches, const std::string& name) {
  for (const auto& l : launches)
    if (l.entry == name) return &l;
  return nullptr;
}

// `-v`: ptxas's report per function on stderr; each entry also gets the dynamic shared memory
// the runtime passes at launch, which ptxas cannot see.
void printPtxasReport(const mk::ptxas::Result& r, const std::vector<mk::backend::LaunchInfo>& launches) {
  for (const auto& f : r.functions) {
    std::string line = mk::ptxas::summary(f);
    if (auto* l = launchOf(launches, f.name)) line += "; " + std::to_string(l->dynamicSmemBytes) + " bytes dynamic shared at launch";
    std::fprintf(stderr, "ptxas -arch=%s: %s\n", launches[0].arch.c_str(), line.c_str());
  }
}

// `-v` on AMDGPU: each kernel's registers, LDS and scratch from the code object metadata (what
// `llvm-readelf --notes` shows of the .hsaco), plus the dynamic LDS the runtime passes at launch.
void printAmdgpuReport(const std::string& assembly, const std::vector<mk::backend::LaunchInfo>& launches) {
  for (const auto& k : mk::amdgpu::parseResources(assembly)) {
    std::string line = mk::amdgpu::summary(k);
    if (auto* l = launchOf(launches, k.name)) line += "; " + std::to_string(l->dynamicSmemBytes) + " bytes dynamic LDS at launch";
    std::fprintf(stderr, "%s: %s\n", launches[0].arch.c_str(), line.c_str());
  }
}

// The stages (graph, tasks, schedule): text, to -o or stdout.
int buildStage(const Args& a, mk::SourceManager& sm, mk::DiagnosticEngine& diags) {
  OutputFile out;
  if (!a.output.empty() && !openOutput(out, a.output, diags)) return 1;
  auto id = mk::loadFile(sm, diags, a.files[0]);
  if (!id) return 1;
  // The step --step names, else the program's first.
  auto pick = [&](auto& steps, auto graphOf) -> decltype(&steps[0]) {
    std::string names;
    for (auto& s : steps) {
      if (a.step.empty() || graphOf(s).step == a.step) return &s;
      names += (names.empty() ? "" : ", ") + graphOf(s).step;
    }
    diags.emit(mk::SourceRange{}, UnknownStep, a.step, names);
    return nullptr;
  };
  std::string text;
  if (a.emit == "graph") {
    auto graphs = mk::elaborate(sm, diags, *id, a.compile);
    if (!graphs) return 1;
    auto* graph = pick(*graphs, [](const mk::ir::Graph& g) -> const mk::ir::Graph& { return g; });
    if (!graph) return 1;
    text = mk::ir::printGraph(*graph);
  } else {
    auto steps = mk::scheduleProgram(sm, diags, *id, a.compile);
    if (!steps) return 1;
    auto* kernel = pick(*steps, [](const mk::ir::Megakernel& k) -> const mk::ir::Graph& { return k.graph; });
    if (!kernel) return 1;
    text = a.emit == "tasks"      ? mk::ir::printTasks(*kernel)
           : a.format == "json"   ? mk::ir::scheduleJson(*kernel)
           : a.format == "html"   ? mk::ir::scheduleHtml(*kernel)
                                  : mk::ir::printSchedule(*kernel);
  }
  if (a.output.empty()) {
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  return writeOutputs({{&out, std::move(text)}}, diags) ? 0 : 1;
}

// The kernel (ptx, cubin, amdgcn, hsaco, llvm) and its metadata sidecar.
int buildKernel(const Args& a, mk::SourceManager& sm, mk::DiagnosticEngine& diags) {
  // Everything that can fail without compiling fails first: the tools, then the output paths.
  std::string noPtxas, noLld;
  std::optional<std::string> ptxas, lld;
  const bool ptxasReport = a.verbose && !a.amdgpu;  // AMDGPU resources come from LLVM itself
  if (a.emit == "cubin" || ptxasReport) ptxas = mk::ptxas::find(&noPtxas);
  if (a.emit == "cubin" && !ptxas) {
    diags.emit(mk::SourceRange{}, PtxasNotFound, noPtxas);
    return 1;
  }
  if (a.emit == "hsaco" && !(lld = mk::amdgpu::findLld(&noLld))) {
    diags.emit(mk::SourceRange{}, LldNotFound, noLld);
    return 1;
  }
  OutputFile out, meta;
  if (!a.output.empty() && !openOutput(out, a.output, diags)) return 1;
  if (isBinary(a.emit) && out.terminal()) {  // -o /dev/tty: binary would garble the terminal
    diags.emit(mk::SourceRange{}, CannotWrite, a.output,
               std::string(a.emit == "cubin" ? "a cubin" : "a code object") + " is binary and is never written to a terminal");
    return 1;
  }
  if (!a.metadata.empty() && !openOutput(meta, a.metadata, diags)) return 1;

  auto id = mk::loadFile(sm, diags, a.files[0]);
  if (!id) return 1;
  auto built = mk::compile(sm, diags, *id, a.compile);
  if (!built) return 1;
  const std::vector<mk::backend::LaunchInfo>& launches = built->artifact.launches;

  std::string data = a.emit == "llvm" ? built->artifact.llvmIR : built->artifact.assembly;
  std::optional<mk::ptxas::Result> assembled;
  if (ptxas && (a.emit == "cubin" || ptxasReport)) {
    assembled = mk::ptxas::run(*ptxas, built->artifact.assembly, {launches[0].arch, a.verbose, a.emit == "cubin"});
    if (!assembled->ok) {
      std::string log = assembled->error;
      while (!log.empty() && log.back() == '\n') log.pop_back();
      diags.emit(mk::SourceRange{}, PtxasFailed, log);
      return 1;
    }
    if (a.emit == "cubin") data = std::move(assembled->cubin);
  }
  if (lld) {
    mk::amdgpu::LinkResult linked = mk::amdgpu::link(*lld, built->artifact.object);
    if (!linked.ok) {
      while (!linked.error.empty() && linked.error.back() == '\n') linked.error.pop_back();
      diags.emit(mk::SourceRange{}, LldFailed, linked.error);
      return 1;
    }
    data = std::move(linked.codeObject);
  }

  std::vector<std::pair<OutputFile*, std::string>> files;
  if (!a.output.empty()) files.push_back({&out, std::move(data)});
  if (!a.metadata.empty()) files.push_back({&meta, built->metadataJson});
  if (!writeOutputs(files, diags)) return 1;
  if (a.output.empty()) std::fwrite(data.data(), 1, data.size(), stdout);

  if (a.verbose && a.amdgpu) printAmdgpuReport(built->artifact.assembly, launches);
  if (assembled && ptxasReport) printPtxasReport(*assembled, launches);
  if (ptxasReport && !ptxas) std::fprintf(stderr, "mkdsl: note: -v: %s; no register and spill report\n", noPtxas.c_str());
  return 0;
}

int runBuild(const Args& a) {
  mk::SourceManager sm;
  mk::DiagnosticEngine diags(sm);
  diags.setErrorLimit(a.maxErrors);
  int status = isCodegen(a.emit) ? buildKernel(a, sm, diags) : buildStage(a, sm, diags);
  printDiagnostics(sm, diags, a);
  return status != 0 || diags.hasErrors() ? 1 : 0;
}

// `mkdsl run --device cpu`: runtime/decode.h's stepper over the CPU interpreter. The step's
// interface (inputs and their bounds, the logits and next-token outputs) comes from the same
// metadata the GPU runtime reads, so both devices check tokens and positions alike. The
// metadata lists the graph's tensors in order: its tensor i is the interpreter's tensor i.
class InterpreterStepper : public mk::runtime::MetadataStepper {
 public:
  InterpreterStepper(const mk::ir::Megakernel& kernel, mk::runtime::KernelMetadata md, uint64_t interleaveSeed)
      : MetadataStepper(std::move(md)), interp_(kernel), seed_(interleaveSeed) {}
  mk::interp::Interpreter& interpreter() { return interp_; }
  void step(const std::vector<int64_t>& inputs) override {
    const auto t0 = std::chrono::steady_clock::now();
    // Step `pos` uses seed N + pos (the SM interleaving; a correct schedule gives the same bits).
    interp_.step(inputs, seed_ + static_cast<uint64_t>(interp_.stepsRun()));
    lastMs_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  std::vector<float> logits() override { return interp_.tensor(logitsTensor()); }
  int64_t next() override { return interp_.tensorInts(nextTensor()).at(0); }
  double lastStepMs() const override { return lastMs_; }
  std::string timeSource() const override { return "interpreter host time per step"; }

 private:
  mk::interp::Interpreter interp_;
  uint64_t seed_;
  double lastMs_ = 0;
};

// The metadata of a kernel scheduled for the interpreter only (no code generated): the
// backend's sidecar with launch fields that describe no GPU launch. What the CPU run uses of it
// is the program's part: tensors, weights' sources and declarations, inputs and their bounds.
std::string interpreterMetadata(const std::vector<mk::ir::Megakernel>& steps) {
  std::vector<mk::backend::LaunchInfo> launches;
  for (const mk::ir::Megakernel& kernel : steps) {
    mk::backend::LaunchInfo& launch = launches.emplace_back();
    launch.entry = "cpu_" + kernel.graph.step;
    launch.arch = kernel.target.arch.empty() ? "cpu" : kernel.target.arch;
    launch.grid = std::max<int>(1, static_cast<int>(kernel.queues.size()));
    launch.block = 1;
    launch.computeThreads = 1;
    launch.syncCounters = static_cast<int64_t>(kernel.counters.size());
    launch.params = mk::abi::kernelParamNames(false);
  }
  return mk::backend::metadataJson(steps, launches);
}

// Greedy decoding with the compiled step: the prompt one token per step, then each generated
// token fed back (runtime/decode.h, shared with mkrt-run). --device cuda compiles to PTX
// in-process and runs it through the host runtime (mkrt_open_data); --device cpu runs the
// verified schedule on the interpreter. Everything that can be refused without a device is
// refused first: the driver's absence, the checkpoint's files, then (after compiling) tokens
// and positions against the kernel's bounds and every weight against the checkpoint.
int runRun(const Args& a) {
  mk::SourceManager sm;
  mk::DiagnosticEngine diags(sm);
  diags.setErrorLimit(a.maxErrors);
  auto fail = [&](const std::string& msg) {
    diags.emit(mk::SourceRange{}, RunFailed, msg);
    printDiagnostics(sm, diags, a);
    return 1;
  };
  const bool cuda = a.device == "cuda";
  if (cuda) {
    char err[4096];
    if (mkrt_probe_device(a.deviceIndex, err, sizeof err) != MKRT_OK) return fail(err);
  }
  std::optional<mk::runtime::SafetensorsSet> checkpoint;
  if (!a.weights.empty()) {
    try {
      checkpoint = mk::runtime::SafetensorsSet::open(a.weights);
    } catch (const std::exception& e) {
      return fail(e.what());
    }
  }

  // The kernel: PTX and its metadata (cuda), or the verified schedule (cpu).
  auto id = mk::loadFile(sm, diags, a.files[0]);
  std::optional<std::vector<mk::ir::Megakernel>> steps;
  std::string ptx, metadataJson;
  if (id && cuda) {
    mk::CompileOptions options = a.compile;
    if (auto built = mk::compile(sm, diags, *id, options)) {
      steps = std::move(built->steps);
      ptx = std::move(built->artifact.assembly);
      metadataJson = std::move(built->metadataJson);
    }
  } else if (id) {
    steps = mk::scheduleProgram(sm, diags, *id, a.compile);
    if (steps) metadataJson = interpreterMetadata(*steps);
  }
  const mk::ir::Megakernel* kernel = steps ? &steps->front() : nullptr;
  if (!kernel) {
    printDiagnostics(sm, diags, a);
    return 1;
  }
  // The runtime's reading of what the compiler wrote; a failure is a compiler bug.
  mk::runtime::KernelMetadata md = mk::runtime::parseMetadata(metadataJson, a.files[0] + " (kernel metadata)");
  for (size_t t = 0; t < md.tensors.size(); ++t)
    if (t >= kernel->graph.tensors.size() || md.tensors[t].name != kernel->graph.tensors[t].name)
      throw std::runtime_error("the kernel metadata's tensor " + std::to_string(t) + " is not the graph's");

  try {
    // Before any device work: the sequence against the step's bounds, the weights against the
    // checkpoint (each error names the tensor, its safetensors name and its .mk line).
    mk::runtime::MetadataStepper described(md);
    mk::runtime::checkDecode(described, a.tokens, a.maxNew);
    if (!a.trace.empty()) mk::runtime::traceStepOf(a.traceStep, mk::runtime::decodeSteps(a.tokens.size(), a.maxNew));
    if (checkpoint)
      for (const mk::runtime::TensorMeta& t : md.tensors)
        if (t.kind == mk::runtime::TensorMeta::Weight)
          mk::runtime::checkWeightSources({t.name, t.dtype, t.shape, t.layout, t.sources, t.declaredAt}, *checkpoint);

    mk::runtime::DecodeOptions options;
    options.maxNew = a.maxNew;
    options.keepLogits = !a.dumpLogits.empty();
    options.prefill = a.prefill;
    options.traced = !a.trace.empty();
    mk::runtime::DecodeResult result;
    std::vector<std::string> traceLines;  // --trace: the summary, after the timings
    std::string device;
    double loadS = 0;
    using Clock = std::chrono::steady_clock;
    if (cuda) {
      mkrt::Model model = mkrt::Model::fromData(ptx, metadataJson, a.deviceIndex);
      model.setTimeoutNs(static_cast<uint64_t>(a.timeoutMs) * 1000000ull);
      device = model.device();
      const auto t0 = Clock::now();
      if (a.randomWeights) model.randomWeights(*a.randomWeights);
      else model.loadWeights(a.weights);
      loadS = std::chrono::duration<double>(Clock::now() - t0).count();
      mk::runtime::MkrtStepper stepper(model);
      std::optional<mk::runtime::TraceCapture> trace;
      if (!a.trace.empty()) {
        trace.emplace(model, a.traceStep, mk::runtime::decodeSteps(a.tokens.size(), a.maxNew));
        options.afterStep = [&](int64_t step) { trace->afterStep(step); };
      }
      result = mk::runtime::decode(stepper, a.tokens, options);
      if (trace) traceLines = trace->write(a.trace);
    } else {
      InterpreterStepper stepper(*kernel, md, a.interleaveSeed);
      device = "the CPU interpreter (" + std::to_string(kernel->queues.size()) + " SM queues, interleave seed " +
               std::to_string(a.interleaveSeed) + ")";
      const auto t0 = Clock::now();
      if (a.randomWeights) stepper.interpreter().randomWeights(*a.randomWeights);
      else stepper.interpreter().loadWeights(*checkpoint);
      loadS = std::chrono::duration<double>(Clock::now() - t0).count();
      result = mk::runtime::decode(stepper, a.tokens, options);
    }
    if (!a.dumpLogits.empty())
      mk::runtime::writeNpy(a.dumpLogits, result.steps, static_cast<int64_t>(result.vocab), result.logits);
    if (a.maxNew > 0) {
      std::string ids;
      for (int64_t t : result.generated) ids += (ids.empty() ? "" : ",") + std::to_string(t);
      std::printf("%s\n", ids.c_str());
      std::fflush(stdout);
    }
    std::fprintf(stderr, "mkdsl: %s; weights loaded in %.2f s\n", device.c_str(), loadS);
    for (const std::string& line : mk::runtime::decodeReport(result)) std::fprintf(stderr, "mkdsl: %s\n", line.c_str());
    for (const std::string& line : traceLines) std::fprintf(stderr, "mkdsl: %s\n", line.c_str());
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  printDiagnostics(sm, diags, a);
  return diags.hasErrors() ? 1 : 0;
}

int runVerify(const Args& a) {
  mk::SourceManager sm;
  mk::DiagnosticEngine diags(sm);
  diags.setErrorLimit(a.maxErrors);
  for (const auto& path : a.files) {
    auto id = mk::loadFile(sm, diags, path);
    if (!id) continue;
    auto kernel = mk::ir::parseSchedule(sm.file(*id).text(), diags, *id);
    if (kernel && mk::ir::verify(*kernel, diags))
      std::printf("%s: verified: %zu tasks, %zu counters, %zu SMs\n", path.c_str(), kernel->tasks.size(),
                  kernel->counters.size(), kernel->queues.size());
  }
  printDiagnostics(sm, diags, a);
  return diags.hasErrors() ? 1 : 0;
}

int runFmt(const Args& a) {
  mk::SourceManager sm;
  mk::DiagnosticEngine diags(sm);
  bool unformatted = false;
  for (const auto& path : a.files) {
    auto id = mk::loadFile(sm, diags, path);
    if (!id) continue;
    unsigned before = diags.errorCount();
    mk::parseFile(*id, sm, diags);
    if (diags.errorCount() != before) continue;  // never reformat a file that does not parse
    const std::string& text = sm.file(*id).text();
    std::string formatted = mk::formatSource(text);
    if (a.fmtStdout) {
      std::fputs(formatted.c_str(), stdout);
    } else if (formatted != text) {
      if (a.fmtCheck) {
        std::printf("%s: not formatted\n", path.c_str());
        unformatted = true;
      } else {
        // In place rather than through OutputFile: a rewrite keeps the file's mode and links.
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << formatted;
        if (!out.flush()) diags.emit(mk::SourceRange{}, CannotWrite, path, std::strerror(errno));
      }
    }
  }
  Args textArgs = a;
  textArgs.json = false;
  printDiagnostics(sm, diags, textArgs);
  return diags.hasErrors() || unformatted ? 1 : 0;
}

// `mkdsl lsp`: the language server on stdin/stdout until the client says exit (lsp/server.h).
int runLsp(const Args& a) {
  mk::lsp::ServerOptions options;
  options.includeDirs = a.compile.check.includeDirs;
  options.stdlibDir = a.compile.check.stdlibDir;
  options.version = MKDSL_VERSION;
  std::signal(SIGPIPE, SIG_IGN);  // a client gone away ends the loop through the failed write
  mk::lsp::FdInBuf input(STDIN_FILENO);
  std::istream in(&input);
  return mk::lsp::runServer(in, std::cout, options);
}

int mainImpl(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(usage().c_str(), stderr);
    return 1;
  }
  std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::fputs(usage().c_str(), stdout);
    return 0;
  }
  if (cmd == "--version") {
    std::printf("mkdsl %s\n", MKDSL_VERSION);
    return 0;
  }
  if (cmd != "check" && cmd != "fmt" && cmd != "build" && cmd != "run" && cmd != "verify" && cmd != "lsp")
    return usageError("unknown command '" + cmd + "'");
  for (int i = 2; i < argc; ++i)
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(usage().c_str(), stdout);
      return 0;
    }
  Args a;
  a.cmd = cmd;
  if (auto err = parseArgs(cmd, argc, argv, 2, a)) return usageError(*err);
  if (cmd == "build") return runBuild(a);
  if (cmd == "run") return runRun(a);
  if (cmd == "verify") return runVerify(a);
  if (cmd == "lsp") return runLsp(a);
  return cmd == "check" ? runCheck(a) : runFmt(a);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return mainImpl(argc, argv);
  } catch (const std::exception& e) {
    // Reaching this is a compiler bug; say so plainly instead of aborting.
    std::fprintf(stderr, "mkdsl: internal error: %s\n", e.what());
    return 2;
  }
}
