// golden_runner: runs the mkdsl driver over test files and compares what it prints with what the
// files expect. No Python on the test path: this is the whole harness.
//
// Diagnostics mode (negative goldens):
//   golden_runner --mkdsl PATH --dir tests/diagnostics --stdlib STDLIB [--update]
// For each `*.mk` directly in DIR (sorted by name) it copies the program part of the file (the
// text before its CHECK block) into a scratch folder beside a `modules` link to <DIR>/modules, and
// runs `mkdsl check -I modules --stdlib STDLIB NAME` there, so paths in the output are relative
// (`unknown_name.mk:3:5`, `modules/x.mk:1:1`) and the expectations never feed back into the run
// (an unterminated comment would otherwise swallow them). The STDLIB path is printed as
// `<stdlib>` so the goldens do not depend on the checkout. It captures stdout+stderr (one pipe)
// and the exit code. `*.sched` files (schedules in text form) are tested the same way.
//
// A first line `// RUN: ARGS` replaces the default command `check`: mkdsl runs with ARGS (the
// first being the subcommand; `check`, `build` and `run` also get `-I modules --stdlib STDLIB`)
// and then the file's name, unless ARGS mention `%s` (which stands for it) or `%root`. `%root` stands for
// the repository (the parent of STDLIB) and is printed back as `<root>`, so a golden can run on
// a shipped example: `// RUN: build --emit=graph %root/examples/llama_tiny.mk`. The expectation is a block of comment lines
// at the END of the file:
//   // CHECK:EXIT: 1
//   // CHECK: unknown_name.mk:3:5: error: unknown name 'x' [E0201]
//   // CHECK:     3 | const y = x;
//   // CHECK:       |           ^
//   // CHECK:
// one `// CHECK:` line per output line (exact; one space after the colon is dropped; an empty
// output line is `// CHECK:` with nothing after). Because they are `//` comments the compiler
// ignores them and the program's line numbers do not move. With --update the block is rewritten
// from the actual output; the program text before it stays byte-identical, and running --update
// twice changes nothing the second time.
//
// Positive modes (each file must succeed):
//   golden_runner --mkdsl PATH --fmt-roundtrip FILES...   `mkdsl fmt --check FILE` exits 0
//   golden_runner --mkdsl PATH --check-ok FILES...        `mkdsl check FILE` exits 0
//   golden_runner --mkdsl PATH --smoke                    `mkdsl --help`, `mkdsl --version` exit 0
//
// Every mode ends with `N passed, N failed` and exits 1 when anything failed.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

constexpr const char* kCheckPrefix = "// CHECK:";
constexpr const char* kExitPrefix = "// CHECK:EXIT:";
// A hang guard for one mkdsl run, far past its time on a loaded machine under sanitizers; not a
// speed limit.
constexpr int kTimeoutSeconds = 300;

struct RunResult {
  std::string output;  // stdout and stderr, interleaved as written
  int exitCode = -1;   // valid when !signaled
  bool signaled = false;
  int signal = 0;
  bool timedOut = false;
  bool spawnFailed = false;

  std::string describeExit() const {
    if (spawnFailed) return "could not be started";
    if (timedOut) return "timed out after " + std::to_string(kTimeoutSeconds) + "s";
    if (signaled) return std::string("killed by signal ") + std::to_string(signal) + " (" + strsignal(signal) + ")";
    return "exit code " + std::to_string(exitCode);
  }
};

