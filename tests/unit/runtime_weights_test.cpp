// Weight assembly (runtime/weights.h) for the GPU equals the CPU interpreter's, bit for bit: every
// layout and dtype, NaNs and rounding ties, tied embeddings, random weights, the same errors; and
// on the tiny Llama as the compiler describes it in its metadata.
#include <doctest/doctest.h>

#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "interp/interp.h"
#include "ir_build.h"
#include "runtime/layout.h"
#include "runtime/metadata.h"
#include "runtime/safetensors.h"
#include "runtime/weights.h"
#include "tiny_llama.h"

using mk::DType;
using mk::dtypeName;
using mk::isFloat;
namespace interp = mk::interp;
using namespace mk::ir;
using namespace mk::ir::build;
namespace rt = mk::runtime;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("mk_runtime_weights_" + std::to_string(getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string operator/(const std::string& f) const { return (path / f).string(); }
};

std::string message(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

rt::WeightSpec specOf(const Tensor& t) {
  return {t.name, t.dtype, t.shape, t.layout, t.sources};
}

// The interpreter's values of tensor `t`, encoded as the GPU stores them (bf16/f16 bits of the
// already-rounded value, bool as one byte 0/1) at the physical index of each logical element.
std::vector<uint8_t> expectedStorage(const Tensor& t, const interp::Interpreter& in) {
  const DType e = t.dtype;
  const unsigned eb = mk::dtypeBytes(e);
  const rt::Layout& layout = t.layout;
  std::vector<uint8_t> out(size_t(rt::storageElements(layout, t.shape)) * eb, 0);
  const std::vector<float> f = isFloat(t.dtype) ? in.tensor(t.id) : std::vector<float>{};
  const std::vector<int32_t> i = isFloat(t.dtype) ? std::vector<int32_t>{} : in.tensorInts(t.id);
  std::vector<int64_t> c(t.shape.size(), 0);
  for (int64_t k = 0; k < t.elements(); ++k) {
    int64_t rest = k;
    for (size_t d = t.shape.size(); d-- > 0;) c[d] = rest % t.shape[d], rest /= t.shape[d];
    uint8_t* p = out.data() + size_t(rt::physicalIndex(layout, t.shape, eb, c.data())) * eb;
    switch (e) {
      case mk::DType::BF16: {
        uint16_t h = rt::f32ToBf16(f[size_t(k)]);
        std::memcpy(p, &h, 2);
        break;
      }
      case mk::DType::F16: {
        uint16_t h = rt::f32ToF16(f[size_t(k)]);
        std::memcpy(p, &h, 2);
        break;
      }
      case mk::DType::F32: std::memcpy(p, &f[size_t(k)], 4); break;
      case mk::DType::I32: std::memcpy(p, &i[size_t(k)], 4); break;
      case mk::DType::Bool: *p = i[size_t(k)] != 0; break;
    }
  }
  return out;
}

Tensor weight(int id, const std::string& name, DType t, Shape s, Layout l, std::vector<std::string> sources) {
  Tensor w = tensor(id, name, Tensor::Weight, t, std::move(s));
  w.layout = std::move(l);
  w.sources = std::move(sources);
  return w;
}

template <typename T>
std::vector<uint8_t> bytesOf(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

float bits(uint32_t u) { return std::bit_cast<float>(u); }

// 32 float values that exercise the conversions: NaNs (quiet and signalling, both signs), infinities,
// zeros, subnormals of every width, bf16 and f16 rounding ties, f16 overflow.
std::vector<float> specials() {
  return {bits(0x7fc00000), bits(0x7f800001), bits(0xff800123), bits(0x7fa00000), INFINITY, -INFINITY, 0.0f, -0.0f,
          bits(0x00000001), bits(0x00400000), 1e-40f, 6e-8f, 3e-5f, -1e-7f, 1.0f + 0x1p-8f, 1.0f + 0x3p-8f,
          1.0f + 0x1p-11f, 1.0f + 0x3p-11f, 65504.0f, 65520.0f, 70000.0f, -65536.0f, 3.14159f, -2.71828f,
          1e30f, -1e-30f, 0.1f, 123.456f, 1.0f, -1.0f, 0.5f, 7.0f};
}

}  // namespace

TEST_CASE("runtime weights: GPU storage equals the interpreter's values for every layout and dtype") {
  TempDir dir;
  using rt::TensorData;
  const std::vector<float> sp = specials();  // 32 values: [8, 4]
  std::vector<uint16_t> bf, hf;
  for (float x : sp) bf.push_back(rt::f32ToBf16(x)), hf.push_back(rt::f32ToF16(x));
  bf[1] = 0x7f81, bf[2] = 0xff81, hf[1] = 0x7c01, hf[2] = 0xfd01;  // signalling NaN bit patterns
  std::vector<double> dbl;
  for (int k = 0; k < 16; ++k) dbl.push_back(double(sp[size_t(k)]) * 1.000000001 + (k == 5 ? 1e300 : 0.0));
  std::vector<int64_t> i64{0, 1, -1, 2147483647, 2147483648ll, -2147483649ll, 4294967296ll + 5, 7, -7, 100, 1ll << 40, -(1ll << 33), 3, 4, 5, 6};
  std::vector<int32_t> i32{0, 1, -1, INT32_MAX, INT32_MIN, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  std::vector<uint8_t> boolean{0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0};
  std::vector<float> sw(8 * 64);
  for (size_t k = 0; k < sw.size(); ++k) sw[k] = float(k) * 0.37f - 50.0f;
  std::vector<float> emb(32);
  for (size_t k = 0; k < emb.size(); ++k) emb[k] = 1.0f + float(k) * 0x1p-9f;  // bf16 ties
  rt::writeSafetensors(dir / "w.safetensors",
                       {{"g", "F32", {8, 4}, rt::encodeFloats(sp, "F32")},
                        {"u", "BF16", {8, 4}, bytesOf(bf)},
                        {"h", "F16", {8, 4}, bytesOf(hf)},
                        {"d", "F64", {4, 4}, bytesOf(dbl)},
                        {"i", "I64", {4, 4}, bytesOf(i64)},
                        {"i32", "I32", {4, 4}, bytesOf(i32)},
                        {"b", "BOOL", {4, 4}, boolean},
                        {"sw", "F32", {8, 64}, rt::encodeFloats(sw, "F32")},
                        {"model.embed_tokens.weight", "F32", {4, 8}, rt::encodeFloats(emb, "F32")},
                        {"norm", "BF16", {8}, bytesOf(std::vector<uint16_t>(bf.begin(), bf.begin() + 8))},
                        {"scalar", "F32", {}, rt::encodeFloats({0.3f}, "F32")}});
  auto set = rt::SafetensorsSet::open(dir / "w.safetensors");

  Megakernel mk;
  auto& ts = mk.graph.tensors;
  ts.push_back(weight(0, "gate_up", DType::BF16, {16, 4}, {Layout::Interleave, {2}}, {"g", "u"}));
  ts.push_back(weight(1, "cat", DType::F16, {16, 4}, {Layout::Tiled, {4, 2}}, {"g", "u"}));
  ts.push_back(weight(2, "cm", DType::F32, {8, 4}, {Layout::ColMajor, {}}, {"u"}));
  ts.push_back(weight(3, "pad", DType::BF16, {8, 4}, {Layout::Padded, {6}}, {"h"}));
  ts.push_back(weight(4, "swz", DType::BF16, {8, 64}, {Layout::Swizzle, {128}}, {"sw"}));
  ts.push_back(weight(5, "lm_head", DType::BF16, {4, 8}, {Layout::Tiled, {2, 8}}, {"lm_head.weight"}));
  ts.push_back(weight(6, "ints", DType::I32, {4, 4}, {Layout::Tiled, {2, 2}}, {"i"}));
  ts.push_back(weight(7, "bools", DType::Bool, {4, 4}, {}, {"b"}));
  ts.push_back(weight(8, "i32copy", DType::I32, {4, 4}, {Layout::ColMajor, {}}, {"i32"}));
  ts.push_back(weight(9, "f32copy", DType::F32, {8, 4}, {}, {"g"}));
  ts.push_back(weight(10, "f16copy", DType::F16, {8, 4}, {Layout::Tiled, {2, 4}}, {"h"}));
  ts.push_back(weight(11, "dbl", DType::F32, {4, 4}, {}, {"d"}));
  ts.push_back(weight(12, "norm", DType::BF16, {8}, {}, {"norm"}));
  ts.push_back(weight(13, "sc", DType::F32, {}, {}, {"scalar"}));
  ts.push_back(weight(14, "bfcopy", DType::BF16, {8, 4}, {Layout::Swizzle, {32}}, {"u"}));
  ts.push_back(weight(15, "gate_up3", DType::F32, {24, 4}, {Layout::Interleave, {4}}, {"g", "u", "h"}));
  ts.push_back(weight(16, "bf_from_f16", DType::BF16, {8, 4}, {}, {"h"}));
  ts.push_back(weight(17, "ints_from_bool", DType::I32, {4, 4}, {}, {"b"}));
  interp::Interpreter in(mk);
  in.loadWeights(set);
  for (const Tensor& t : ts) {
    INFO(t.name << " " << t.layout.str());
    CHECK(rt::assembleWeightStorage(specOf(t), set) == expectedStorage(t, in));
    // The interpreter form is the shared code itself: same values as the interpreter holds.
    std::vector<float> f;
    std::vector<int32_t> i;
    rt::assembleWeightValues(specOf(t), set, f, i);
    if (isFloat(t.dtype)) CHECK(std::memcmp(f.data(), in.tensor(t.id).data(), f.size() * 4) == 0);
    else CHECK(i == in.tensorInts(t.id));
  }
  // Spot checks of the semantics themselves (not just agreement).
  CHECK(in.tensor(5)[1] == 1.0f);       // tied head: 1 + 2^-9 rounds down in bf16
  CHECK(in.tensor(5)[2] == 1.0f);       // 1 + 2^-8: a tie, to even
  CHECK(in.tensor(5)[6] == 1.015625f);  // 1 + 3 * 2^-8: a tie, to even (up)
  CHECK(in.tensorInts(6)[4] == int32_t(int64_t(2147483648ll)));  // wraps
  CHECK(in.tensorInts(7)[1] == 1);
  CHECK(std::isnan(in.tensor(9)[1]));
}

TEST_CASE("runtime weights: the same-dtype fast path equals the conversion path on every bf16 and f16 pattern") {
  TempDir dir;
  std::vector<uint16_t> all(65536);
  for (uint32_t k = 0; k < 65536; ++k) all[k] = uint16_t(k);
  std::vector<float> asBf, asF16;
  for (uint16_t h : all) asBf.push_back(rt::bf16ToF32(h)), asF16.push_back(rt::f16ToF32(h));
  std::vector<uint32_t> f32bits;
  for (uint32_t k = 0; k < 65536; ++k) f32bits.push_back(k * 65537u + (k & 7));
  for (uint32_t b : {0x7f800001u, 0xff800001u, 0x7fbfffffu, 0x7fc00000u, 0x7f800000u, 0x00000001u, 0x80000000u}) f32bits.push_back(b);
  std::vector<double> f32asF64;
  for (uint32_t b : f32bits) f32asF64.push_back(double(bits(b)));
  const int64_t n32 = int64_t(f32bits.size());
  rt::writeSafetensors(dir / "p.safetensors", {{"bf", "BF16", {65536}, bytesOf(all)},
                                               {"bf_f32", "F32", {65536}, bytesOf(asBf)},
                                               {"hf", "F16", {65536}, bytesOf(all)},
                                               {"hf_f32", "F32", {65536}, bytesOf(asF16)},
                                               {"f", "F32", {n32}, bytesOf(f32bits)},
                                               {"f_f64", "F64", {n32}, bytesOf(f32asF64)}});
  auto set = rt::SafetensorsSet::open(dir / "p.safetensors");
  auto storage = [&](mk::DType t, int64_t n, const char* src) {
    return rt::assembleWeightStorage({"w", t, {n}, {}, {src}}, set);
  };
  CHECK(storage(mk::DType::BF16, 65536, "bf") == storage(mk::DType::BF16, 65536, "bf_f32"));
  CHECK(storage(mk::DType::F16, 65536, "hf") == storage(mk::DType::F16, 65536, "hf_f32"));
  CHECK(storage(mk::DType::F32, n32, "f") == storage(mk::DType::F32, n32, "f_f64"));
  // Non-NaN patterns are copied unchanged.
  auto bfs = storage(mk::DType::BF16, 65536, "bf");
  for (uint32_t k = 0; k < 65536; ++k) {
    uint16_t h;
    std::memcpy(&h, &bfs[2 * k], 2);
    if ((k & 0x7fff) <= 0x7f80) REQUIRE(h == k);
  }
}

TEST_CASE("runtime weights: random weights equal the interpreter's and the documented stream") {
  Megakernel mk;
  mk.graph.tensors = {weight(0, "layer[0].qkv", DType::BF16, {4, 8}, {Layout::Tiled, {2, 8}}, {"x"}),
                      weight(1, "final_norm", DType::F32, {8}, {}, {"y"}),
                      weight(2, "w16", DType::F16, {6, 8}, {Layout::ColMajor, {}}, {"z"}),
                      weight(3, "idx", DType::I32, {3}, {}, {"q"}),
                      weight(4, "pad", DType::BF16, {4, 8}, {Layout::Padded, {9}}, {"p"})};
  interp::Interpreter in(mk);
  in.randomWeights(42);
  for (const Tensor& t : mk.graph.tensors) {
    INFO(t.name);
    CHECK(rt::randomWeightStorage(specOf(t), 42) == expectedStorage(t, in));
    if (isFloat(t.dtype)) {
      std::vector<float> v = rt::randomWeightValues(specOf(t), 42), held = in.tensor(t.id);
      CHECK(std::memcmp(v.data(), held.data(), v.size() * 4) == 0);
    }
  }
  // The stream, restated from its documentation: splitmix64 seeded with seed ^ fnv1a(name), the
  // first output skipped, u = (next >> 11) * 2^-53; matrices U(-a, a) with a = 1/sqrt(last dim),
  // vectors 1 + U(-0.1, 0.1); rounded to the dtype.
  auto expect = [](const std::string& name, uint64_t seed, size_t n, bool gain, double a, DType t) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
    uint64_t s = seed ^ h;
    auto next = [&] {
      uint64_t z = (s += 0x9e3779b97f4a7c15ull);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      return z ^ (z >> 31);
    };
    next();
    std::vector<float> v;
    for (size_t k = 0; k < n; ++k) {
      double u = double(next() >> 11) * 0x1.0p-53;
      v.push_back(interp::roundTo(t, float((gain ? 1.0 : 0.0) + a * (2.0 * u - 1.0))));
    }
    return v;
  };
  CHECK(in.tensor(0) == expect("layer[0].qkv", 42, 32, false, 1 / std::sqrt(8.0), DType::BF16));
  CHECK(in.tensor(1) == expect("final_norm", 42, 8, true, 0.1, DType::F32));
  CHECK(in.tensor(2) == expect("w16", 42, 48, false, 1 / std::sqrt(8.0), DType::F16));
  CHECK(in.tensorInts(3) == std::vector<int32_t>{0, 0, 0});  // integer weights stay zero

  // A weight large enough that the runtime fills its rows on several threads: the same bytes.
  Megakernel big;
  big.graph.tensors = {weight(0, "layer[1].gate_up", DType::BF16, {2048, 4160}, {Layout::Tiled, {16, 64}}, {"x"})};
  interp::Interpreter bigIn(big);
  bigIn.randomWeights(42);
  CHECK(rt::randomWeightStorage(specOf(big.graph.tensors[0]), 42) == expectedStorage(big.graph.tensors[0], bigIn));
}

TEST_CASE("runtime weights: errors name the weight and the checkpoint tensor, as the interpreter's do") {
  TempDir dir;
  rt::writeSafetensors(dir / "w.safetensors", {{"norm", "F32", {3}, rt::encodeFloats({1, 2, 3}, "F32")},
                                               {"ids", "I32", {3}, std::vector<uint8_t>(12, 0)},
                                               {"a", "F32", {2, 2}, rt::encodeFloats({1, 2, 3, 4}, "F32")},
                                               {"b", "F32", {3, 2}, rt::encodeFloats({1, 2, 3, 4, 5, 6}, "F32")},
                                               {"f8", "F8_E4M3", {2}, {1, 2}}});
  auto set = rt::SafetensorsSet::open(dir / "w.safetensors");
  auto both = [&](Tensor t) {
    Megakernel mk;
    mk.graph.tensors = {t};
    std::string fromInterp = message([&] { interp::Interpreter(mk).loadWeights(set); });
    std::string fromRuntime = message([&] { rt::assembleWeightStorage(specOf(t), set); });
    CHECK(fromInterp == fromRuntime);
    return fromRuntime;
  };
  const std::string file = dir / "w.safetensors";
  CHECK(both(weight(0, "layer[0].n", DType::BF16, {4}, {}, {"norm"})) ==
        "weight 'layer[0].n' (bf16[4]): \"norm\" in " + file + " is F32[3]; expected shape [4]");
  CHECK(both(weight(0, "n", DType::BF16, {3}, {}, {"missing.weight"})) ==
        "weight 'n' (bf16[3]): the checkpoint has no tensor \"missing.weight\"");
  CHECK(both(weight(0, "lm_head", DType::BF16, {3}, {}, {"lm_head.weight"})) ==
        "weight 'lm_head' (bf16[3]): the checkpoint has no tensor \"lm_head.weight\"");
  CHECK(both(weight(0, "n", DType::BF16, {3}, {}, {"ids"})) ==
        "weight 'n' (bf16[3]): \"ids\" in " + file + " is I32[3], which does not convert to bf16");
  CHECK(both(weight(0, "n", DType::I32, {3}, {}, {"norm"})) ==
        "weight 'n' (i32[3]): \"norm\" in " + file + " is F32[3], which does not convert to i32");
  CHECK(both(weight(0, "n", DType::F32, {3}, {}, {})) == "weight 'n' (f32[3]) names no safetensors tensor");
  CHECK(both(weight(0, "ab", DType::F32, {6, 2}, {}, {"a", "b"})) ==
        "weight 'ab' (f32[6, 2]): its 2 sources hold 5 rows in all; expected 6");
  CHECK(both(weight(0, "ab", DType::F32, {6, 2}, {Layout::Interleave, {1}}, {"a", "b"})) ==
        "weight 'ab' (f32[6, 2]): \"a\" in " + file + " is F32[2, 2]; interleaving 2 sources needs 3 rows from each");
  CHECK(both(weight(0, "bb", DType::F32, {6, 2}, {Layout::Interleave, {2}}, {"b", "b"})) ==
        "weight 'bb' (f32[6, 2]): interleave(2) does not divide the 3 rows of each source");
  CHECK(both(weight(0, "ab", DType::F32, {5, 3}, {}, {"a", "b"})) ==
        "weight 'ab' (f32[5, 3]): \"a\" in " + file + " is F32[2, 2]; expected rows of shape [3]");
  CHECK(both(weight(0, "q", DType::I32, {2}, {}, {"f8"})).find("dtype F8_E4M3 cannot be converted to numbers") != std::string::npos);
  // A layout the kernel's addressing cannot hold one to one: the GPU side refuses to repack it.
  CHECK(message([&] { rt::randomWeightStorage({"s", mk::DType::BF16, {3, 8}, {rt::Layout::Swizzle, {128}}, {"x"}}, 1); })
            .find("weight 's' (bf16[3, 8]): cannot lay out as swizzle(128)") != std::string::npos);
}

TEST_CASE("runtime weights: the tiny Llama from its metadata equals the interpreter, file and random") {
  std::string diags;
  auto out = mk::testing::compileTinyLlama(false, &diags);
  REQUIRE_MESSAGE(out, diags);
  const rt::KernelMetadata meta = rt::parseMetadata(out->metadataJson, "tiny.meta.json");
  auto set = rt::SafetensorsSet::open(std::string(MK_SOURCE_DIR) + "/tests/data/tiny_llama.safetensors");
  interp::Interpreter fromFile(out->kernel()), fromSeed(out->kernel());
  fromFile.loadWeights(set);
  fromSeed.randomWeights(7);
  int weights = 0;
  for (const rt::TensorMeta& t : meta.tensors) {
    if (t.kind != rt::TensorMeta::Weight) continue;
    ++weights;
    INFO(t.name << " " << t.layout.str());
    const Tensor& ir = out->kernel().graph.tensors[size_t(meta.find(t.name))];
    const rt::WeightSpec spec{t.name, t.dtype, t.shape, t.layout, t.sources};
    CHECK(rt::assembleWeightStorage(spec, set) == expectedStorage(ir, fromFile));
    CHECK(rt::randomWeightStorage(spec, 7) == expectedStorage(ir, fromSeed));
    CHECK(rt::assembleWeightStorage(spec, set).size() == t.storageBytes());
  }
  CHECK(weights == 2 * 6 + 3);
}
