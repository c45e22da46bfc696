#include "runtime/weights.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

namespace mk::runtime {

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

float roundToElemType(DType t, double x) {
  const float f = float(x);
  if (t == DType::BF16) return bf16ToF32(f32ToBf16(f));
  if (t == DType::F16) return f16ToF32(f32ToF16(f));
  return f;
}

int32_t wrapToInt32(double x) { return int32_t(uint32_t(uint64_t(int64_t(x)))); }

void encodeElement(DType t, double x, uint8_t* out) {
  switch (t) {
    case DType::BF16: {
      uint16_t h = f32ToBf16(float(x));
      std::memcpy(out, &h, 2);
      return;
    }
    case DType::F16: {
      uint16_t h = f32ToF16(float(x));
      std::memcpy(out, &h, 2);
      return;
    }
    case DType::F32: {
      float f = float(x);
      std::memcpy(out, &f, 4);
      return;
    }
    case DType::I32: {
      int32_t i = wrapToInt32(x);
      std::memcpy(out, &i, 4);
      return;
    }
    case DType::Bool: *out = wrapToInt32(x) != 0 ? 1 : 0; return;
  }
}

double decodeElement(DType t, const uint8_t* in) {
  switch (t) {
    case DType::BF16:
    case DType::F16: {
      uint16_t h;
      std::memcpy(&h, in, 2);
      return t == DType::BF16 ? bf16ToF32(h) : f16ToF32(h);
    }
    case DType::F32: {
      float f;
      std::memcpy(&f, in, 4);
      return f;
    }
    case DType::I32: {
      int32_t i;
      std::memcpy(&i, in, 4);
      return i;
    }
    case DType::Bool: return *in != 0 ? 1 : 0;
  }
  return 0;
}

namespace {

[[noreturn]] void fail(const std::string& msg) { throw WeightError(msg); }

// The safetensors dtypes that convert to numbers (runtime::toDoubles').
enum class Src { F64, F32, F16, BF16, I64, I32, I16, I8, U8, U16, U32, U64 };

bool srcType(const std::string& d, Src& out) {
  static const std::pair<const char*, Src> table[] = {
      {"F64", Src::F64}, {"F32", Src::F32}, {"F16", Src::F16}, {"BF16", Src::BF16}, {"I64", Src::I64},
      {"I32", Src::I32}, {"I16", Src::I16}, {"I8", Src::I8},   {"U8", Src::U8},     {"BOOL", Src::U8},
      {"U16", Src::U16}, {"U32", Src::U32}, {"U64", Src::U64}};
  for (auto& [name, s] : table)
    if (d == name) return out = s, true;
  return false;
}

// n elements of a source row as doubles (exact, like toDoubles).
void toDoubleRow(Src s, const uint8_t* p, size_t n, double* out) {
  auto each = [&]<typename T>(T) {
    for (size_t i = 0; i < n; ++i) {
      T v;
      std::memcpy(&v, p + i * sizeof(T), sizeof(T));
      out[i] = double(v);
    }
  };
  switch (s) {
    case Src::F64: each(double{}); break;
    case Src::F32: each(float{}); break;
    case Src::I64: each(int64_t{}); break;
    case Src::I32: each(int32_t{}); break;
    case Src::I16: each(int16_t{}); break;
    case Src::I8: each(int8_t{}); break;
    case Src::U8: each(uint8_t{}); break;
    case Src::U16: each(uint16_t{}); break;
    case Src::U32: each(uint32_t{}); break;
    case Src::U64: each(uint64_t{}); break;
    case Src::F16:
    case Src::BF16:
      for (size_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        out[i] = s == Src::BF16 ? bf16ToF32(h) : f16ToF32(h);
      }
      break;
  }
}

// How the weight's rows come from its sources (validated).
struct Plan {
  std::vector<SafetensorsSet::Ref> srcs;
  bool interleave = false;
  int64_t R = 0;         // interleave rows
  int64_t rowElems = 1;  // elements per dim-0 row of the weight
};

std::string what(const WeightSpec& t) {
  return "weight '" + t.name + "' (" + dtypeName(t.dtype) + shapeString(t.shape) + ")" +
         (t.declaredAt.empty() ? "" : " declared at " + t.declaredAt);
}

Plan plan(const WeightSpec& t, const SafetensorsSet& set) {
  const std::string w = what(t);
  if (t.sources.empty()) fail(w + " names no safetensors tensor");
  Plan p;
  for (const std::string& name : t.sources) {
    auto ref = set.find(name);
    // Tied embeddings: transformers reuses the input embedding when the checkpoint has no head.
    if (!ref && name == "lm_head.weight") ref = set.find("model.embed_tokens.weight");
    if (!ref) fail(w + ": the checkpoint has no tensor \"" + name + "\"");
    p.srcs.push_back(*ref);
  }
  auto describe = [](const SafetensorsSet::Ref& r) {
    return "\"" + r.info->name + "\" in " + r.file->path() + " is " + r.info->dtype + shapeString(r.info->shape);
  };
  for (const auto& r : p.srcs) {
    const std::string& d = r.info->dtype;
    bool srcFloat = d == "BF16" || d == "F16" || d == "F32" || d == "F64";
    if (srcFloat != isFloat(t.dtype))
      fail(w + ": " + describe(r) + ", which does not convert to " + dtypeName(t.dtype));
  }
  const size_t nsrc = p.srcs.size();
  p.interleave = t.layout.kind == Layout::Interleave && nsrc > 1;
  if (nsrc == 1) {
    if (p.srcs[0].info->shape != t.shape)
      fail(w + ": " + describe(p.srcs[0]) + "; expected shape " + shapeString(t.shape));
  } else {
    if (t.shape.empty()) fail(w + ": a scalar cannot be assembled from several sources");
    std::vector<int64_t> rowShape(t.shape.begin() + 1, t.shape.end());
    int64_t rows = 0;
    for (const auto& r : p.srcs) {
      const auto& s = r.info->shape;
      if (s.size() != t.shape.size() || std::vector<int64_t>(s.begin() + 1, s.end()) != rowShape)
        fail(w + ": " + describe(r) + "; expected rows of shape " + shapeString(rowShape));
      if (p.interleave && s[0] * int64_t(nsrc) != t.shape[0])
        fail(w + ": " + describe(r) + "; interleaving " + std::to_string(nsrc) + " sources needs " +
             std::to_string(t.shape[0] / int64_t(nsrc)) + " rows from each");
      rows += s[0];
    }
    if (rows != t.shape[0])
      fail(w + ": its " + std::to_string(nsrc) + " sources hold " + std::to_string(rows) + " rows in all; expected " +
           std::to_string(t.shape[0]));
    if (p.interleave) {
      const int64_t R = t.layout.args.empty() ? 0 : t.layout.args[0];
      if (R <= 0 || p.srcs[0].info->shape[0] % R != 0)
        fail(w + ": interleave(" + std::to_string(R) + ") does not divide the " + std::to_string(p.srcs[0].info->shape[0]) +
             " rows of each source");
      p.R = R;
    }
  }
  p.rowElems = t.shape.empty() ? 1 : shapeElements(std::vector<int64_t>(t.shape.begin() + 1, t.shape.end()));
  return p;
}

// Calls row(dstRow, source, srcRow, srcType) for every row of every source, in the interpreter's
// order: sources in turn, rows in order.
template <typename F>
void forEachRow(const Plan& p, F&& row) {
  const size_t nsrc = p.srcs.size();
  int64_t row0 = 0;  // concatenation: the next destination row
  for (size_t s = 0; s < nsrc; ++s) {
    const auto& src = p.srcs[s];
    Src type;
    if (!srcType(src.info->dtype, type))
      throw SafetensorsError(src.file->path() + ": tensor \"" + src.info->name + "\": dtype " + src.info->dtype +
                             " cannot be converted to numbers");
    const int64_t rows = src.info->shape.empty() ? 1 : src.info->shape[0];
    for (int64_t r = 0; r < rows; ++r) {
      int64_t dstRow = row0 + r;
      if (p.interleave) dstRow = (r / p.R * int64_t(nsrc) + int64_t(s)) * p.R + r % p.R;  // [s0 0..R, s1 0..R, s0 R..2R, ...]
      row(dstRow, src, r, type);
    }
    row0 += rows;
  }
}

// Same-dtype copies are exact except for NaNs, which the conversion chain (through f64 and f32)
// quiets; these do the same to the raw bits.
bool sameStorage(const std::string& src, DType dst) {
  return (src == "BF16" && dst == DType::BF16) || (src == "F16" && dst == DType::F16) ||
         (src == "F32" && dst == DType::F32) || (src == "I32" && dst == DType::I32);
}

void quietNaNs(DType t, uint8_t* p, size_t n) {
  if (t == DType::BF16) {
    for (size_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      if ((h & 0x7fffu) > 0x7f80u) h = uint16_t(h | 0x40u), std::memcpy(p + 2 * i, &h, 2);
    }
  } else if (t == DType::F16) {
    for (size_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      if ((h & 0x7fffu) > 0x7c00u) h = uint16_t((h & 0x8000u) | 0x7e00u), std::memcpy(p + 2 * i, &h, 2);
    }
  } else if (t == DType::F32) {
    for (size_t i = 0; i < n; ++i) {
      uint32_t x;
      std::memcpy(&x, p + 4 * i, 4);
      if ((x & 0x7fffffffu) > 0x7f800000u) x |= 0x00400000u, std::memcpy(p + 4 * i, &x, 4);
    }
  }
}

// Why the weight cannot be repacked to its layout ("" when it can), as a WeightError message.
std::string repackProblem(const WeightSpec& w) {
  std::string p = layoutProblem(w.layout, w.shape);
  if (p.empty()) p = mappingProblem(w.layout, w.shape, dtypeBytes(w.dtype));
  return p.empty() ? "" : what(w) + ": cannot lay out as " + w.layout.str() + ": " + p;
}

// The values of a float weight's random stream, in logical row-major order.
struct RandomStream {
  RandomStream(const WeightSpec& t, uint64_t seed) : rng{seed ^ fnv1a(t.name)}, dtype(t.dtype) {
    rng.next();
    gain = t.shape.size() <= 1;
    a = gain ? 0.1 : 1.0 / std::sqrt(double(t.shape.back()));
  }
  float next() { return roundToElemType(dtype, (gain ? 1.0 : 0.0) + a * (2.0 * rng.uniform() - 1.0)); }
  SplitMix64 rng;
  DType dtype;
  bool gain = false;
  double a = 0;
};

}  // namespace

void checkWeightSources(const WeightSpec& w, const SafetensorsSet& set) { (void)plan(w, set); }

void assembleWeightValues(const WeightSpec& t, const SafetensorsSet& set, std::vector<float>& floats,
                          std::vector<int32_t>& ints) {
  const Plan p = plan(t, set);
  const bool isInt = !isFloat(t.dtype);
  const size_t n = size_t(shapeElements(t.shape));
  if (isInt) ints.assign(n, 0);
  else floats.assign(n, 0.0f);
  std::vector<double> v(size_t(p.rowElems));
  forEachRow(p, [&](int64_t dstRow, const SafetensorsSet::Ref& src, int64_t r, Src type) {
    toDoubleRow(type, src.bytes().data() + size_t(r * p.rowElems) * safetensorsDTypeSize(src.info->dtype).value(),
                size_t(p.rowElems), v.data());
    const size_t base = size_t(dstRow * p.rowElems);
    for (int64_t k = 0; k < p.rowElems; ++k) {
      if (isInt) ints[base + size_t(k)] = wrapToInt32(v[size_t(k)]);
      else floats[base + size_t(k)] = roundToElemType(t.dtype, v[size_t(k)]);
    }
  });
}

std::vector<float> randomWeightValues(const WeightSpec& t, uint64_t seed) {
  if (!isFloat(t.dtype)) return {};
  RandomStream stream(t, seed);
  std::vector<float> out(size_t(shapeElements(t.shape)));
  for (float& x : out) x = stream.next();
  return out;
}

std::vector<uint8_t> assembleWeightStorage(const WeightSpec& t, const SafetensorsSet& set) {
  const Plan p = plan(t, set);
  if (auto problem = repackProblem(t); !problem.empty()) fail(problem);
  const unsigned eb = dtypeBytes(t.dtype);
  std::vector<uint8_t> storage(size_t(storageElements(t.layout, t.shape)) * eb, 0);
  RowPacker packer(t.layout, t.shape, eb);
  std::vector<uint8_t> row(packer.rowBytes());
  std::vector<double> v(size_t(p.rowElems));
  forEachRow(p, [&](int64_t dstRow, const SafetensorsSet::Ref& src, int64_t r, Src type) {
    const unsigned srcBytes = safetensorsDTypeSize(src.info->dtype).value();
    const uint8_t* in = src.bytes().data() + size_t(r * p.rowElems) * srcBytes;
    if (sameStorage(src.info->dtype, t.dtype)) {
      std::memcpy(row.data(), in, row.size());
      quietNaNs(t.dtype, row.data(), size_t(p.rowElems));
    } else {
      toDoubleRow(type, in, size_t(p.rowElems), v.data());
      for (int64_t k = 0; k < p.rowElems; ++k) encodeElement(t.dtype, v[size_t(k)], row.data() + size_t(k) * eb);
    }
    packer.scatter(dstRow, row.data(), storage.data());
  });
  return storage;
}

std::vector<uint8_t> randomWeightStorage(const WeightSpec& t, uint64_t seed) {
  if (auto problem = repackProblem(t); !problem.empty()) fail(problem);
  const unsigned eb = dtypeBytes(t.dtype);
  std::vector<uint8_t> storage(size_t(storageElements(t.layout, t.shape)) * eb, 0);
  if (!isFloat(t.dtype)) return storage;
  const RowPacker packer(t.layout, t.shape, eb);
  const size_t rowElems = packer.rowBytes() / eb;
  // Rows in parallel: the stream is a counter, so row r starts r * rowElems draws in. An 8B model's
  // 8e9 values take over a minute on one core.
  auto fill = [&](int64_t begin, int64_t end) {
    RandomStream stream(t, seed);  // logical order, one row at a time
    stream.rng.skip(uint64_t(begin) * rowElems);
    std::vector<uint8_t> row(packer.rowBytes());
    for (int64_t r = begin; r < end; ++r) {
      for (size_t k = 0; k < rowElems; ++k) encodeElement(t.dtype, stream.next(), row.data() + k * eb);
      packer.scatter(r, row.data(), storage.data());
    }
  };
  constexpr size_t kElemsPerThread = size_t(1) << 22;
  const int64_t rows = packer.rows();
  const int64_t threads = std::clamp<int64_t>(int64_t(storage.size() / eb / kElemsPerThread), 1,
                                              std::min<int64_t>(rows, std::max(1u, std::thread::hardware_concurrency())));
  std::vector<std::thread> pool;
  for (int64_t i = 1; i < threads; ++i) pool.emplace_back(fill, rows * i / threads, rows * (i + 1) / threads);
  fill(0, rows / threads);
  for (std::thread& th : pool) th.join();
  return storage;
}

}  // namespace mk::runtime
