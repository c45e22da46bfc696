// The mkdsl driver: a thin command-line client of the compiler libraries.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "frontend/format.h"
#include "frontend/parse.h"
#include "frontend/sema.h"
#include "interp/interp.h"
#include "ir/html.h"
#include "ir/parse_ir.h"
#include "ir/print.h"
#include "ir/verify.h"
#include "lowering/graph.h"
#include "lowering/schedule.h"
#include "runtime/npy.h"
#include "runtime/safetensors.h"

#ifndef MKDSL_VERSION
#define MKDSL_VERSION "0.0.0"
#endif

namespace {

constexpr const char* kUsage = R"(mkdsl: compile .mk model descriptions into one GPU megakernel

Usage:
  mkdsl check [options] FILE...     parse and check programs; report every error found
  mkdsl build [options] FILE        compile a program's step into the megakernel IR
  mkdsl run [options] FILE          decode with the compiled step (--device cpu: the interpreter)
  mkdsl verify FILE.sched           check a schedule in text form (--emit=schedule) for races,
                                    missing waits and deadlocks
  mkdsl fmt [--check] FILE...       rewrite files in the canonical format
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
  --gpu NAME                        target description: h200 (default), h100, a100, mi300x
  --sms N, --smem BYTES, --warp N   override the target's SM count, shared memory per block,
                                    warp (wave) size
  --emit=graph|tasks|schedule       print a stage: the op graph, the tasks with their regions, or
                                    the verified schedule (counters and per-SM queues)
  --format=text|json|html           for --emit=schedule: JSON for tools, HTML for a browser
  -o FILE                           write the output to FILE instead of standard output

Options for run:
  --device cpu                      run on the CPU interpreter of the megakernel IR
  --weights PATH                    a .safetensors file, or a folder of shards with an index
  --random-weights SEED             deterministic random weights instead
  --tokens 1,2,3                    the prompt; each token is one decode step
  --max-new N                       greedy tokens to generate after the prompt (default 16);
                                    0 feeds the given tokens only (teacher forcing)
  --interleave-seed N               the seed of the interpreter's random SM interleaving (default 1)
  --dump-logits FILE.npy            every step's logits as float32 [steps, vocab]

Options for fmt:
  --check                           change nothing; exit 1 and name the files that are not formatted
  --stdout                          print the formatted text instead of rewriting the file

Exit status: 0 on success, 1 when the input has errors or the command line is wrong.
)";

struct Args {
  std::string cmd;
  std::vector<std::string> files;
  std::string gpu = "h200";
  std::optional<int64_t> sms, smem, warp;
  std::string emit;
  std::string format = "text";
  std::string output;
  std::string device;
  std::string weights;
  std::optional<uint64_t> randomWeights;
  std::vector<int64_t> tokens;
  int64_t maxNew = 16;
  uint64_t interleaveSeed = 1;
  std::string dumpLogits;
  mk::CheckOptions check;
  bool json = false;
  unsigned maxErrors = 20;
  enum class Color { Auto, Always, Never } color = Color::Auto;
  bool fmtCheck = false;
  bool fmtStdout = false;
};

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
      if (compiles && (arg == "-I" || (arg.rfind("-I", 0) == 0 && arg.size() > 2))) {
        if (arg.size() > 2) a.check.includeDirs.push_back(arg.substr(2));
        else if (i + 1 < argc) a.check.includeDirs.push_back(argv[++i]);
        else return "-I needs a directory";
      } else if (compiles && is(arg, "--config")) {
        if (!value(i, "--config", v) || v.empty()) return "--config needs a config name";
        a.check.configName = v;
      } else if (compiles && is(arg, "--set")) {
        if (!value(i, "--set", v) || v.find('=') == std::string::npos || v.find('=') == 0)
          return "--set needs NAME=VALUE, e.g. --set layers=1";
        a.check.overrides.push_back({v.substr(0, v.find('=')), v.substr(v.find('=') + 1)});
      } else if (compiles && is(arg, "--stdlib")) {
        if (!value(i, "--stdlib", v) || v.empty()) return "--stdlib needs a directory";
        a.check.stdlibDir = v;
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
        a.gpu = v;
      } else if ((cmd == "build" || cmd == "run") && (is(arg, "--sms") || is(arg, "--smem") || is(arg, "--warp"))) {
        std::string flag = arg.substr(0, arg.find('='));
        if (!value(i, flag, v) || !number(v, n) || n <= 0 || n > (1 << 30)) return flag + " needs a positive number";
        (flag == "--sms" ? a.sms : flag == "--smem" ? a.smem : a.warp) = n;
      } else if (cmd == "build" && is(arg, "--emit")) {
        if (!value(i, "--emit", v) || (v != "graph" && v != "tasks" && v != "schedule"))
          return "--emit must be graph, tasks or schedule";
        a.emit = v;
      } else if (cmd == "build" && is(arg, "--format")) {
        if (!value(i, "--format", v) || (v != "text" && v != "json" && v != "html"))
          return "--format must be text, json or html";
        a.format = v;
      } else if (cmd == "build" && (arg == "-o" || is(arg, "--output"))) {
        if (arg == "-o" ? !(i + 1 < argc && (v = argv[++i], true)) : !value(i, "--output", v)) return "-o needs a file";
        a.output = v;
      } else if (cmd == "run" && is(arg, "--device")) {
        if (!value(i, "--device", v) || v != "cpu") return "--device must be cpu (the GPU runtime is not built yet)";
        a.device = v;
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
  if (a.files.empty()) return "`mkdsl " + cmd + "` needs at least one file";
  if ((cmd == "build" || cmd == "run") && a.files.size() != 1) return "`mkdsl " + cmd + "` takes one program";
  if (cmd == "run") {
    if (a.device.empty()) return "`mkdsl run` needs --device cpu";
    if (a.weights.empty() == !a.randomWeights) return "`mkdsl run` needs exactly one of --weights PATH and --random-weights SEED";
    if (a.tokens.empty()) return "`mkdsl run` needs --tokens";
  }
  if (cmd == "build" && a.format != "text" && a.emit != "schedule") return "--format json or html goes with --emit=schedule";
  return std::nullopt;
}

