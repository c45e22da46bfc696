#include "compiler/ptxas.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

extern char** environ;

namespace mk::ptxas {
namespace {

bool isExecutable(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// Removes the temporary folder and what run() put in it, however run() returns.
struct TempDir {
  std::string path;
  std::vector<std::string> files;
  ~TempDir() {
    if (path.empty()) return;
    for (const auto& f : files) unlink(f.c_str());
    rmdir(path.c_str());
  }
};

bool writeFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
  return static_cast<bool>(out.flush());
}

std::optional<std::string> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The integer before `what` in `text` ("624 bytes stack frame" -> 624), or nullopt.
std::optional<int64_t> numberBefore(const std::string& text, const std::string& what) {
  size_t at = text.find(what);
  if (at == std::string::npos) return std::nullopt;
  size_t end = at;
  while (end > 0 && text[end - 1] == ' ') --end;
  size_t begin = end;
  while (begin > 0 && text[begin - 1] >= '0' && text[begin - 1] <= '9') --begin;
  if (begin == end || end - begin > 15) return std::nullopt;
  return std::stoll(text.substr(begin, end - begin));
}

// The text between the first pair of single quotes after `prefix`.
std::optional<std::string> quotedAfter(const std::string& line, const std::string& prefix) {
  size_t at = line.find(prefix);
  if (at == std::string::npos) return std::nullopt;
  size_t open = line.find('\'', at + prefix.size());
  if (open == std::string::npos) return std::nullopt;
  size_t close = line.find('\'', open + 1);
  if (close == std::string::npos) return std::nullopt;
  return line.substr(open + 1, close - open - 1);
}

}  // namespace

std::optional<std::string> find(std::string* why) {
  if (const char* env = std::getenv("MKDSL_PTXAS"); env && *env) {
    // An explicit choice is never second-guessed by a search: a typo should fail, not fall back.
    if (isExecutable(env)) return std::string(env);
    if (why) *why = "$MKDSL_PTXAS is '" + std::string(env) + "', which is not an executable file";
    return std::nullopt;
  }
  if (const char* path = std::getenv("PATH")) {
    std::string dirs = path;
    size_t at = 0;
    while (at <= dirs.size()) {
      size_t colon = dirs.find(':', at);
      std::string dir = dirs.substr(at, colon == std::string::npos ? std::string::npos : colon - at);
      std::string candidate = (dir.empty() ? "." : dir) + "/ptxas";
      if (isExecutable(candidate)) return candidate;
      if (colon == std::string::npos) break;
      at = colon + 1;
    }
  }
  const std::string fallback = "/usr/local/cuda/bin/ptxas";
  if (isExecutable(fallback)) return fallback;
  if (why) *why = "no ptxas on PATH or at " + fallback + " (install the CUDA toolkit, or set $MKDSL_PTXAS to its path)";
  return std::nullopt;
}

Result run(const std::string& ptxasPath, const std::string& ptx, const Options& options) {
  Result r;
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/mkdsl-ptxas-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  TempDir dir;
  if (!mkdtemp(buf.data())) {
    r.error = "cannot create a temporary folder from " + pattern + ": " + std::strerror(errno);
    return r;
  }
  dir.path = buf.data();
  std::string input = dir.path + "/kernel.ptx", output = dir.path + "/kernel.cubin";
  dir.files = {input, output};
  if (!writeFile(input, ptx)) {
    r.error = "cannot write " + input;
    return r;
  }

  std::vector<std::string> args = {ptxasPath, "-arch=" + options.arch};
  if (options.verbose) args.push_back("-v");
  args.insert(args.end(), {input, "-o", output});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  pid_t pid = 0;
  int err = posix_spawn(&pid, ptxasPath.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (err != 0) {
    close(fds[0]);
    r.error = "cannot run " + ptxasPath + ": " + std::strerror(err);
    return r;
  }
  char chunk[4096];
  for (;;) {
    ssize_t n = read(fds[0], chunk, sizeof chunk);
    if (n > 0) r.log.append(chunk, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR) break;
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // ptxas ends its fatal messages without a newline.
  if (!r.log.empty() && r.log.back() != '\n') r.log += '\n';

  if (WIFSIGNALED(status)) {
    r.error = ptxasPath + " was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
              strsignal(WTERMSIG(status)) + ")\n" + r.log;
    return r;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    r.error = ptxasPath + " exited with status " + std::to_string(WEXITSTATUS(status)) + "\n" + r.log;
    return r;
  }
  if (options.keepCubin) {
    auto cubin = readFile(output);
    if (!cubin) {
      r.error = ptxasPath + " succeeded but wrote no cubin\n" + r.log;
      return r;
    }
    r.cubin = std::move(*cubin);
  }
  if (options.verbose) r.functions = parseVerbose(r.log);
  r.ok = true;
  return r;
}

std::vector<FunctionStats> parseVerbose(const std::string& log) {
  // The report, per function (CUDA 12 and 13):
  //   ptxas info    : Compiling entry function 'k' for 'sm_90a'      (entries only)
  //   ptxas info    : Function properties for k
  //       128 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  //   ptxas info    : Used 40 registers, used 1 barriers, ..., 1024 bytes smem   (entries only)
  // Device functions get only the properties, after the entries that call them.
  std::vector<FunctionStats> functions;
  auto get = [&](const std::string& name) -> FunctionStats& {
    for (auto& f : functions)
      if (f.name == name) return f;
    functions.push_back({});
    functions.back().name = name;
    return functions.back();
  };
  int current = -1;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (auto name = quotedAfter(line, "Compiling entry function")) {
      get(*name).entry = true;
      current = static_cast<int>(&get(*name) - functions.data());
      continue;
    }
    if (size_t at = line.find("Function properties for "); at != std::string::npos) {
      std::string name = line.substr(at + std::strlen("Function properties for "));
      while (!name.empty() && (name.back() == ' ' || name.back() == '\r')) name.pop_back();
      current = static_cast<int>(&get(name) - functions.data());
      continue;
    }
    if (current < 0) continue;
    FunctionStats& f = functions[current];
    if (line.find("bytes stack frame") != std::string::npos) {
      f.stackFrameBytes = numberBefore(line, "bytes stack frame").value_or(0);
      f.spillStores = numberBefore(line, "bytes spill stores").value_or(0);
      f.spillLoads = numberBefore(line, "bytes spill loads").value_or(0);
    } else if (line.find("Used ") != std::string::npos && line.find(" registers") != std::string::npos) {
      f.registers = static_cast<int>(numberBefore(line, " registers").value_or(0));
      f.sharedBytes = numberBefore(line, "bytes smem").value_or(0);
    }
  }
  return functions;
}

std::string summary(const FunctionStats& f) {
  std::string s = f.name + ": ";
  if (f.entry) s += std::to_string(f.registers) + " registers, ";
  return s + std::to_string(f.sharedBytes) + " bytes shared, " + std::to_string(f.spillStores) +
         " bytes spill stores, " + std::to_string(f.spillLoads) + " bytes spill loads, " +
         std::to_string(f.stackFrameBytes) + " bytes stack frame";
}

}  // namespace mk::ptxas