// Runs argv[0] with `argv` in `cwd` (empty: inherit), stdin from /dev/null, stdout and stderr into
// one pipe. Kills the child after kTimeoutSeconds.
RunResult run(const std::vector<std::string>& argv, const std::string& cwd) {
  RunResult r;
  int fds[2];
  if (pipe(fds) != 0) {
    r.spawnFailed = true;
    r.output = std::string("pipe: ") + std::strerror(errno) + "\n";
    return r;
  }
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    r.spawnFailed = true;
    r.output = std::string("fork: ") + std::strerror(errno) + "\n";
    close(fds[0]);
    close(fds[1]);
    return r;
  }
  if (pid == 0) {
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[0]);
    close(fds[1]);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) {
      dprintf(2, "golden_runner: cannot chdir to %s: %s\n", cwd.c_str(), std::strerror(errno));
      _exit(127);
    }
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    dprintf(2, "golden_runner: cannot run %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  close(fds[1]);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kTimeoutSeconds);
  char buf[65536];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      r.timedOut = true;
      kill(pid, SIGKILL);
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int n = poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    ssize_t got = read(fds[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    r.output.append(buf, static_cast<size_t>(got));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (r.timedOut) return r;
  if (WIFSIGNALED(status)) {
    r.signaled = true;
    r.signal = WTERMSIG(status);
  } else {
    r.exitCode = WEXITSTATUS(status);
  }
  return r;
}

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

std::optional<std::string> readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool writeFile(const fs::path& path, const std::string& text) {
  fs::path tmp = path;
  tmp += ".golden-tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    out << text;
    if (!out.flush()) return false;
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  return !ec;
}

bool startsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// A golden file split into the program and its trailing CHECK block.
struct GoldenFile {
  std::string program;                 // every byte before the block
  bool hasBlock = false;
  std::optional<int> expectedExit;     // from `// CHECK:EXIT: N`
  std::vector<std::string> expected;   // one per `// CHECK:` line
  std::vector<std::string> problems;   // malformed block lines
};

// The block is the longest run of lines at the end of the file that start with `// CHECK:`
// (a final newline after the last one is part of the block).
GoldenFile splitGolden(const std::string& text) {
  GoldenFile g;
  // Line start offsets.
  std::vector<size_t> starts;
  for (size_t i = 0; i < text.size();) {
    starts.push_back(i);
    size_t nl = text.find('\n', i);
    if (nl == std::string::npos) break;
    i = nl + 1;
  }
  size_t first = starts.size();
  while (first > 0) {
    size_t b = starts[first - 1];
    size_t e = text.find('\n', b);
    std::string line = text.substr(b, e == std::string::npos ? std::string::npos : e - b);
    if (!startsWith(line, kCheckPrefix)) break;
    --first;
  }
  if (first == starts.size()) {
    g.program = text;
    return g;
  }
  g.hasBlock = true;
  g.program = text.substr(0, starts[first]);
  for (const std::string& line : splitLines(text.substr(starts[first]))) {
    if (startsWith(line, kExitPrefix)) {
      std::string v = line.substr(std::strlen(kExitPrefix));
      v.erase(0, v.find_first_not_of(" \t"));
      v.erase(v.find_last_not_of(" \t\r") + 1);
      char* end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0') g.problems.push_back("bad exit line: " + line);
      else if (g.expectedExit) g.problems.push_back("more than one CHECK:EXIT line");
      else g.expectedExit = static_cast<int>(n);
      continue;
    }
    std::string rest = line.substr(std::strlen(kCheckPrefix));
    if (!rest.empty() && rest[0] == ' ') rest.erase(0, 1);
    g.expected.push_back(rest);
  }
  if (!g.expectedExit) g.problems.push_back("no `// CHECK:EXIT: N` line");
  return g;
}

std::string renderBlock(int exitCode, const std::vector<std::string>& lines) {
  std::string out = std::string(kExitPrefix) + " " + std::to_string(exitCode) + "\n";
  for (const std::string& l : lines) {
    out += kCheckPrefix;
    if (!l.empty()) out += " " + l;
    out += "\n";
  }
  return out;
}

// A line diff (longest common subsequence; outputs are small): ' ' same, '-' expected only,
// '+' actual only.
void printDiff(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  size_t n = a.size(), m = b.size();
  std::vector<std::vector<unsigned>> lcs(n + 1, std::vector<unsigned>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::cout << "  --- expected\n  +++ actual\n";
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      std::cout << "   " << a[i] << "\n";
      ++i, ++j;
    } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      std::cout << "  -" << a[i] << "\n";
      ++i;
    } else {
      std::cout << "  +" << b[j] << "\n";
      ++j;
    }
  }
}

struct Tally {
  int passed = 0;
  int failed = 0;
  int finish() const {
    std::cout << passed << " passed, " << failed << " failed\n";
    return failed ? 1 : 0;
  }
};