MK_DIAGNOSTIC(CannotRead, Error, "cannot read '{0}': {1}", std::string, std::string);
MK_DIAGNOSTIC(CannotWrite, Error, "cannot write '{0}'", std::string);

std::string readError(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return std::strerror(errno);
  std::fclose(f);
  return "not a regular file";
}

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
  mk::CheckOptions options = a.check;
  options.allConfigs = true;
  for (const auto& path : a.files) {
    auto id = sm.load(path);
    if (!id) {
      diags.emit(mk::SourceRange{}, CannotRead, path, readError(path));
      continue;
    }
    mk::checkProgram(sm, diags, *id, options);
  }
  printDiagnostics(sm, diags, a);
  return diags.hasErrors() ? 1 : 0;
}

MK_DIAGNOSTIC(NoCodegen, Error, "code generation is not available yet; use --emit=graph, --emit=tasks or --emit=schedule");
MK_DIAGNOSTIC(RunFailed, Error, "{0}", std::string);

// Check and elaborate: the graph of the program's step, or nothing with diagnostics.
std::optional<mk::ir::Graph> buildGraph(mk::SourceManager& sm, mk::DiagnosticEngine& diags, const Args& a) {
  auto id = sm.load(a.files[0]);
  if (!id) {
    diags.emit(mk::SourceRange{}, CannotRead, a.files[0], readError(a.files[0]));
    return std::nullopt;
  }
  return mk::lowering::buildGraph(sm, diags, *id, a.check);
}

// Then schedule and verify: the megakernel, or nothing with diagnostics.
std::optional<mk::ir::Megakernel> compile(mk::SourceManager& sm, mk::DiagnosticEngine& diags, const Args& a) {
  auto graph = buildGraph(sm, diags, a);
  if (!graph) return std::nullopt;
  mk::ir::TargetDesc target = *mk::ir::findTarget(a.gpu);
  if (a.sms) target.sms = static_cast<int>(*a.sms);
  if (a.smem) target.smemPerBlock = static_cast<int>(*a.smem);
  if (a.warp) target.warpSize = static_cast<int>(*a.warp);
  mk::ir::Megakernel kernel = mk::lowering::schedule(std::move(*graph), target);
  if (!mk::ir::verify(kernel, diags)) return std::nullopt;
  return kernel;
}

bool writeOutput(const Args& a, const std::string& text, mk::DiagnosticEngine& diags) {
  if (a.output.empty()) {
    std::fputs(text.c_str(), stdout);
    return true;
  }
  std::ofstream out(a.output, std::ios::binary | std::ios::trunc);
  out << text;
  if (out.flush()) return true;
  diags.emit(mk::SourceRange{}, CannotWrite, a.output);
  return false;
}

int runBuild(const Args& a) {
  mk::SourceManager sm;
  mk::DiagnosticEngine diags(sm);
  diags.setErrorLimit(a.maxErrors);
  if (a.emit.empty()) {
    diags.emit(mk::SourceRange{}, NoCodegen);
  } else if (a.emit == "graph") {
    if (auto graph = buildGraph(sm, diags, a)) writeOutput(a, mk::ir::printGraph(*graph), diags);
  } else if (auto kernel = compile(sm, diags, a)) {
    std::string text = a.emit == "tasks"       ? mk::ir::printTasks(*kernel)
                       : a.format == "json"    ? mk::ir::scheduleJson(*kernel)
                       : a.format == "html"    ? mk::ir::scheduleHtml(*kernel)
                                               : mk::ir::printSchedule(*kernel);
    writeOutput(a, text, diags);
  }
  printDiagnostics(sm, diags, a);
  return diags.hasErrors() ? 1 : 0;
}

