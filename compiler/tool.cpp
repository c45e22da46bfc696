#include "compiler/tool.h"

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

namespace mk::tool {
namespace {

bool isExecutable(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

std::string joined(const std::vector<std::string>& items, const std::string& last) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) s += (i == 0 ? "" : i + 1 == items.size() ? last : ", ") + items[i];
  return s;
}

}  // namespace

std::optional<std::string> find(const std::string& envVar, const std::vector<std::string>& names,
                                const std::vector<std::string>& fallbacks, const std::string& hint, std::string* why) {
  if (const char* env = std::getenv(envVar.c_str()); env && *env) {
    if (isExecutable(env)) return std::string(env);
    if (why) *why = "$" + envVar + " is '" + std::string(env) + "', which is not an executable file";
    return std::nullopt;
  }
  if (const char* path = std::getenv("PATH")) {
    for (const std::string& name : names) {
      std::string dirs = path;
      size_t at = 0;
      while (at <= dirs.size()) {
        size_t colon = dirs.find(':', at);
        std::string dir = dirs.substr(at, colon == std::string::npos ? std::string::npos : colon - at);
        std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
        if (isExecutable(candidate)) return candidate;
        if (colon == std::string::npos) break;
        at = colon + 1;
      }
    }
  }
  for (const std::string& f : fallbacks)
    if (isExecutable(f)) return f;
  if (why) *why = "no " + joined(names, " or ") + " on PATH or at " + joined(fallbacks, " or ") + " (" + hint + ")";
  return std::nullopt;
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  for (const auto& f : files_) unlink(f.c_str());
  rmdir(path_.c_str());
}

bool TempDir::create(const std::string& prefix, std::string& error) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) {
    error = "cannot create a temporary folder from " + pattern + ": " + std::strerror(errno);
    return false;
  }
  path_ = buf.data();
  return true;
}

std::string TempDir::file(const std::string& name) {
  files_.push_back(path_ + "/" + name);
  return files_.back();
}

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

bool run(const std::vector<std::string>& args, std::string& log, std::string& error) {
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string& program = args.at(0);

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  pid_t pid = 0;
  int err = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (err != 0) {
    close(fds[0]);
    error = "cannot run " + program + ": " + std::strerror(err);
    return false;
  }
  char chunk[4096];
  for (;;) {
    ssize_t n = read(fds[0], chunk, sizeof chunk);
    if (n > 0) log.append(chunk, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR) break;
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // Tools end their fatal messages without a newline (ptxas does).
  if (!log.empty() && log.back() != '\n') log += '\n';

  if (WIFSIGNALED(status)) {
    error = program + " was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) +
            ")\n" + log;
    return false;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    error = program + " exited with status " + std::to_string(WEXITSTATUS(status)) + "\n" + log;
    return false;
  }
  return true;
}

}  // namespace mk::tool
