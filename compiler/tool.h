// Running an external tool (ptxas, ld.lld): finding it, a private temporary folder for its
// files, and one run with its output captured.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace mk::tool {

// Where a tool is: $`envVar` when set and non-empty (then only there: a typo should fail, not
// fall back), else the first of `names` found on PATH, else the first executable `fallbacks`.
// nullopt when none is, with `why` (when given) saying where it looked and ending with `hint`.
std::optional<std::string> find(const std::string& envVar, const std::vector<std::string>& names,
                                const std::vector<std::string>& fallbacks, const std::string& hint,
                                std::string* why = nullptr);

// A private folder under $TMPDIR (else /tmp), removed with the files named through file().
class TempDir {
 public:
  TempDir() = default;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();
  // False with `error` set when the folder cannot be made; `prefix` starts its name.
  bool create(const std::string& prefix, std::string& error);
  // The path of `name` in the folder, removed with it.
  std::string file(const std::string& name);

 private:
  std::string path_;
  std::vector<std::string> files_;
};

bool writeFile(const std::string& path, const std::string& data);
std::optional<std::string> readFile(const std::string& path);

// Runs args[0] with `args` (stdin /dev/null), stdout and stderr interleaved into `log`. True when
// it exited with status 0; otherwise `error` says why (cannot start, a signal, an exit status),
// followed by the log.
bool run(const std::vector<std::string>& args, std::string& log, std::string& error);

}  // namespace mk::tool