// Greedy decoding on the CPU interpreter: the prompt one token per step, then each generated
// token fed back. The step's inputs named `token` and `pos` receive them.
int runRun(const Args& a) {
  mk::SourceManager sm;
  mk::DiagnosticEngine diags(sm);
  diags.setErrorLimit(a.maxErrors);
  auto kernel = compile(sm, diags, a);
  auto fail = [&](const std::string& msg) {
    diags.emit(mk::SourceRange{}, RunFailed, msg);
    printDiagnostics(sm, diags, a);
    return 1;
  };
  if (!kernel) {
    printDiagnostics(sm, diags, a);
    return 1;
  }
  const mk::ir::Graph& g = kernel->graph;
  int tokenInput = -1, posInput = -1;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    if (g.inputs[i].name == "token") tokenInput = static_cast<int>(i);
    if (g.inputs[i].name == "pos") posInput = static_cast<int>(i);
  }
  if (tokenInput < 0 || posInput < 0 || g.inputs.size() != 2)
    return fail("`mkdsl run` feeds a step declared as `step NAME(token: i32, pos: i32)`");
  // The logits: the first f32 vector result; the next token: an i32 scalar result, else the argmax.
  int logitsOut = -1, nextOut = -1;
  for (const auto& [name, t] : g.outputs) {
    const mk::ir::Tensor& tensor = g.tensors[t];
    if (logitsOut < 0 && tensor.dtype == mk::DType::F32 && tensor.shape.size() == 1) logitsOut = t;
    if (nextOut < 0 && tensor.dtype == mk::DType::I32 && tensor.shape.empty()) nextOut = t;
  }
  if (logitsOut < 0) return fail("the step returns no f32 logits vector");
  int64_t vocab = g.tensors[logitsOut].shape[0];
  for (int64_t t : a.tokens)
    if (t >= vocab) return fail("token id " + std::to_string(t) + " is out of range: the vocabulary has " + std::to_string(vocab) + " entries");
  try {
    mk::interp::Interpreter interp(*kernel);
    if (a.randomWeights) interp.randomWeights(*a.randomWeights);
    else interp.loadWeights(mk::runtime::SafetensorsSet::open(a.weights));
    std::vector<float> logits;
    std::vector<int64_t> generated;
    int64_t steps = a.maxNew == 0 ? static_cast<int64_t>(a.tokens.size()) : static_cast<int64_t>(a.tokens.size()) + a.maxNew - 1;
    int64_t token = a.tokens[0];
    for (int64_t pos = 0; pos < steps; ++pos) {
      std::vector<int64_t> inputs(2);
      inputs[tokenInput] = token;
      inputs[posInput] = pos;
      interp.step(inputs, a.interleaveSeed + static_cast<uint64_t>(pos));
      std::vector<float> l = interp.tensor(logitsOut);
      logits.insert(logits.end(), l.begin(), l.end());
      int64_t next = nextOut >= 0 ? interp.tensorInts(nextOut)[0]
                                  : std::max_element(l.begin(), l.end()) - l.begin();
      if (pos + 1 < static_cast<int64_t>(a.tokens.size())) {
        token = a.tokens[pos + 1];
      } else {
        generated.push_back(next);
        token = next;
      }
    }
    if (!a.dumpLogits.empty()) mk::runtime::writeNpy(a.dumpLogits, steps, vocab, logits);
    std::string ids;
    for (int64_t t : generated) ids += (ids.empty() ? "" : ",") + std::to_string(t);
    if (a.maxNew > 0) std::printf("%s\n", ids.c_str());
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
    auto id = sm.load(path);
    if (!id) {
      diags.emit(mk::SourceRange{}, CannotRead, path, readError(path));
      continue;
    }
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
    auto id = sm.load(path);
    if (!id) {
      diags.emit(mk::SourceRange{}, CannotRead, path, readError(path));
      continue;
    }
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
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << formatted;
        if (!out.flush()) diags.emit(mk::SourceRange{}, CannotWrite, path);
      }
    }
  }
  Args textArgs = a;
  textArgs.json = false;
  printDiagnostics(sm, diags, textArgs);
  return diags.hasErrors() || unformatted ? 1 : 0;
}

int mainImpl(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 1;
  }
  std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (cmd == "--version") {
    std::printf("mkdsl %s\n", MKDSL_VERSION);
    return 0;
  }
  if (cmd != "check" && cmd != "fmt" && cmd != "build" && cmd != "run" && cmd != "verify")
    return usageError("unknown command '" + cmd + "'");
  for (int i = 2; i < argc; ++i)
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(kUsage, stdout);
      return 0;
    }
  Args a;
  a.cmd = cmd;
  if (auto err = parseArgs(cmd, argc, argv, 2, a)) return usageError(*err);
  if (cmd == "build") return runBuild(a);
  if (cmd == "run") return runRun(a);
  if (cmd == "verify") return runVerify(a);
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
