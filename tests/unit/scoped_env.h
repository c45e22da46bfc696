// Sets an environment variable for one scope (the tool searches: $MKDSL_PTXAS, $MKDSL_LLD).
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace mk::testing {

struct ScopedEnv {
  std::string name;
  std::optional<std::string> old;
  ScopedEnv(const char* n, const char* value) : name(n) {
    if (const char* v = std::getenv(n)) old = v;
    setenv(n, value, 1);
  }
  ~ScopedEnv() {
    if (old) setenv(name.c_str(), old->c_str(), 1);
    else unsetenv(name.c_str());
  }
};

}  // namespace mk::testing
