// NVIDIA's PTX assembler, run as an external tool: PTX -> cubin, and its `-v` resource report
// (registers, shared memory, spills, stack per function). Optional: mkdsl emits PTX without it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mk::ptxas {

// One function of `ptxas -v`'s report.
struct FunctionStats {
  std::string name;
  bool entry = false;           // a kernel (.entry), not a device function
  int registers = 0;            // entries only: device functions report no count of their own
  int64_t sharedBytes = 0;      // static shared memory ("smem"); dynamic shared memory is not in it
  int64_t spillStores = 0;      // bytes
  int64_t spillLoads = 0;       // bytes
  int64_t stackFrameBytes = 0;
};

// Where ptxas is: $MKDSL_PTXAS when set and non-empty (then only there), else the first `ptxas`
// on PATH, else /usr/local/cuda/bin/ptxas. nullopt when none is executable, with `why` (when
// given) saying where it looked.
std::optional<std::string> find(std::string* why = nullptr);

struct Options {
  std::string arch;      // -arch=sm_90a
  bool verbose = false;  // -v: fill Result::functions
  bool keepCubin = false;  // return the cubin in Result::cubin
};

struct Result {
  bool ok = false;
  std::string log;    // what ptxas printed (stdout and stderr, interleaved)
  std::string error;  // when !ok: why, including the log
  std::string cubin;  // with keepCubin: the ELF bytes
  std::vector<FunctionStats> functions;  // with verbose
};

// Assembles `ptx` with the ptxas at `ptxasPath`. The PTX and the cubin go through a private
// temporary folder, so nothing is written elsewhere (ptxas alone would write elf.o in the
// current directory).
Result run(const std::string& ptxasPath, const std::string& ptx, const Options& options);

// The functions of a `ptxas -v` log, in the order they are first named.
std::vector<FunctionStats> parseVerbose(const std::string& log);

// "mk_step: 96 registers, 1024 bytes shared, 0 bytes spill stores, 0 bytes spill loads, 0 bytes
// stack frame" (device functions: without the registers).
std::string summary(const FunctionStats& f);

}  // namespace mk::ptxas