// `text` with every occurrence of `from` replaced by `to`.
std::string replaceAll(std::string text, const std::string& from, const std::string& to) {
  if (from.empty()) return text;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

int runDiagnostics(const std::string& mkdsl, const fs::path& dirArg, const std::string& stdlib, bool update) {
  Tally t;
  std::error_code ec;
  fs::path dir = fs::absolute(dirArg, ec);
  if (ec || !fs::is_directory(dir)) {
    std::cout << "golden_runner: not a directory: " << dirArg << "\n";
    t.failed = 1;
    return t.finish();
  }
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && (e.path().extension() == ".mk" || e.path().extension() == ".sched"))
      files.push_back(e.path());
  std::sort(files.begin(), files.end(), [](const fs::path& a, const fs::path& b) {
    return a.filename().string() < b.filename().string();
  });
  char scratchTemplate[] = "/tmp/mk_golden_XXXXXX";
  if (!mkdtemp(scratchTemplate)) {
    std::cout << "golden_runner: cannot create a scratch folder\n";
    t.failed = 1;
    return t.finish();
  }
  const fs::path scratch = scratchTemplate;
  fs::create_directory_symlink(dir / "modules", scratch / "modules", ec);
  struct Cleanup {
    fs::path p;
    ~Cleanup() {
      std::error_code e;
      fs::remove_all(p, e);
    }
  } cleanup{scratch};

  for (const fs::path& file : files) {
    const std::string name = file.filename().string();
    std::optional<std::string> text = readFile(file);
    if (!text) {
      std::cout << "FAIL " << name << ": cannot read\n";
      ++t.failed;
      continue;
    }
    GoldenFile g = splitGolden(*text);
    if (!writeFile(scratch / name, g.program)) {
      std::cout << "FAIL " << name << ": cannot write its scratch copy\n";
      ++t.failed;
      continue;
    }
    const std::string root = fs::path(stdlib).parent_path().string();
    std::vector<std::string> args = {mkdsl};
    std::vector<std::string> runArgs = {"check"};
    bool namesFile = false;
    if (g.program.rfind("// RUN:", 0) == 0) {
      runArgs.clear();
      std::istringstream line(g.program.substr(7, g.program.find('\n') - 7));
      for (std::string word; line >> word;) {
        // A command that names its input (`%s`, or a file under `%root`) gets no file appended.
        namesFile = namesFile || word.find("%s") != std::string::npos || word.find("%root") != std::string::npos;
        runArgs.push_back(replaceAll(replaceAll(word, "%root", root), "%s", name));
      }
    }
    for (size_t k = 0; k < runArgs.size(); ++k) {
      args.push_back(runArgs[k]);
      if (k == 0 && (runArgs[0] == "check" || runArgs[0] == "build" || runArgs[0] == "run"))
        args.insert(args.end(), {"-I", "modules", "--stdlib", stdlib});
    }
    if (!namesFile) args.push_back(name);
    RunResult r = run(args, scratch.string());
    fs::remove(scratch / name, ec);
    std::vector<std::string> actual = splitLines(replaceAll(replaceAll(r.output, stdlib, "<stdlib>"), root, "<root>"));
    bool normalExit = !r.spawnFailed && !r.timedOut && !r.signaled;

    if (update) {
      if (!normalExit) {
        std::cout << "FAIL " << name << ": mkdsl " << r.describeExit() << "; not recording it\n";
        for (const std::string& l : actual) std::cout << "  | " << l << "\n";
        ++t.failed;
        continue;
      }
      std::string program = g.program;
      // A file without a block gets a newline (if missing) and a blank line before its new block;
      // both then belong to the program, so a second --update finds the same program.
      if (!g.hasBlock && !program.empty()) {
        if (program.back() != '\n') program += '\n';
        program += '\n';
      }
      std::string updated = program + renderBlock(r.exitCode, actual);
      if (updated != *text) {
        if (!writeFile(file, updated)) {
          std::cout << "FAIL " << name << ": cannot write\n";
          ++t.failed;
          continue;
        }
        std::cout << "UPDATED " << name << "\n";
      } else {
        std::cout << "ok " << name << "\n";
      }
      ++t.passed;
      continue;
    }

    if (!g.hasBlock) {
      std::cout << "FAIL " << name << ": no trailing `// CHECK:` block (run golden_runner with --update)\n";
      ++t.failed;
      continue;
    }
    if (!g.problems.empty()) {
      std::cout << "FAIL " << name << ": malformed CHECK block:\n";
      for (const std::string& p : g.problems) std::cout << "  " << p << "\n";
      ++t.failed;
      continue;
    }
    bool exitOk = normalExit && r.exitCode == *g.expectedExit;
    bool outOk = actual == g.expected;
    if (exitOk && outOk) {
      std::cout << "ok " << name << "\n";
      ++t.passed;
      continue;
    }
    std::cout << "FAIL " << name << " (" << (dir / name).string() << ")\n";
    if (!exitOk)
      std::cout << "  expected exit code " << *g.expectedExit << ", got " << r.describeExit() << "\n";
    if (!outOk) printDiff(g.expected, actual);
    ++t.failed;
  }
  if (files.empty()) {
    std::cout << "FAIL: no .mk files in " << dir.string() << "\n";
    ++t.failed;
  }
  return t.finish();
}

