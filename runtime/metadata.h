// The kernel metadata sidecar that `mkdsl build` writes beside the PTX (`F.meta.json`;
// backend/metadata.cpp writes it, backend/backend.h LaunchInfo documents the launch ABI). This is
// all the runtime knows of the compiled program.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/layout.h"

namespace mk::runtime {

// Malformed or unsupported metadata; the message starts with the file name.
class MetadataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Arena { Weights = 0, State = 1, Activations = 2 };
const char* arenaName(Arena a);

struct TensorMeta {
  enum Kind { Weight, State, Activation, Input } kind = Activation;
  std::string name;
  ElemType dtype = ElemType::F32;
  std::vector<int64_t> shape;
  Layout layout;
  Arena arena = Arena::Activations;
  uint64_t offset = 0;  // bytes into the arena
  uint64_t bytes = 0;   // of the buffer (at least the storage bytes of the layout)
  std::vector<std::string> sources;  // weights: safetensors names
  std::string declaredAt;            // weights and state: "examples/llama.mk:91:12" ("" unknown)

  int64_t elements() const { return shapeElements(shape); }
  uint64_t storageBytes() const { return uint64_t(storageElements(layout, shape)) * elemTypeBytes(dtype); }
};

struct InputMeta {
  std::string name;
  ElemType dtype = ElemType::I32;
  int tensor = -1;  // a tensor the value is also written to (every element), or -1
  int64_t bound = -1;  // values must lie in [0, bound) (the token indexes the embedding's rows,
                       // the position the KV cache); -1: the kernel states no bound
};

// A field of the config the kernel was built for ("config_values"): integers, floats and
// booleans (true 1, false 0); `text` is the JSON literal as written.
struct ConfigValue {
  std::string name;
  double value = 0;
  bool isBool = false;
  std::string text;
};

struct OutputMeta {
  std::string name;
  int tensor = -1;
};

// The kernel parameters, in order, that this runtime passes (backend.h LaunchInfo); a traced
// kernel (`mkdsl build --trace`) takes kTraceParam after them.
extern const std::vector<std::string> kKernelParams;
extern const char* const kTraceParam;
// The error record's words (backend.h ErrorWord) and kinds (ErrorKind).
enum ErrorWord { ErrFlag = 0, ErrSm, ErrTask, ErrCounter, ErrExpected, ErrSeen, ErrKind, ErrEpoch, ErrWords };
enum ErrorKind { ErrCounterWait = 1, ErrRingFull = 2, ErrRingEmpty = 3 };

// A traced kernel's record of one queue entry (backend.h TraceWord): eight u64 words, the times
// from the GPU's nanosecond global timer: start (before its waits), ready (waits done), end (body
// done, signals issued), (node << 32) | sm, the nanoseconds its compute threads waited for weight
// tiles, when the loader warp issued its first and its last tile copy (0: none), and the
// nanoseconds the loader waited for free ring slots for them.
enum TraceWord {
  TraceStart = 0, TraceReady, TraceEnd, TraceWhere, TraceRingWait, TraceLoaderFirst, TraceLoaderLast, TraceLoaderWait,
  TraceWords
};

// What a traced kernel's records point at ("trace" in the metadata): a node of the op graph, its
// op, how many tasks it has and the bytes the compiler estimates they move (summed over them).
struct TraceNode {
  std::string name;  // "qkv_rope_append#1"
  std::string op;    // "qkv_rope_append"
  int64_t tasks = 0;
  int64_t bytes = 0;
  // False when `bytes` is an upper bound: a loop of its tasks runs a number of trips known only
  // at run time (attention up to `pos`), and the compiler counted the whole region it may read.
  bool bytesExact = true;
};
struct TraceInfo {
  int64_t records = 0;           // one per queue entry, SM 0's first
  std::vector<TraceNode> nodes;  // indexed by node id (TraceWhere's upper half)
};

struct KernelMetadata {
  std::string program, config, target;  // informational
  std::string arch;                      // "sm_90a", ...
  std::string entry = "mk_step";
  int grid = 0, block = 0;
  int computeThreads = 0;
  bool loaderWarp = false;
  int ringSlots = 0;
  int64_t ringSlotBytes = 0;
  int64_t dynamicSmemBytes = 0;
  int64_t syncCounters = 0;
  int errorWords = 8;
  uint64_t arenaBytes[3] = {0, 0, 0};  // by Arena
  std::vector<TensorMeta> tensors;
  std::vector<InputMeta> inputs;
  std::vector<OutputMeta> outputs;
  std::vector<ConfigValue> configValues;  // in file order; empty in metadata without them
  std::optional<TraceInfo> trace;         // built with --trace: it takes the trace parameter

  // A tensor's index by name, or -1.
  int find(const std::string& name) const;
  // A config value by name, or nullptr.
  const ConfigValue* configValue(const std::string& name) const;

 private:
  friend KernelMetadata parseMetadata(std::string_view, const std::string&);
  std::map<std::string, int> byName_;
};

// Parses and validates metadata text: the format tag and version 1, every field's type and range,
// the parameter list (it must be the ABI above), tensors (dtype, layout valid for the shape,
// placement inside its arena, weights in the weights arena with string sources, unique names),
// inputs and outputs naming existing tensors; the optional "config_values" (numbers and booleans),
// tensors' "declared_at" (a string) and inputs' "bound" (an integer >= 0, or null); the optional
// "trace" (records >= 0, record_words TraceWords, nodes with name, op, tasks and bytes), present
// exactly when "params" ends with "trace". Unknown keys are ignored (newer compilers may add some).
// Throws MetadataError("PATH: ...").
KernelMetadata parseMetadata(std::string_view text, const std::string& path);
// Reads the file first ("PATH: cannot open ...").
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
