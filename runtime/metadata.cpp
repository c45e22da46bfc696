#include "runtime/metadata.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace mk::runtime {

std::string readWholeFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw FileError(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw FileError(path + ": not a regular file");
  }
  std::string out(size_t(st.st_size), '\0');
  size_t got = 0;
  while (got < out.size()) {
    ssize_t r = ::read(fd, out.data() + got, out.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += size_t(r);
  }
  ::close(fd);
  if (got != out.size()) throw FileError(path + ": cannot read the file (it changed size while being read?)");
  return out;
}

std::string configNamesFor(const KernelMetadata& md, int64_t n, const std::vector<std::string>& hints) {
  std::vector<const ConfigValue*> all, hinted;
  for (const ConfigValue& c : md.configValues) {
    if (c.isBool || c.value != double(n)) continue;
    all.push_back(&c);
    for (const std::string& h : hints)
      if (c.name.find(h) != std::string::npos) {
        hinted.push_back(&c);
        break;
      }
  }
  const auto& use = hinted.empty() ? all : hinted;
  if (use.empty()) return "";
  std::string s;
  for (const ConfigValue* c : use) s += c->name + " = ";
  return s + std::to_string(n);
}

std::string inputRangeProblem(const KernelMetadata& md, size_t input, int64_t value) {
  if (input >= md.inputs.size()) return "";
  const InputMeta& in = md.inputs[input];
  const int64_t bound = in.bound;
  if (bound < 0 || (value >= 0 && value < bound)) return "";
  const std::string range = bound == 0 ? "none (the bound is 0)" : "0 .. " + std::to_string(bound - 1);
  const std::string verb = value < 0 ? " is outside " : " is past ";
  const std::string head = in.name + " " + std::to_string(value);
  // What the bound protects: a state tensor with a dimension this long (the KV cache: the
  // position indexes it), or a weight with this many rows (the embedding: the token indexes it).
  const TensorMeta* state = nullptr;
  const TensorMeta* rows = nullptr;
  for (const TensorMeta& t : md.tensors) {
    if (t.kind == TensorMeta::State && !state)
      for (int64_t d : t.shape)
        if (d == bound) {
          state = &t;
          break;
        }
    if (t.kind == TensorMeta::Weight && !rows && !t.shape.empty() && t.shape[0] == bound) rows = &t;
  }
  if (in.role == abi::Role::Token && rows) state = nullptr;  // the compiler saw it index a weight's rows
  auto note = [&](const std::vector<std::string>& hints) {
    std::string c = configNamesFor(md, bound, hints);
    return c.empty() ? std::string() : " (" + c + ")";
  };
  if (state) {
    bool cache = false;
    for (const TensorMeta& t : md.tensors)
      if (t.kind == TensorMeta::State && t.name.find("cache") != std::string::npos &&
          std::find(t.shape.begin(), t.shape.end(), bound) != t.shape.end())
        cache = true;
    const std::string what = cache ? "the KV cache" : "the state '" + state->name + "' (" + dtypeName(state->dtype) +
                                                          shapeString(state->shape) + ")";
    return head + verb + what + ": positions " + range + note({"seq", "ctx", "len", "pos"});
  }
  if (rows)
    return head + verb + "the rows of '" + rows->name + "': ids " + range + note({"vocab", "token"});
  if (in.role == abi::Role::Position) {
    // The step writes the cache from the position on (a prefill's chunk of rows): the bound is
    // the cache length less the rows after it.
    for (const TensorMeta& t : md.tensors)
      if (t.kind == TensorMeta::State)
        for (int64_t d : t.shape)
          if (d > bound) {
            const std::string c = configNamesFor(md, d, {"seq", "ctx", "len", "pos"});
            return head + verb + "the positions the step may start at: " + range + " (it writes " +
                   std::to_string(d - bound + 1) + " rows of the KV cache from there; " +
                   (c.empty() ? "the cache holds " + std::to_string(d) : c) + ")";
          }
  }
  return "input '" + in.name + "' = " + std::to_string(value) + " is out of range: it must be " + range + note({});
}

KernelMetadata readMetadata(const std::string& path) {
  std::string text;
  try {
    text = readWholeFile(path);
  } catch (const FileError& e) {
    throw MetadataError(e.what());
  }
  return parseMetadata(text, path);
}

}  // namespace mk::runtime