// Runs `mkdsl <args...> FILE` for each file; each must exit 0.
int runExpectSuccess(const std::string& mkdsl, const std::vector<std::string>& args,
                     const std::vector<std::string>& files, const char* failureNote) {
  Tally t;
  std::vector<std::string> bad;
  for (const std::string& f : files) {
    std::vector<std::string> argv{mkdsl};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back(f);
    RunResult r = run(argv, "");
    if (!r.spawnFailed && !r.timedOut && !r.signaled && r.exitCode == 0) {
      std::cout << "ok " << f << "\n";
      ++t.passed;
      continue;
    }
    std::cout << "FAIL " << f << ": " << r.describeExit() << "\n";
    for (const std::string& l : splitLines(r.output)) std::cout << "  | " << l << "\n";
    bad.push_back(f);
    ++t.failed;
  }
  if (!bad.empty()) {
    std::cout << failureNote << "\n";
    for (const std::string& f : bad) std::cout << "  " << f << "\n";
  }
  return t.finish();
}

int runSmoke(const std::string& mkdsl) {
  Tally t;
  for (const char* flag : {"--help", "--version"}) {
    RunResult r = run({mkdsl, flag}, "");
    bool ok = !r.spawnFailed && !r.timedOut && !r.signaled && r.exitCode == 0 &&
              r.output.find_first_not_of(" \t\r\n") != std::string::npos;
    if (ok) {
      std::cout << "ok mkdsl " << flag << "\n";
      ++t.passed;
    } else {
      std::cout << "FAIL mkdsl " << flag << ": " << r.describeExit()
                << (r.output.empty() ? ", printed nothing" : "") << "\n";
      for (const std::string& l : splitLines(r.output)) std::cout << "  | " << l << "\n";
      ++t.failed;
    }
  }
  return t.finish();
}

int usage() {
  std::cerr << "usage: golden_runner --mkdsl PATH --dir DIR --stdlib DIR [--update]\n"
               "       golden_runner --mkdsl PATH --fmt-roundtrip FILES...\n"
               "       golden_runner --mkdsl PATH --check-ok FILES...\n"
               "       golden_runner --mkdsl PATH --smoke\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(true);
  std::string mkdsl, dir, mode, stdlib;
  bool update = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--mkdsl" && i + 1 < argc) mkdsl = argv[++i];
    else if (a == "--dir" && i + 1 < argc) { dir = argv[++i]; mode = "dir"; }
    else if (a == "--update") update = true;
    else if (a == "--stdlib" && i + 1 < argc) stdlib = argv[++i];
    else if (a == "--fmt-roundtrip" || a == "--check-ok" || a == "--smoke") mode = a;
    else if (!a.empty() && a[0] == '-' && a != "-") return usage();
    else files.push_back(a);
  }
  if (mkdsl.empty() || mode.empty()) return usage();
  std::error_code ec;
  mkdsl = fs::absolute(mkdsl, ec).string();  // the diagnostics mode runs it from another directory
  if (mode == "dir") {
    if (!files.empty() || stdlib.empty()) return usage();
    stdlib = fs::absolute(stdlib, ec).lexically_normal().string();
    if (!stdlib.empty() && stdlib.back() == '/') stdlib.pop_back();
    return runDiagnostics(mkdsl, dir, stdlib, update);
  }
  if (mode == "--fmt-roundtrip")
    return runExpectSuccess(mkdsl, {"fmt", "--check"}, files,
                            "not canonically formatted (or fmt failed); run `mkdsl fmt` on:");
  if (mode == "--check-ok")
    return runExpectSuccess(mkdsl, {"check"}, files, "`mkdsl check` failed on:");
  if (mode == "--smoke") return runSmoke(mkdsl);
  return usage();
}
