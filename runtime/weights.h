// Weight assembly: from safetensors tensors (or a seeded random generator) to a .mk weight's
// values. One implementation for both consumers, so the CPU interpreter (interp/) and the GPU
// runtime (mkrt) see bit-identical weights:
//   - the interpreter's form: logical row-major values, floats already rounded to the dtype;
//   - the device form: the dtype's storage bytes in the declared physical layout.
//
// Assembly (docs/language.md §6.1): one source must have the weight's exact shape; several are
// concatenated along dim 0, or with an interleave(R) layout interleaved in R-row blocks
// ([s0 0..R, s1 0..R, ..., s0 R..2R, ...]). A missing "lm_head.weight" falls back to
// "model.embed_tokens.weight" (tied embeddings, as transformers does). Float sources convert to
// float dtypes only (through f64, then f32, then round to nearest even for bf16/f16); integer
// sources convert to i32/bool only (wrapping to 32 bits).
//
// Random weights: per tensor a splitmix64 stream seeded with `seed ^ fnv1a(name)` (its first
// output skipped); rank <= 1 (norm gains) 1 + U(-0.1, 0.1), others U(-a, a) with
// a = 1 / sqrt(last dim), rounded to the dtype; integer weights are zero.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/layout.h"
#include "runtime/safetensors.h"

namespace mk::runtime {

// A weight that cannot be assembled from the checkpoint; the message names the weight (and, when
// the spec knows it, the .mk line that declares it), the safetensors tensor and both shapes/dtypes. (A source whose bytes cannot be read as numbers is a
// SafetensorsError.)
class WeightError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// splitmix64: portable and identical everywhere (std:: distributions are not).
struct SplitMix64 {
  static constexpr uint64_t kGamma = 0x9e3779b97f4a7c15ull;
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += kGamma);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  uint64_t below(uint64_t n) { return next() % n; }
  void skip(uint64_t n) { s += n * kGamma; }  // as n calls of next(): the state is a counter
};

uint64_t fnv1a(const std::string& s);

struct WeightSpec {
  std::string name;                  // the .mk name: "layer[3].qkv"
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  Layout layout;
  std::vector<std::string> sources;  // safetensors names
  // Where the .mk program declares it ("examples/llama.mk:91:12"; "" unknown): errors name it.
  std::string declaredAt = {};
};

// Value conversions (the interpreter's `rnd` for stored values):
float roundToElemType(DType t, double x);     // float dtypes: float(x), then bf16/f16 rounding
int32_t wrapToInt32(double x);                   // integers: wrap to 32 bits
void encodeElement(DType t, double x, uint8_t* out);  // storage bytes of the rounded/wrapped value
double decodeElement(DType t, const uint8_t* in);     // and back (bool: 0 or 1)

// Checks that the checkpoint can fill the weight (every source present, dtypes that convert,
// shapes that assemble to the declared one) without reading any data; throws WeightError.
// The assembly functions below check the same first.
void checkWeightSources(const WeightSpec& w, const SafetensorsSet& set);

// ---- Interpreter form ------------------------------------------------------------------------
// Logical row-major values: `floats` for float dtypes, `ints` for i32/bool (each resized to the
// element count; the other left alone). Throws WeightError / SafetensorsError.
void assembleWeightValues(const WeightSpec& w, const SafetensorsSet& set, std::vector<float>& floats,
                          std::vector<int32_t>& ints);
// The random values of a float weight (empty for integer dtypes).
std::vector<float> randomWeightValues(const WeightSpec& w, uint64_t seed);

// ---- Device form -----------------------------------------------------------------------------
// The weight's storage: storageElements(layout, shape) elements of its dtype, laid out
// physically; padding zero. Also throws WeightError when the layout cannot be repacked.
std::vector<uint8_t> assembleWeightStorage(const WeightSpec& w, const SafetensorsSet& set);
std::vector<uint8_t> randomWeightStorage(const WeightSpec& w, uint64_t seed);  // integer weights: zeros

}  // namespace mk::runtime
