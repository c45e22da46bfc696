// The kernel metadata sidecar (abi/metadata.h, which the backend writes with) as the runtime
// reads it, and what the runtime says about a kernel's inputs.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "abi/metadata.h"
#include "runtime/layout.h"

namespace mk::runtime {

using abi::Arena;
using abi::arenaName;
using abi::ConfigValue;
using abi::InputMeta;
using abi::KernelMetadata;
using abi::MetadataError;
using abi::OutputMeta;
using abi::parseMetadata;
using abi::TensorMeta;
using abi::TraceInfo;
using abi::TraceNode;
// The kernel's error record and trace records (abi/records.h).
using abi::ErrorKind;
using abi::ErrorWord;
using abi::TraceWord;
using enum abi::ErrorWord;
using enum abi::ErrorKind;
using enum abi::TraceWord;

// Reads the file and parses it (parseMetadata); "PATH: cannot open ..." when it cannot be read.
KernelMetadata readMetadata(const std::string& path);

// Why `value` may not be given to step input `input` (outside [0, bound)), in words that say what
// the bound protects and where it comes from, e.g.
//   "pos 4096 is past the KV cache: positions 0 .. 4095 (max_seq = 4096)"
//   "token 300 is past the rows of 'embed_tokens': ids 0 .. 255 (vocab = 256)"
// or "" when the value is in range or the input has no bound.
std::string inputRangeProblem(const KernelMetadata& md, size_t input, int64_t value);
// The config fields whose value is `n` ("max_seq = 4096"; "k_chunk = max_seq = 64" when several
// fit; "" when none), preferring names that contain one of `hints`.
std::string configNamesFor(const KernelMetadata& md, int64_t n, const std::vector<std::string>& hints = {});

// A file that cannot be read; the message starts with its name.
class FileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// The whole contents of a regular file; throws FileError.
std::string readWholeFile(const std::string& path);

}  // namespace mk::runtime
