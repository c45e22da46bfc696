// Safetensors files (https://huggingface.co/docs/safetensors): reader, sharded sets and a writer.
// Standard library (plus POSIX mmap) only: the host runtime reuses it, so it must not depend on the
// compiler. Every error is a SafetensorsError whose message names the file and, where there is
// one, the tensor.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace mk::runtime {

class SafetensorsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bytes per element of a safetensors dtype name ("BF16", "F32", ...); nullopt if unknown.
std::optional<unsigned> safetensorsDTypeSize(const std::string& dtype);

struct TensorInfo {
  std::string name;
  std::string dtype;             // as spelled in the header: "BF16", "F16", "F32", "I32", "I64", ...
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;   // data_offsets, relative to the data section
  int64_t elements() const;
};

// One .safetensors file, memory-mapped (read-only) for its lifetime; cheap to move and copy.
class SafetensorsFile {
 public:
  // Opens and validates the whole header: throws SafetensorsError.
  static SafetensorsFile open(const std::string& path);

  const std::string& path() const { return path_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }  // in data order
  const TensorInfo* find(const std::string& name) const;
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // The raw little-endian bytes of a tensor of this file.
  std::span<const uint8_t> bytes(const TensorInfo& t) const;

 private:
  struct Mapping;
  std::string path_;
  std::shared_ptr<const Mapping> map_;
  const uint8_t* data_ = nullptr;  // start of the data section
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t> byName_;
  std::map<std::string, std::string> metadata_;
};

// A checkpoint: one file, or a directory of shards with `model.safetensors.index.json`
// (its weight_map names each tensor's shard), or a directory holding `model.safetensors`.
class SafetensorsSet {
 public:
  static SafetensorsSet open(const std::string& path);
  static SafetensorsSet fromFile(SafetensorsFile f);

  struct Ref {
    const SafetensorsFile* file;
    const TensorInfo* info;
    std::span<const uint8_t> bytes() const { return file->bytes(*info); }
  };
  std::optional<Ref> find(const std::string& name) const;
  std::vector<std::string> names() const;  // sorted
  const std::vector<SafetensorsFile>& files() const { return files_; }

 private:
  std::vector<SafetensorsFile> files_;
  std::map<std::string, size_t> index_;  // tensor -> file (indices, so copies stay valid)
};

// Converts a tensor's elements to double (exact for every float dtype and for integers below
// 2^53). Supports F64 F32 F16 BF16 I64 I32 I16 I8 U8 U16 U32 U64 BOOL.
std::vector<double> toDoubles(const SafetensorsSet::Ref& t);

// bf16 / f16 bit conversions, round to nearest even (NaN stays NaN).
uint16_t f32ToBf16(float f);
float bf16ToF32(uint16_t h);
uint16_t f32ToF16(float f);
float f16ToF32(uint16_t h);

// ---- Writer (tests, tools) -------------------------------------------------------------------
struct TensorData {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // little endian, C order
};
// Encodes float values as "F32", "BF16" or "F16" bytes (rounding to nearest even).
std::vector<uint8_t> encodeFloats(const std::vector<float>& values, const std::string& dtype);
void writeSafetensors(const std::string& path, const std::vector<TensorData>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

}  // namespace mk::runtime
