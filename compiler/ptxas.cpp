#include "compiler/ptxas.h"

#include <cstring>
#include <sstream>

#include "compiler/tool.h"

namespace mk::ptxas {
namespace {

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
  return tool::find("MKDSL_PTXAS", {"ptxas"}, {"/usr/local/cuda/bin/ptxas"},
                    "install the CUDA toolkit, or set $MKDSL_PTXAS to its path", why);
}

Result run(const std::string& ptxasPath, const std::string& ptx, const Options& options) {
  Result r;
  tool::TempDir dir;
  if (!dir.create("mkdsl-ptxas", r.error)) return r;
  std::string input = dir.file("kernel.ptx"), output = dir.file("kernel.cubin");
  if (!tool::writeFile(input, ptx)) {
    r.error = "cannot write " + input;
    return r;
  }
  std::vector<std::string> args = {ptxasPath, "-arch=" + options.arch};
  if (options.verbose) args.push_back("-v");
  args.insert(args.end(), {input, "-o", output});
  if (!tool::run(args, r.log, r.error)) return r;
  if (options.keepCubin) {
    auto cubin = tool::readFile(output);
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
