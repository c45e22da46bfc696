// The kernel metadata sidecar that `mkdsl build` writes beside the PTX (`F.meta.json`;
// backend/metadata.cpp writes it, backend/backend.h LaunchInfo documents the launch ABI). This is
// all the runtime knows of the compiled program.
#pragma once

#include <cstdint>
#include <map>
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

  int64_t elements() const { return shapeElements(shape); }
  uint64_t storageBytes() const { return uint64_t(storageElements(layout, shape)) * elemTypeBytes(dtype); }
};

struct InputMeta {
  std::string name;
  ElemType dtype = ElemType::I32;
  int tensor = -1;  // a tensor the value is also written to (every element), or -1
};

struct OutputMeta {
  std::string name;
  int tensor = -1;
};

// The kernel parameters, in order, that this runtime passes (backend.h LaunchInfo).
extern const std::vector<std::string> kKernelParams;
// The error record's words (backend.h ErrorWord) and kinds (ErrorKind).
enum ErrorWord { ErrFlag = 0, ErrSm, ErrTask, ErrCounter, ErrExpected, ErrSeen, ErrKind, ErrEpoch, ErrWords };
enum ErrorKind { ErrCounterWait = 1, ErrRingFull = 2, ErrRingEmpty = 3 };

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

  // A tensor's index by name, or -1.
  int find(const std::string& name) const;

 private:
  friend KernelMetadata parseMetadata(std::string_view, const std::string&);
  std::map<std::string, int> byName_;
};

// Parses and validates metadata text: the format tag and version 1, every field's type and range,
// the parameter list (it must be the ABI above), tensors (dtype, layout valid for the shape,
// placement inside its arena, weights in the weights arena with string sources, unique names),
// inputs and outputs naming existing tensors. Unknown keys are ignored (newer compilers may add
// some). Throws MetadataError("PATH: ...").
KernelMetadata parseMetadata(std::string_view text, const std::string& path);
// Reads the file first ("PATH: cannot open ...").
KernelMetadata readMetadata(const std::string& path);

// A file that cannot be read; the message starts with its name.
class FileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// The whole contents of a regular file; throws FileError.
std::string readWholeFile(const std::string& path);

}  // namespace mk::runtime
