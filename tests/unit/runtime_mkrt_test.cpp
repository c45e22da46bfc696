// The runtime's C API (runtime/mkrt.h) without a GPU: the clear failure where there is no CUDA
// driver, and everything else against a fake driver over host memory
// (runtime/testing/fake_cuda.cpp, loaded through MKRT_CUDA_LIBRARY): arenas, weights at their
// offsets in their layouts, the launch parameters, inputs, outputs, the timeout record, faults,
// every file error, and a traced kernel's records (--trace).
#include <doctest/doctest.h>

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "abi/json.h"
#include "compiler/compile.h"
#include "runtime/layout.h"
#include "runtime/metadata.h"
#include "runtime/mkrt.h"
#include "runtime/mkrt.hpp"
#include "runtime/npy.h"
#include "runtime/safetensors.h"
#include "runtime/testing/fake_cuda.h"
#include "runtime/trace.h"
#include "runtime/weights.h"
#include "tiny_llama.h"

namespace rt = mk::runtime;
namespace fs = std::filesystem;

// Sanitizer builds link their runtimes dynamically: the ldd check is for plain builds.
#if defined(__SANITIZE_ADDRESS__)
#define MK_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MK_TEST_ASAN 1
#endif
#endif
#ifndef MK_TEST_ASAN
#define MK_TEST_ASAN 0
#endif

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("mk_runtime_mkrt_" + std::to_string(getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string operator/(const std::string& f) const { return (path / f).string(); }
};

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// Sets environment variables for a scope, restoring the previous values after.
struct Env {
  std::map<std::string, std::optional<std::string>> saved;
  void set(const std::string& k, const std::optional<std::string>& v) {
    if (!saved.count(k)) {
      const char* old = std::getenv(k.c_str());
      saved[k] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    if (v) setenv(k.c_str(), v->c_str(), 1);
    else unsetenv(k.c_str());
  }
  ~Env() {
    for (auto& [k, v] : saved) {
      if (v) setenv(k.c_str(), v->c_str(), 1);
      else unsetenv(k.c_str());
    }
  }
};

// The fake driver, built beside this binary's build tree: <build>/runtime/libmkrt_fake_cuda.so.
std::string fakeDriver() {
  fs::path exe = fs::read_symlink("/proc/self/exe");
  return (exe.parent_path().parent_path() / "runtime" / "libmkrt_fake_cuda.so").string();
}

FakeCudaStats fakeStats() {
  void* h = dlopen(fakeDriver().c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(h);
  auto f = reinterpret_cast<FakeCudaStatsFn>(dlsym(h, "fake_cuda_stats"));
  REQUIRE(reinterpret_cast<void*>(f) != nullptr);
  return f();
}
std::vector<uint64_t> fakeLastParams() {
  void* h = dlopen(fakeDriver().c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(h);
  auto f = reinterpret_cast<FakeCudaLastParamsFn>(dlsym(h, "fake_cuda_last_params"));
  REQUIRE(reinterpret_cast<void*>(f) != nullptr);
  std::vector<uint64_t> p(6);
  f(p.data());
  return p;
}

// A small kernel for the fake: weight w f32[4, 8] tiled(2, 4), weight v bf16[8], state kv,
// input tensor x, and outputs the fake "kernel" fills by copying (see the // FAKE lines).
const std::string kMeta = R"J({
  "format": "mkdsl-kernel-metadata", "version": 1, "program": "fake.mk", "config": "c", "target": "h200",
  "arch": "sm_90a", "entry": "mk_step", "grid": 132, "block": 128, "compute_threads": 128, "loader_warp": false,
  "ring_slots": 0, "ring_slot_bytes": 0, "dynamic_smem_bytes": 65536, "sync_counters": 5, "sync_bytes": 20,
  "error_words": 8,
  "params": ["weights", "state", "activations", "sync", "error", "inputs", "epoch", "timeout"],
  "arenas": {"weights": 512, "state": 256, "activations": 2048},
  "tensors": [
    {"name": "w", "kind": "weight", "dtype": "f32", "shape": [4, 8], "layout": "tiled(2, 4)", "arena": "weights", "offset": 0, "bytes": 128, "sources": ["w.src"]},
    {"name": "v", "kind": "weight", "dtype": "bf16", "shape": [8], "layout": "row_major", "arena": "weights", "offset": 256, "bytes": 16, "sources": ["v.src"]},
    {"name": "kv", "kind": "state", "dtype": "f32", "shape": [2, 4], "layout": "padded(5)", "arena": "state", "offset": 0, "bytes": 40},
    {"name": "x", "kind": "input", "dtype": "i32", "shape": [4], "layout": "row_major", "arena": "activations", "offset": 0, "bytes": 16},
    {"name": "out_w", "kind": "activation", "dtype": "f32", "shape": [32], "layout": "row_major", "arena": "activations", "offset": 256, "bytes": 128},
    {"name": "next", "kind": "activation", "dtype": "i32", "shape": [], "layout": "row_major", "arena": "activations", "offset": 512, "bytes": 4},
    {"name": "echo", "kind": "activation", "dtype": "i32", "shape": [2], "layout": "row_major", "arena": "activations", "offset": 768, "bytes": 8},
    {"name": "w_again", "kind": "activation", "dtype": "f32", "shape": [4, 8], "layout": "tiled(2, 4)", "arena": "activations", "offset": 1024, "bytes": 128}
  ],
  "inputs": [{"name": "token", "dtype": "i32", "tensor": null}, {"name": "pos", "dtype": "i32", "tensor": null},
             {"name": "x", "dtype": "i32", "tensor": "x"}, {"name": "scale", "dtype": "f32", "tensor": null}],
  "outputs": [{"name": "out_w", "tensor": "out_w"}, {"name": "next", "tensor": "next"}, {"name": "echo", "tensor": "echo"},
              {"name": "w_again", "tensor": "w_again"}, {"name": "x", "tensor": "x"}]
}
)J";

// The fake kernel's inputs (kMeta: token, pos, the tensor x i32[4], scale f32), given by name,
// then a step; the first failure's status (mkrt_last_error says why).
mkrt_status stepFake(mkrt_model* m, int32_t token, int32_t pos, std::vector<int32_t> x = {0, 0, 0, 0}, float scale = 0) {
  const int64_t xShape[1] = {int64_t(x.size())};
  mkrt_status s = mkrt_set_input(m, "token", MKRT_I32, 0, nullptr, &token, sizeof token);
  if (s == MKRT_OK) s = mkrt_set_input(m, "pos", MKRT_I32, 0, nullptr, &pos, sizeof pos);
  if (s == MKRT_OK) s = mkrt_set_input(m, "x", MKRT_I32, 1, xShape, x.data(), x.size() * sizeof(int32_t));
  if (s == MKRT_OK) s = mkrt_set_input(m, "scale", MKRT_F32, 0, nullptr, &scale, sizeof scale);
  return s == MKRT_OK ? mkrt_step(m) : s;
}
// The same through the C++ wrapper, which throws.
void stepFake(mkrt::Model& m, int32_t token, int32_t pos) {
  m.setInput("token", token);
  m.setInput("pos", pos);
  m.setInput("x", std::vector<int32_t>(4, 0), {4});
  m.setInput("scale", std::vector<float>{0}, {});
  m.step();
}
// A step of the tiny Llama (token, pos).
mkrt_status stepTiny(mkrt_model* m, int32_t token, int32_t pos) {
  mkrt_status s = mkrt_set_input(m, "token", MKRT_I32, 0, nullptr, &token, sizeof token);
  if (s == MKRT_OK) s = mkrt_set_input(m, "pos", MKRT_I32, 0, nullptr, &pos, sizeof pos);
  return s == MKRT_OK ? mkrt_step(m) : s;
}
void stepTiny(mkrt::Model& m, int32_t token, int32_t pos) {
  m.setInput("token", token);
  m.setInput("pos", pos);
  m.step();
}

std::string ptx(const std::string& extra = "", const std::string& target = "sm_90a") {
  return "//\n// Generated by a test\n//\n.version 8.0\n.target " + target +
         "\n.address_size 64\n\n.visible .entry mk_step(\n\t.param .u64 mk_step_param_0\n)\n{\n\tret;\n}\n"
         "// FAKE copy 0 0 2 256 128\n"
         "// FAKE copy 0 0 2 1024 128\n"
         "// FAKE input 0 2 512\n"
         "// FAKE input 1 2 768\n"
         "// FAKE input 3 2 772\n" +
         extra;
}

std::vector<float> wValues() {
  std::vector<float> v;
  for (int k = 0; k < 32; ++k) v.push_back(float(k) * 0.5f - 3.0f);
  return v;
}

void writeWeights(const std::string& path) {
  rt::writeSafetensors(path, {{"w.src", "F32", {4, 8}, rt::encodeFloats(wValues(), "F32")},
                              {"v.src", "F32", {8}, rt::encodeFloats({1, 2, 3, 4, 5, 6, 7, 8}, "F32")}});
}

struct Opened {
  mkrt_model* m = nullptr;
  std::string err;
  mkrt_status status = MKRT_OK;
  ~Opened() { mkrt_close(m); }
};
std::unique_ptr<Opened> openModel(const std::string& ptxPath, const std::string& metaPath, int device = 0) {
  auto o = std::make_unique<Opened>();
  char err[4096];
  std::memset(err, 'x', sizeof err);
  o->m = mkrt_open(ptxPath.c_str(), metaPath.c_str(), device, err, sizeof err);
  o->err = err;
  o->status = mkrt_open_status();
  return o;
}

bool haveRealDriver() {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!h) h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  return h != nullptr;
}

}  // namespace

TEST_CASE("mkrt: without a CUDA driver, mkrt_open fails with a clear message") {
  TempDir dir;
  write(dir / "k.ptx", ptx());
  write(dir / "k.meta.json", kMeta);
  Env env;
  env.set("MKRT_CUDA_LIBRARY", std::nullopt);
  if (haveRealDriver()) {
    MESSAGE("this machine has libcuda.so.1: the no-driver case is not testable here");
  } else {
    auto o = openModel(dir / "k.ptx", dir / "k.meta.json");
    CHECK(o->m == nullptr);
    CHECK(o->status == MKRT_ERR_DRIVER);
    CHECK(o->err.rfind("no CUDA driver (libcuda.so.1) on this machine", 0) == 0);
  }
  // A library that is not there, and (where the toolkit has one) the driver stub, whose every
  // entry point fails: all the symbols the runtime needs resolve in it.
  env.set("MKRT_CUDA_LIBRARY", dir / "nowhere.so");
  auto o = openModel(dir / "k.ptx", dir / "k.meta.json");
  CHECK(o->m == nullptr);
  CHECK(o->err.find("no CUDA driver (" + (dir / "nowhere.so") + ") on this machine") == 0);
  for (const char* stub : {"/usr/local/cuda/lib64/stubs/libcuda.so", "/usr/local/cuda/lib/stubs/libcuda.so"}) {
    if (!fs::exists(stub)) continue;
    env.set("MKRT_CUDA_LIBRARY", std::string(stub));
    auto s = openModel(dir / "k.ptx", dir / "k.meta.json");
    CHECK(s->m == nullptr);
    CHECK(s->status == MKRT_ERR_DRIVER);
    CHECK_MESSAGE(s->err.find("cuInit") != std::string::npos, s->err);  // loaded, then refused
    break;
  }
  // The C++ wrapper throws the same.
  env.set("MKRT_CUDA_LIBRARY", dir / "nowhere.so");
  try {
    mkrt::Model m(dir / "k.ptx", dir / "k.meta.json");
    FAIL("no error");
  } catch (const mkrt::Error& e) {
    CHECK(e.status() == MKRT_ERR_DRIVER);
    CHECK(std::string(e.what()).find("no CUDA driver") == 0);
  }
}

TEST_CASE("mkrt: file errors come first, before any driver") {
  TempDir dir;
  Env env;
  env.set("MKRT_CUDA_LIBRARY", dir / "nowhere.so");  // never reached
  write(dir / "k.ptx", ptx());
  write(dir / "k.meta.json", kMeta);
  auto err = [&](const std::string& p, const std::string& m) {
    auto o = openModel(p, m);
    CHECK(o->m == nullptr);
    CHECK(o->status == MKRT_ERR_FILE);
    return o->err;
  };
  CHECK(err(dir / "k.ptx", dir / "missing.meta.json").find("missing.meta.json: cannot open") != std::string::npos);
  CHECK(err(dir / "missing.ptx", dir / "k.meta.json").find("missing.ptx: cannot open") != std::string::npos);
  write(dir / "bad.meta.json", kMeta.substr(0, 200));
  CHECK(err(dir / "k.ptx", dir / "bad.meta.json").find("bad.meta.json: malformed JSON") != std::string::npos);
  write(dir / "empty.ptx", "");
  CHECK(err(dir / "empty.ptx", dir / "k.meta.json").find("empty.ptx: the file is empty") != std::string::npos);
  write(dir / "other.ptx", ".version 8.0\n.target sm_90a\n.visible .entry mk_step_other(\n)\n");
  CHECK(err(dir / "other.ptx", dir / "k.meta.json").find("no kernel `mk_step`") != std::string::npos);
  write(dir / "sm80.ptx", ptx("", "sm_80"));
  CHECK(err(dir / "sm80.ptx", dir / "k.meta.json").find("is built for sm_80 but") != std::string::npos);
  CHECK(err(dir.path.string(), dir / "k.meta.json").find("not a regular file") != std::string::npos);
  std::string amd = kMeta;
  amd.replace(amd.find("\"sm_90a\""), 8, "\"gfx942\"");
  write(dir / "amd.meta.json", amd);
  write(dir / "amd.hsaco", "\x7f" "ELF an AMDGPU code object");
  CHECK(err(dir / "amd.hsaco", dir / "amd.meta.json").find("amd.meta.json describes a kernel for gfx942 (AMDGPU)") !=
        std::string::npos);
  auto o = openModel(dir / "k.ptx", dir / "k.meta.json");  // only now the driver
  CHECK(o->status == MKRT_ERR_DRIVER);
  // NULLs.
  CHECK(mkrt_open(nullptr, nullptr, 0, nullptr, 0) == nullptr);
  CHECK(mkrt_open_status() == MKRT_ERR_ARGUMENT);
  mkrt_close(nullptr);
  CHECK(mkrt_step(nullptr) == MKRT_ERR_ARGUMENT);
  CHECK(mkrt_set_input(nullptr, "token", MKRT_I32, 0, nullptr, nullptr, 0) == MKRT_ERR_ARGUMENT);
  CHECK(mkrt_num_inputs(nullptr) == 0);
  CHECK(std::string(mkrt_last_error(nullptr)).size() > 0);
}

TEST_CASE("mkrt: a model on the fake driver: weights, launches, inputs, outputs") {
  REQUIRE_MESSAGE(fs::exists(fakeDriver()), fakeDriver());
  TempDir dir;
  Env env;
  env.set("MKRT_CUDA_LIBRARY", fakeDriver());
  write(dir / "k.ptx", ptx());
  write(dir / "k.meta.json", kMeta);
  writeWeights(dir / "w.safetensors");
  const FakeCudaStats before = fakeStats();
  {
    auto o = openModel(dir / "k.ptx", dir / "k.meta.json");
    REQUIRE_MESSAGE(o->m, o->err);
    mkrt_model* m = o->m;
    CHECK(o->err.empty());
    CHECK(std::string(mkrt_device_description(m)) == "device 0 (Fake GPU, sm_90, 132 SMs)");
    REQUIRE(mkrt_num_inputs(m) == 4);
    mkrt_tensor_info info{};
    REQUIRE(mkrt_input_info(m, 2, &info) == MKRT_OK);
    CHECK(std::string(info.name) == "x");
    CHECK(std::string(info.tensor) == "x");
    CHECK(info.rank == 1);
    CHECK(info.elements == 4);
    REQUIRE(mkrt_input_info(m, 0, &info) == MKRT_OK);
    CHECK(std::string(info.tensor).empty());
    CHECK(info.rank == 0);
    CHECK(mkrt_input_info(m, 4, &info) == MKRT_ERR_ARGUMENT);
    REQUIRE(mkrt_num_outputs(m) == 5);
    REQUIRE(mkrt_output_info(m, 3, &info) == MKRT_OK);
    CHECK(std::string(info.name) == "w_again");
    CHECK(info.dtype == MKRT_F32);
    CHECK(info.rank == 2);
    CHECK(info.shape[0] == 4);
    CHECK(info.shape[1] == 8);

    CHECK(mkrt_step(m) == MKRT_ERR_STATE);
    CHECK(std::string(mkrt_last_error(m)).find("no weights") != std::string::npos);

    CHECK(mkrt_load_weights(m, (dir / "w.safetensors").c_str()) == MKRT_OK);
    CHECK(std::string(mkrt_last_error(m)).empty());
    // Every input needs a value before the first step.
    CHECK(mkrt_step(m) == MKRT_ERR_ARGUMENT);
    CHECK(std::string(mkrt_last_error(m)) ==
          "input 'token' (i32) has no value: give it one with mkrt_set_input before mkrt_step");
    REQUIRE_MESSAGE(stepFake(m, 5, 0, {9, 8, 7, 6}, 3) == MKRT_OK, mkrt_last_error(m));
    FakeCudaStats s = fakeStats();
    CHECK(s.launches == before.launches + 1);
    CHECK(s.grid == 132);
    CHECK(s.block == 128);
    CHECK(s.smem == 65536);  // > 48 KiB: only launches because cuFuncSetAttribute raised the limit
    CHECK(s.epoch == 1);
    CHECK(s.timeout == 2000000000ull);
    CHECK(mkrt_last_step_ms(m) == 0.25);
    CHECK(mkrt_steps_run(m) == 1);

    // The weights sit at their offsets in their layouts: the kernel copied w's storage to out_w.
    std::vector<float> outW(32), again(32);
    REQUIRE(mkrt_read_output(m, "out_w", outW.data(), 32) == MKRT_OK);
    const rt::Layout tiled{rt::Layout::Tiled, {2, 4}};
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 8; ++j) {
        const int64_t c[2] = {i, j};
        CHECK(outW[size_t(rt::physicalIndex(tiled, {4, 8}, 4, c))] == wValues()[size_t(i * 8 + j)]);
      }
    // ... and an output in the same layout reads back in logical order.
    REQUIRE(mkrt_read_output(m, "w_again", again.data(), 32) == MKRT_OK);
    CHECK(again == wValues());
    // The bf16 weight v (converted from F32) right after w's buffer.
    const auto params = fakeLastParams();
    const uint8_t* weights = reinterpret_cast<const uint8_t*>(uintptr_t(params[0]));
    for (int k = 0; k < 8; ++k) {
      uint16_t h;
      std::memcpy(&h, weights + 256 + 2 * k, 2);
      CHECK(rt::bf16ToF32(h) == float(k + 1));
    }
    // Scalar inputs reach the kernel as u32 words (f32 as its bits); a tensor input is copied to
    // its buffer in logical order.
    int32_t next = -1;
    REQUIRE(mkrt_read_output_i32(m, "next", &next, 1) == MKRT_OK);
    CHECK(next == 5);
    std::vector<int32_t> echo(2), x(4);
    REQUIRE(mkrt_read_output_i32(m, "echo", echo.data(), 2) == MKRT_OK);
    CHECK(echo[0] == 0);
    CHECK(uint32_t(echo[1]) == std::bit_cast<uint32_t>(3.0f));
    REQUIRE(mkrt_read_output_i32(m, "x", x.data(), 4) == MKRT_OK);
    CHECK(x == std::vector<int32_t>{9, 8, 7, 6});
    float nextF = 0;
    REQUIRE(mkrt_read_output(m, "next", &nextF, 1) == MKRT_OK);
    CHECK(nextF == 5.0f);

    // Epochs count up; the timeout is passed through.
    CHECK(mkrt_set_timeout_ns(m, 0) == MKRT_ERR_ARGUMENT);
    CHECK(mkrt_set_timeout_ns(m, 500000000ull) == MKRT_OK);
    REQUIRE(stepFake(m, 7, 1, {-3, -3, -3, -3}, -1) == MKRT_OK);
    CHECK(fakeStats().epoch == 2);
    CHECK(fakeStats().timeout == 500000000ull);
    CHECK(mkrt_steps_run(m) == 2);
    REQUIRE(mkrt_read_output_i32(m, "x", x.data(), 4) == MKRT_OK);
    CHECK(x == std::vector<int32_t>{-3, -3, -3, -3});

    // Bad calls are errors with messages, and change nothing.
    auto setErr = [&](const char* name, mkrt_dtype dtype, int rank, const int64_t* shape, const void* data, size_t bytes) {
      CHECK(mkrt_set_input(m, name, dtype, rank, shape, data, bytes) == MKRT_ERR_ARGUMENT);
      return std::string(mkrt_last_error(m));
    };
    const int32_t one = 1;
    const int32_t four[4] = {1, 2, 3, 4};
    const int64_t shape4[1] = {4}, shape3[1] = {3};
    CHECK(setErr("nope", MKRT_I32, 0, nullptr, &one, 4) == "the step has no input 'nope' (its inputs: token, pos, x, scale)");
    CHECK(setErr(nullptr, MKRT_I32, 0, nullptr, &one, 4) == "mkrt_set_input: the name is NULL");
    CHECK(setErr("token", MKRT_F32, 0, nullptr, &one, 4) == "input 'token' is i32; got f32");
    CHECK(setErr("x", MKRT_I32, 0, nullptr, &one, 4) == "input 'x' is i32[4]; got i32");
    CHECK(setErr("x", MKRT_I32, 1, shape3, four, 12) == "input 'x' is i32[4]; got i32[3]");
    CHECK(setErr("x", MKRT_I32, 1, nullptr, four, 16) == "mkrt_set_input: rank 1 needs a shape");
    CHECK(setErr("x", MKRT_I32, 1, shape4, four, 12) == "input 'x' (i32[4]) takes 16 bytes; got 12");
    CHECK(setErr("token", MKRT_I32, 0, nullptr, nullptr, 4) == "mkrt_set_input: data is NULL");
    // 7 is inside the enum's range (a C caller's stray value) but no dtype.
    CHECK(setErr("token", mkrt_dtype(7), 0, nullptr, &one, 4) == "input 'token' is i32; got ?");
    // A refused value leaves the one set before: this step still sees x = -3.
    REQUIRE(mkrt_step(m) == MKRT_OK);
    REQUIRE(mkrt_read_output_i32(m, "x", x.data(), 4) == MKRT_OK);
    CHECK(x == std::vector<int32_t>{-3, -3, -3, -3});
    CHECK(mkrt_read_output(m, "out_w", outW.data(), 31) == MKRT_ERR_ARGUMENT);
    CHECK(std::string(mkrt_last_error(m)) == "output 'out_w' (f32[32]) has 32 elements; the buffer holds 31");
    CHECK(mkrt_read_output(m, "logits", outW.data(), 32) == MKRT_ERR_ARGUMENT);
    CHECK(std::string(mkrt_last_error(m)) == "the step has no output 'logits' (it has: out_w, next, echo, w_again, x)");
    CHECK(mkrt_read_output_i32(m, "out_w", x.data(), 32) == MKRT_ERR_ARGUMENT);
    CHECK(mkrt_steps_run(m) == 3);

    // Random weights through the API are the shared generator's, in the declared layout.
    REQUIRE(mkrt_random_weights(m, 7) == MKRT_OK);
    REQUIRE(mkrt_step(m) == MKRT_OK);
    REQUIRE(mkrt_read_output(m, "w_again", again.data(), 32) == MKRT_OK);
    CHECK(again == rt::randomWeightValues({"w", mk::DType::F32, {4, 8}, tiled, {"w.src"}}, 7));

    // Reset: state and counters zeroed, epoch 1 again.
    REQUIRE(mkrt_reset(m) == MKRT_OK);
    CHECK(mkrt_steps_run(m) == 0);
    REQUIRE(mkrt_step(m) == MKRT_OK);  // the inputs outlive a reset
    CHECK(fakeStats().epoch == 1);
  }
  const FakeCudaStats after = fakeStats();
  CHECK(after.badAccesses == before.badAccesses);  // no copy ever left its allocation
  CHECK(after.liveAllocations == before.liveAllocations);  // everything freed at close
}

TEST_CASE("mkrt: weight errors through the API name the tensor and the checkpoint name") {
  REQUIRE(fs::exists(fakeDriver()));
  TempDir dir;
  Env env;
  env.set("MKRT_CUDA_LIBRARY", fakeDriver());
  write(dir / "k.ptx", ptx());
  write(dir / "k.meta.json", kMeta);
  auto o = openModel(dir / "k.ptx", dir / "k.meta.json");
  REQUIRE_MESSAGE(o->m, o->err);
  mkrt_model* m = o->m;
  auto load = [&](std::vector<rt::TensorData> ts) {
    rt::writeSafetensors(dir / "w.safetensors", ts);
    return mkrt_load_weights(m, (dir / "w.safetensors").c_str());
  };
  const auto w = rt::encodeFloats(wValues(), "F32");
  const auto v = rt::encodeFloats({1, 2, 3, 4, 5, 6, 7, 8}, "F32");
  CHECK(load({{"w.src", "F32", {4, 8}, w}}) == MKRT_ERR_WEIGHTS);
  CHECK(std::string(mkrt_last_error(m)) == "weight 'v' (bf16[8]): the checkpoint has no tensor \"v.src\"");
  CHECK(load({{"w.src", "F32", {8, 4}, w}, {"v.src", "F32", {8}, v}}) == MKRT_ERR_WEIGHTS);
  CHECK(std::string(mkrt_last_error(m)).find("weight 'w' (f32[4, 8]): \"w.src\" in ") == 0);
  CHECK(std::string(mkrt_last_error(m)).find("is F32[8, 4]; expected shape [4, 8]") != std::string::npos);
  CHECK(load({{"w.src", "I32", {4, 8}, std::vector<uint8_t>(128, 0)}, {"v.src", "F32", {8}, v}}) == MKRT_ERR_WEIGHTS);
  CHECK(std::string(mkrt_last_error(m)).find("is I32[4, 8], which does not convert to f32") != std::string::npos);
  CHECK(stepFake(m, 1, 0) == MKRT_ERR_STATE);  // a failed load leaves no weights
  CHECK(mkrt_load_weights(m, (dir / "nope.safetensors").c_str()) == MKRT_ERR_FILE);
  CHECK(std::string(mkrt_last_error(m)).find("nope.safetensors: cannot open") != std::string::npos);
  write(dir / "trunc.safetensors", std::string("\x40\0\0\0\0\0\0\0{\"w.src\"", 17));
  CHECK(mkrt_load_weights(m, (dir / "trunc.safetensors").c_str()) == MKRT_ERR_FILE);
  CHECK(std::string(mkrt_last_error(m)).find("runs past the end of the file") != std::string::npos);
  CHECK(mkrt_load_weights(m, nullptr) == MKRT_ERR_ARGUMENT);
  CHECK(load({{"w.src", "F32", {4, 8}, w}, {"v.src", "F32", {8}, v}}) == MKRT_OK);
  CHECK(mkrt_step(m) == MKRT_OK);
}

TEST_CASE("mkrt: a wait timeout is reported from the kernel's record, then steps stop until reset") {
  REQUIRE(fs::exists(fakeDriver()));
  TempDir dir;
  Env env;
  env.set("MKRT_CUDA_LIBRARY", fakeDriver());
  write(dir / "k.ptx", ptx("// FAKE timeout_at 2\n"));
  write(dir / "k.meta.json", kMeta);
  mkrt::Model m(dir / "k.ptx", dir / "k.meta.json");
  m.randomWeights(1);
  stepFake(m, 1, 0);
  try {
    stepFake(m, 1, 1);
    FAIL("no timeout");
  } catch (const mkrt::Error& e) {
    CHECK(e.status() == MKRT_ERR_TIMEOUT);
    CHECK(std::string(e.what()) ==
          "step 2 (epoch 2): task 17 on SM 3 waited for counter 5 (expected 12, saw 11) past the timeout of 2000 ms; "
          "the kernel stopped (see the schedule: mkdsl build --emit=schedule)");
  }
  CHECK(m.stepsRun() == 1);
  try {
    stepFake(m, 1, 2);
    FAIL("stepped after a timeout");
  } catch (const mkrt::Error& e) {
    CHECK(e.status() == MKRT_ERR_STATE);
    CHECK(std::string(e.what()).find("an earlier step failed (a wait timed out); call mkrt_reset") == 0);
  }
  m.reset();
  stepFake(m, 1, 0);  // epoch 1: no timeout
  CHECK(m.stepsRun() == 1);
  CHECK(m.outputInts("next") == std::vector<int32_t>{1});
}

TEST_CASE("mkrt: a kernel fault, a rejected PTX, a GPU the kernel does not fit") {
  REQUIRE(fs::exists(fakeDriver()));
  TempDir dir;
  Env env;
  env.set("MKRT_CUDA_LIBRARY", fakeDriver());
  write(dir / "k.meta.json", kMeta);
  {
    write(dir / "fault.ptx", ptx("// FAKE fault_at 1\n"));
    mkrt::Model m(dir / "fault.ptx", dir / "k.meta.json");
    m.randomWeights(1);
    try {
      stepFake(m, 1, 0);
      FAIL("no fault");
    } catch (const mkrt::Error& e) {
      CHECK(e.status() == MKRT_ERR_KERNEL);
      CHECK(std::string(e.what()).find("step 1: the kernel failed on device 0 (Fake GPU, sm_90, 132 SMs): "
                                       "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)") == 0);
    }
    CHECK_THROWS_WITH_AS(m.reset(), doctest::Contains("close and reopen"), mkrt::Error);
  }
  write(dir / "reject.ptx", ptx("// FAKE_REJECT\n"));
  auto o = openModel(dir / "reject.ptx", dir / "k.meta.json");
  CHECK(o->m == nullptr);
  CHECK(o->status == MKRT_ERR_KERNEL);
  CHECK(o->err.find("the CUDA driver rejected " + (dir / "reject.ptx") + " on device 0 (Fake GPU, sm_90, 132 SMs): "
                    "CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)\nptxas application ptx input, line 7; fatal   : fake rejection") == 0);

  write(dir / "k.ptx", ptx());
  env.set("FAKE_CUDA_CC", "80");
  o = openModel(dir / "k.ptx", dir / "k.meta.json");
  CHECK(o->status == MKRT_ERR_KERNEL);
  CHECK(o->err == "the kernel is built for sm_90a (compute capability 9.0 only) but device 0 (Fake GPU, sm_80, 132 SMs) is "
                  "sm_80: rebuild it for this GPU (mkdsl build --gpu NAME --target ARCH)");
  env.set("FAKE_CUDA_CC", "100");  // sm_90a runs on 9.0 only
  CHECK(openModel(dir / "k.ptx", dir / "k.meta.json")->status == MKRT_ERR_KERNEL);
  // sm_80 code runs on newer GPUs.
  std::string meta80 = kMeta;
  meta80.replace(meta80.find("\"sm_90a\""), 8, "\"sm_80\"");
  write(dir / "k80.meta.json", meta80);
  write(dir / "k80.ptx", ptx("", "sm_80"));
  CHECK(openModel(dir / "k80.ptx", dir / "k80.meta.json")->m != nullptr);
  env.set("FAKE_CUDA_CC", "75");
  CHECK(openModel(dir / "k80.ptx", dir / "k80.meta.json")->err.find("compute capability 8.0 or newer") != std::string::npos);
  env.set("FAKE_CUDA_CC", std::nullopt);

  env.set("FAKE_CUDA_SMS", "100");
  o = openModel(dir / "k.ptx", dir / "k.meta.json");
  CHECK(o->status == MKRT_ERR_KERNEL);
  CHECK(o->err.find("the kernel's 132 blocks (128 threads, 65536 bytes of dynamic shared memory each) must all be "
                    "resident at once, but device 0 (Fake GPU, sm_90, 100 SMs) holds 1 per SM (100 in all)") == 0);
  env.set("FAKE_CUDA_BLOCKS_PER_SM", "2");
  CHECK(openModel(dir / "k.ptx", dir / "k.meta.json")->m != nullptr);
  env.set("FAKE_CUDA_SMS", std::nullopt);
  env.set("FAKE_CUDA_BLOCKS_PER_SM", std::nullopt);

  env.set("FAKE_CUDA_NO_DEVICE", "1");
  o = openModel(dir / "k.ptx", dir / "k.meta.json");
  CHECK(o->status == MKRT_ERR_DRIVER);
  CHECK(o->err == "no CUDA device on this machine: cuInit: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)");
  env.set("FAKE_CUDA_NO_DEVICE", std::nullopt);
  o = openModel(dir / "k.ptx", dir / "k.meta.json", 3);
  CHECK(o->status == MKRT_ERR_ARGUMENT);
  CHECK(o->err == "there is no CUDA device 3 (this machine has 1)");
}

TEST_CASE("mkrt: the tiny Llama's real PTX and metadata on the fake driver") {
  REQUIRE(fs::exists(fakeDriver()));
  std::string diags;
  auto out = mk::testing::compileTinyLlama(false, &diags);
  REQUIRE_MESSAGE(out, diags);
  TempDir dir;
  write(dir / "tiny.ptx", out->artifact.assembly);
  write(dir / "tiny.meta.json", out->metadataJson);
  Env env;
  env.set("MKRT_CUDA_LIBRARY", fakeDriver());
  const FakeCudaStats before = fakeStats();
  {
    mkrt::Model m(dir / "tiny.ptx", dir / "tiny.meta.json");
    const std::string weights = std::string(MK_SOURCE_DIR) + "/tests/data/tiny_llama.safetensors";
    m.loadWeights(weights);
    stepTiny(m, 1, 0);
    stepTiny(m, 2, 1);
    CHECK(m.output("logits").size() == 256);
    CHECK(m.outputInts("next").size() == 1);
    // The whole weights arena, as the "kernel" saw it: each weight's storage at its offset.
    const rt::KernelMetadata meta = rt::parseMetadata(out->metadataJson, "tiny.meta.json");
    const uint8_t* arena = reinterpret_cast<const uint8_t*>(uintptr_t(fakeLastParams()[0]));
    auto set = rt::SafetensorsSet::open(weights);
    for (const rt::TensorMeta& t : meta.tensors) {
      if (t.kind != rt::TensorMeta::Weight) continue;
      INFO(t.name);
      auto want = rt::assembleWeightStorage({t.name, t.dtype, t.shape, t.layout, t.sources}, set);
      CHECK(std::memcmp(arena + t.offset, want.data(), want.size()) == 0);
    }
  }
  const FakeCudaStats after = fakeStats();
  CHECK(after.launches == before.launches + 2);
  CHECK(after.grid == 132);
  CHECK(after.smem == unsigned(out->artifact.launch().dynamicSmemBytes));
  CHECK(after.badAccesses == before.badAccesses);
  CHECK(after.liveAllocations == before.liveAllocations);
}

namespace {

// <build>/tools/mkrt/mkrt-run, beside this binary's build tree.
std::string mkrtRun() {
  fs::path exe = fs::read_symlink("/proc/self/exe");
  return (exe.parent_path().parent_path() / "tools" / "mkrt" / "mkrt-run").string();
}

struct RunResult {
  int status = -1;
  std::string out, err;
};
RunResult runTool(const std::string& args, const TempDir& dir) {
  const std::string out = dir / "stdout.txt", err = dir / "stderr.txt";
  const std::string cmd = "'" + mkrtRun() + "' " + args + " >'" + out + "' 2>'" + err + "'";
  RunResult r;
  int raw = std::system(cmd.c_str());
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  auto slurp = [](const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  };
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

}  // namespace

TEST_CASE("mkrt-run: the standalone runner on the fake driver, its errors, and its dependencies") {
  REQUIRE_MESSAGE(fs::exists(mkrtRun()), "build the mkrt-run target first: " << mkrtRun());
  REQUIRE(fs::exists(fakeDriver()));
  auto out = mk::testing::compileTinyLlama();
  REQUIRE(out);
  TempDir dir;
  write(dir / "tiny.ptx", out->artifact.assembly);
  write(dir / "tiny.meta.json", out->metadataJson);
  Env env;
  env.set("MKRT_CUDA_LIBRARY", fakeDriver());
  const std::string ptxArg = "--ptx '" + (dir / "tiny.ptx") + "'";

  // Greedy: the ids on stdout (the fake kernel computes nothing: token 0 each time), timings on
  // stderr. The prompt goes through the program's prefill step (one chunk of 16), then 3 decode steps.
  RunResult r = runTool(ptxArg + " --random-weights 7 --tokens 1,2,3 --max-new 4", dir);
  CHECK(r.status == 0);
  CHECK(r.out == "0,0,0,0\n");
  CHECK(r.err.find("mkrt-run: device 0 (Fake GPU, sm_90, 132 SMs)") != std::string::npos);
  CHECK(r.err.find("mkrt-run: 4 steps (3 prompt tokens, 4 generated)") != std::string::npos);
  CHECK(r.err.find(" ms (the 3 prompt tokens in 1 prefill step of 16, host wall clock)") != std::string::npos);
  CHECK(r.err.find("mkrt-run: prefill: 0.250 ms in 1 step (GPU time per launch)") != std::string::npos);
  CHECK(r.err.find("per-token latency (3 decode steps, GPU time per launch): median 0.250 ms, p90 0.250 ms, p99 0.250 ms") !=
        std::string::npos);
  // --no-prefill: the prompt one token per decode step.
  r = runTool(ptxArg + " --random-weights 7 --tokens 1,2,3 --max-new 4 --no-prefill", dir);
  CHECK(r.status == 0);
  CHECK(r.err.find("mkrt-run: 6 steps (3 prompt tokens, 4 generated)") != std::string::npos);
  CHECK(r.err.find(" ms (the 3 prompt steps, host wall clock)") != std::string::npos);
  // Teacher forcing with a logits dump: [steps, vocab] float32, nothing on stdout.
  r = runTool(ptxArg + " --meta '" + (dir / "tiny.meta.json") + "' --weights '" + MK_SOURCE_DIR +
                  "/tests/data/tiny_llama.safetensors' --tokens 5,6,7,8 --max-new 0 --dump-logits '" + (dir / "l.npy") + "'",
              dir);
  CHECK(r.status == 0);
  CHECK(r.out.empty());
  auto logits = rt::readNpy(dir / "l.npy");
  CHECK(logits.shape == std::vector<int64_t>{4, 256});
  // Against reference logits: the same (zeros) pass, others fail with the error named.
  r = runTool(ptxArg + " --random-weights 1 --tokens 5,6,7,8 --max-new 0 --compare-logits '" + (dir / "l.npy") + "'", dir);
  CHECK(r.status == 0);
  CHECK(r.err.find("worst relative L2 error 0 (step 0), argmax equal in 4 of 4 steps: within") != std::string::npos);
  rt::writeNpy(dir / "ones.npy", 4, 256, std::vector<float>(4 * 256, 1.0f));
  r = runTool(ptxArg + " --random-weights 1 --tokens 5,6,7,8 --max-new 0 --compare-logits '" + (dir / "ones.npy") + "'", dir);
  CHECK(r.status == 1);
  CHECK(r.err.find("worst relative L2 error 1 (step 0)") != std::string::npos);
  CHECK(r.err.find("exceeds the tolerance 0.01") != std::string::npos);
  r = runTool(ptxArg + " --random-weights 1 --tokens 5,6,7,8,9 --max-new 0 --compare-logits '" + (dir / "ones.npy") + "'", dir);
  CHECK(r.status == 1);
  CHECK(r.err.find("holds logits of shape [4, 256]; expected at least [5, 256]") != std::string::npos);
  // Errors: one line, exit status 1.
  r = runTool(ptxArg + " --random-weights 7 --tokens 1,256", dir);
  CHECK(r.status == 1);
  CHECK(r.err == "mkrt-run: error: token id 256 is out of range: the vocabulary has 256 entries\n");
  r = runTool(ptxArg + " --tokens 1", dir);
  CHECK(r.status == 1);
  CHECK(r.err.find("give exactly one of --weights PATH and --random-weights SEED") != std::string::npos);
  r = runTool(ptxArg + " --random-weights 7 --tokens 1 --timeout-ms 0", dir);
  CHECK(r.status == 1);
  r = runTool("--ptx '" + (dir / "missing.ptx") + "' --random-weights 7 --tokens 1", dir);
  CHECK(r.status == 1);
  CHECK(r.err.find("missing.meta.json: cannot open") != std::string::npos);
  env.set("MKRT_CUDA_LIBRARY", dir / "nowhere.so");
  r = runTool(ptxArg + " --random-weights 7 --tokens 1", dir);
  CHECK(r.status == 1);
  CHECK(r.err.find("mkrt-run: error: no CUDA driver") == 0);
  r = runTool("--help", dir);
  CHECK(r.status == 0);
  CHECK(r.out.find("usage: mkrt-run") == 0);

#if !MK_TEST_ASAN
  // It is copied to GPU machines without the build's libraries: libc (and libm) only.
  FILE* p = popen(("ldd '" + mkrtRun() + "' 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  char line[512];
  int libs = 0;
  while (fgets(line, sizeof line, p)) {
    std::string l = line;
    if (l.find("linux-vdso") != std::string::npos || l.find("ld-linux") != std::string::npos) continue;
    ++libs;
    CHECK_MESSAGE((l.find("libc.so") != std::string::npos || l.find("libm.so") != std::string::npos), l);
  }
  pclose(p);
  CHECK(libs >= 1);
#endif
}

namespace {

// The repository's `file` compiled in process (as `mkdsl run --device cuda` does), named `label`
// in its diagnostics and declarations.
mk::CompileOutput compileFile(const std::string& file, const std::string& label) {
  std::ifstream src(std::string(MK_SOURCE_DIR) + "/" + file, std::ios::binary);
  std::ostringstream text;
  text << src.rdbuf();
  mk::CompileOptions opts;
  opts.check.stdlibDir = MK_STDLIB_DIR;
  std::string diags;
  auto out = mk::compileSource(label, text.str(), opts, &diags);
  REQUIRE_MESSAGE(out, diags);
  return std::move(*out);
}
mk::CompileOutput compileTiny(const std::string& label = "llama_tiny.mk") { return compileFile("examples/llama_tiny.mk", label); }

// Where examples/llama_tiny.mk declares `KIND NAME` ("weight down"), as "LABEL:LINE:COL" (the
// column of the name), the way the metadata's declared_at says it.
std::string tinyDeclaration(const std::string& label, const std::string& kind, const std::string& name) {
  std::ifstream src(std::string(MK_SOURCE_DIR) + "/examples/llama_tiny.mk", std::ios::binary);
  std::string line;
  for (int n = 1; std::getline(src, line); ++n)
    if (size_t c = line.find(kind + " " + name + ":"); c != std::string::npos)
      return label + ":" + std::to_string(n) + ":" + std::to_string(c + kind.size() + 2);
  FAIL("no declaration of " << name);
  return "";
}

// tests/data's tiny checkpoint with `edit` applied to its tensors, written to `path`.
template <typename F>
void writeTinyCheckpoint(const std::string& path, F&& edit) {
  auto f = rt::SafetensorsFile::open(std::string(MK_SOURCE_DIR) + "/tests/data/tiny_llama.safetensors");
  std::vector<rt::TensorData> ts;
  for (const rt::TensorInfo& t : f.tensors()) {
    auto b = f.bytes(t);
    ts.push_back({t.name, t.dtype, t.shape, std::vector<uint8_t>(b.begin(), b.end())});
  }
  edit(ts);
  rt::writeSafetensors(path, ts);
}

rt::TensorData* tensorNamed(std::vector<rt::TensorData>& ts, const std::string& name) {
  for (auto& t : ts)
    if (t.name == name) return &t;
  FAIL("no tensor " << name);
  return nullptr;
}

}  // namespace

TEST_CASE("mkrt: in-memory open, config values, input bounds and declarations (the tiny Llama, fake driver)") {
  REQUIRE(fs::exists(fakeDriver()));
  const mk::CompileOutput out = compileTiny();
  const std::string& ptxText = out.artifact.assembly;
  const std::string& meta = out.metadataJson;
  Env env;
  env.set("MKRT_CUDA_LIBRARY", fakeDriver());
  const FakeCudaStats before = fakeStats();
  {
    char err[1024] = "x";
    mkrt_model* m = mkrt_open_data(ptxText.data(), ptxText.size(), meta.data(), meta.size(), 0, err, sizeof err);
    REQUIRE_MESSAGE(m, err);
    CHECK(std::string(err).empty());
    CHECK(std::string(mkrt_config_name(m)) == "tiny");
    CHECK(mkrt_num_config_values(m) >= 10);
    double v = 0;
    CHECK(mkrt_config_value(m, "max_seq", &v) == MKRT_OK);
    CHECK(v == 64);
    CHECK(mkrt_config_value(m, "vocab", &v) == MKRT_OK);
    CHECK(v == 256);
    CHECK(mkrt_config_value(m, "rms_eps", &v) == MKRT_OK);
    CHECK(v == doctest::Approx(1e-5));
    CHECK(mkrt_config_value(m, "nope", &v) == MKRT_ERR_ARGUMENT);
    const char* name = nullptr;
    CHECK(mkrt_config_value_at(m, 0, &name, &v) == MKRT_OK);
    CHECK(name != nullptr);
    CHECK(mkrt_config_value_at(m, 1000, &name, &v) == MKRT_ERR_ARGUMENT);
    int64_t bound = 0;
    CHECK(mkrt_input_bound(m, 0, &bound) == MKRT_OK);
    CHECK(bound == 256);
    CHECK(mkrt_input_bound(m, 1, &bound) == MKRT_OK);
    CHECK(bound == 64);
    CHECK(mkrt_input_bound(m, 2, &bound) == MKRT_ERR_ARGUMENT);
    CHECK(std::string(mkrt_tensor_declared_at(m, "embed_tokens")) == tinyDeclaration("llama_tiny.mk", "weight", "embed_tokens"));
    CHECK(std::string(mkrt_tensor_declared_at(m, "layer[0].k_cache")) == tinyDeclaration("llama_tiny.mk", "state", "k_cache"));
    CHECK(std::string(mkrt_tensor_declared_at(m, "nope")).empty());

    CHECK(mkrt_check_input(m, 1, 63) == MKRT_OK);
    CHECK(mkrt_check_input(m, 1, 64) == MKRT_ERR_ARGUMENT);
    CHECK(std::string(mkrt_last_error(m)) == "pos 64 is past the KV cache: positions 0 .. 63 (max_seq = 64)");
    CHECK(mkrt_check_input(m, 0, 256) == MKRT_ERR_ARGUMENT);
    CHECK(std::string(mkrt_last_error(m)) == "token 256 is past the rows of 'embed_tokens': ids 0 .. 255 (vocab = 256)");
    CHECK(mkrt_check_input(m, 7, 0) == MKRT_ERR_ARGUMENT);

    // The compiler found the roles: the token indexes the embedding, the position the caches.
    mkrt_tensor_info info{};
    REQUIRE(mkrt_input_info(m, 0, &info) == MKRT_OK);
    CHECK(info.role == MKRT_ROLE_TOKEN);
    REQUIRE(mkrt_input_info(m, 1, &info) == MKRT_OK);
    CHECK(info.role == MKRT_ROLE_POSITION);
    REQUIRE(mkrt_output_info(m, 0, &info) == MKRT_OK);
    CHECK(std::string(info.name) == "logits");
    CHECK(info.role == MKRT_ROLE_LOGITS);
    REQUIRE(mkrt_output_info(m, 1, &info) == MKRT_OK);
    CHECK(info.role == MKRT_ROLE_NEXT_TOKEN);

    // mkrt_set_input refuses out-of-bound inputs, so nothing is launched with them.
    REQUIRE(mkrt_random_weights(m, 3) == MKRT_OK);
    const int launches = fakeStats().launches;
    CHECK(stepTiny(m, 1, 64) == MKRT_ERR_ARGUMENT);
    CHECK(std::string(mkrt_last_error(m)) == "pos 64 is past the KV cache: positions 0 .. 63 (max_seq = 64)");
    CHECK(stepTiny(m, 1, -1) == MKRT_ERR_ARGUMENT);
    CHECK(std::string(mkrt_last_error(m)) == "pos -1 is outside the KV cache: positions 0 .. 63 (max_seq = 64)");
    CHECK(stepTiny(m, 256, 0) == MKRT_ERR_ARGUMENT);
    CHECK(std::string(mkrt_last_error(m)) == "token 256 is past the rows of 'embed_tokens': ids 0 .. 255 (vocab = 256)");
    CHECK(fakeStats().launches == launches);
    CHECK(mkrt_steps_run(m) == 0);
    CHECK(stepTiny(m, 255, 63) == MKRT_OK);  // a refused value does not break the model
    CHECK(fakeStats().launches == launches + 1);
    mkrt_close(m);
  }
  // The C++ wrapper.
  {
    mkrt::Model m = mkrt::Model::fromData(ptxText, meta);
    CHECK(m.inputBound(1) == 64);
    CHECK(m.inputProblem(1, 64) == "pos 64 is past the KV cache: positions 0 .. 63 (max_seq = 64)");
    CHECK(m.inputProblem(1, 3).empty());
    CHECK(m.configName() == "tiny");
    CHECK(m.configValue("heads", -1) == 4);
    CHECK(m.configValue("nope", -1) == -1);
    CHECK(m.declaredAt("lm_head") == tinyDeclaration("llama_tiny.mk", "weight", "lm_head"));
    m.loadWeights(std::string(MK_SOURCE_DIR) + "/tests/data/tiny_llama.safetensors");
    stepTiny(m, 1, 0);
    CHECK(m.output("logits").size() == 256);
  }
  // In-memory errors.
  auto openErr = [&](const char* p, size_t pn, const char* j, size_t jn, mkrt_status want) {
    char err[1024];
    mkrt_model* m = mkrt_open_data(p, pn, j, jn, 0, err, sizeof err);
    CHECK(m == nullptr);
    CHECK(mkrt_open_status() == want);
    mkrt_close(m);
    return std::string(err);
  };
  CHECK(openErr(ptxText.data(), ptxText.size(), meta.data(), 100, MKRT_ERR_FILE).find("the in-memory metadata: malformed JSON at byte") == 0);
  CHECK(openErr("", 0, meta.data(), meta.size(), MKRT_ERR_FILE) == "the in-memory PTX is empty");
  CHECK(openErr(nullptr, 5, meta.data(), meta.size(), MKRT_ERR_ARGUMENT).find("must not be NULL") != std::string::npos);
  const std::string sm80 = ".version 8.0\n.target sm_80\n.visible .entry mk_step(\n)\n{\n}\n";
  CHECK(openErr(sm80.data(), sm80.size(), meta.data(), meta.size(), MKRT_ERR_FILE) ==
        "the in-memory PTX is built for sm_80 but the in-memory metadata says sm_90a: the two files are from different builds");
  // A PTX for another GPU: the fake driver reports compute capability 8.0.
  env.set("FAKE_CUDA_CC", "80");
  CHECK(openErr(ptxText.data(), ptxText.size(), meta.data(), meta.size(), MKRT_ERR_KERNEL) ==
        "the kernel is built for sm_90a (compute capability 9.0 only) but device 0 (Fake GPU, sm_80, 132 SMs) is sm_80: "
        "rebuild it for this GPU (mkdsl build --gpu NAME --target ARCH)");
  env.set("FAKE_CUDA_CC", std::nullopt);
  // A trailing NUL (a C string's length + 1) is fine.
  {
    std::string withNul = ptxText + '\0';
    char err[1024];
    mkrt_model* m = mkrt_open_data(withNul.data(), withNul.size(), meta.data(), meta.size(), 0, err, sizeof err);
    CHECK_MESSAGE(m != nullptr, err);
    mkrt_close(m);
  }
  const FakeCudaStats after = fakeStats();
  CHECK(after.badAccesses == before.badAccesses);
  CHECK(after.liveAllocations == before.liveAllocations);
}

TEST_CASE("mkrt: a prefill's tokens are checked one by one, and pos0 leaves room for the chunk (fake driver)") {
  REQUIRE(fs::exists(fakeDriver()));
  const mk::CompileOutput out = compileTiny();
  Env env;
  env.set("MKRT_CUDA_LIBRARY", fakeDriver());
  mkrt::Model m = mkrt::Model::fromData(out.artifact.assembly, out.metadataJson);
  m.selectStep("prefill");
  std::vector<int32_t> tokens(16, 3);
  m.setInput("tokens", tokens, {16});
  tokens[5] = 256;
  auto problem = [&](const std::function<void()>& f) {
    try {
      f();
    } catch (const mkrt::Error& e) {
      CHECK(e.status() == MKRT_ERR_ARGUMENT);
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(problem([&] { m.setInput("tokens", tokens, {16}); }) ==
        "element 5 of 'tokens': tokens 256 is past the rows of 'embed_tokens': ids 0 .. 255 (vocab = 256)");
  tokens[5] = -1;
  CHECK(problem([&] { m.setInput("tokens", tokens, {16}); }).find("element 5 of 'tokens': tokens -1 is outside") == 0);
  m.setInput("pos0", 48);  // positions 48 .. 63: the last chunk that fits the cache
  CHECK(problem([&] { m.setInput("pos0", 49); }) == "pos0 49 is past the positions the step may start at: 0 .. 48 (it writes 16 rows of the KV cache from there; "
        "max_seq = 64)");
}

TEST_CASE("mkrt: probing the driver and the device") {
  TempDir dir;
  Env env;
  char err[1024];
  env.set("MKRT_CUDA_LIBRARY", dir / "nowhere.so");
  CHECK(mkrt_probe_device(0, err, sizeof err) == MKRT_ERR_DRIVER);
  CHECK(std::string(err).find("no CUDA driver (" + (dir / "nowhere.so") + ") on this machine") == 0);
  CHECK_THROWS_WITH_AS(mkrt::Model::probeDevice(0), doctest::Contains("no CUDA driver"), mkrt::Error);
  if (!haveRealDriver()) {
    env.set("MKRT_CUDA_LIBRARY", std::nullopt);
    CHECK(mkrt_probe_device(0, err, sizeof err) == MKRT_ERR_DRIVER);
    CHECK(std::string(err).find("no CUDA driver (libcuda.so.1) on this machine") == 0);
  }
  REQUIRE(fs::exists(fakeDriver()));
  env.set("MKRT_CUDA_LIBRARY", fakeDriver());
  CHECK(mkrt_probe_device(0, err, sizeof err) == MKRT_OK);
  CHECK(std::string(err).empty());
  CHECK(mkrt_probe_device(3, err, sizeof err) == MKRT_ERR_ARGUMENT);
  CHECK(std::string(err) == "there is no CUDA device 3 (this machine has 1)");
  CHECK(mkrt_probe_device(-1, err, sizeof err) == MKRT_ERR_ARGUMENT);
  env.set("FAKE_CUDA_NO_DEVICE", "1");
  CHECK(mkrt_probe_device(0, err, sizeof err) == MKRT_ERR_DRIVER);
  CHECK(std::string(err).find("no CUDA device on this machine") == 0);
}

TEST_CASE("mkrt: weight errors name the tensor, its safetensors name and the .mk line that declares it") {
  REQUIRE(fs::exists(fakeDriver()));
  const mk::CompileOutput out = compileTiny();
  TempDir dir;
  Env env;
  env.set("MKRT_CUDA_LIBRARY", fakeDriver());
  mkrt::Model m = mkrt::Model::fromData(out.artifact.assembly, out.metadataJson);
  const std::string path = dir / "w.safetensors";
  auto load = [&](auto edit) {
    writeTinyCheckpoint(path, edit);
    try {
      m.loadWeights(path);
    } catch (const mkrt::Error& e) {
      return std::make_pair(e.status(), std::string(e.what()));
    }
    return std::make_pair(MKRT_OK, std::string());
  };
  const std::string down = tinyDeclaration("llama_tiny.mk", "weight", "down");
  auto [s1, shape] = load([](std::vector<rt::TensorData>& ts) {
    rt::TensorData* t = tensorNamed(ts, "model.layers.1.mlp.down_proj.weight");
    t->shape = {64, 64};
    t->data.resize(64 * 64 * 2);
  });
  CHECK(s1 == MKRT_ERR_WEIGHTS);
  CHECK(shape == "weight 'layer[1].down' (bf16[64, 128]) declared at " + down +
                     ": \"model.layers.1.mlp.down_proj.weight\" in " + path + " is BF16[64, 64]; expected shape [64, 128]");
  auto [s2, missing] = load([](std::vector<rt::TensorData>& ts) {
    ts.erase(ts.begin() + (tensorNamed(ts, "model.layers.0.self_attn.k_proj.weight") - ts.data()));
  });
  CHECK(s2 == MKRT_ERR_WEIGHTS);
  CHECK(missing == "weight 'layer[0].qkv' (bf16[128, 64]) declared at " + tinyDeclaration("llama_tiny.mk", "weight", "qkv") +
                       ": the checkpoint has no tensor \"model.layers.0.self_attn.k_proj.weight\"");
  auto [s3, dtype] = load([](std::vector<rt::TensorData>& ts) {
    rt::TensorData* t = tensorNamed(ts, "model.norm.weight");
    t->dtype = "I16";
  });
  CHECK(s3 == MKRT_ERR_WEIGHTS);
  CHECK(dtype == "weight 'final_norm' (bf16[64]) declared at " + tinyDeclaration("llama_tiny.mk", "weight", "final_norm") +
                     ": \"model.norm.weight\" in " + path + " is I16[64], which does not convert to bf16");
  auto [s4, ok] = load([](std::vector<rt::TensorData>&) {});
  CHECK(s4 == MKRT_OK);
  CHECK(ok.empty());
}

TEST_CASE("mkrt-run: every bad input is one clear error line and exit status 1") {
  REQUIRE_MESSAGE(fs::exists(mkrtRun()), "build the mkrt-run target first: " << mkrtRun());
  REQUIRE(fs::exists(fakeDriver()));
  const mk::CompileOutput out = compileTiny("tiny.mk");
  TempDir dir;
  write(dir / "tiny.ptx", out.artifact.assembly);
  write(dir / "tiny.meta.json", out.metadataJson);
  Env env;
  env.set("MKRT_CUDA_LIBRARY", fakeDriver());
  const std::string ptxArg = "--ptx '" + (dir / "tiny.ptx") + "'";
  auto run = [&](const std::string& args) { return runTool(ptxArg + " " + args, dir); };

  // The sequence against the KV cache (max_seq = 64), before any weight is loaded.
  RunResult r = run("--random-weights 1 --tokens 1,2,3 --max-new 62");
  CHECK(r.status == 0);
  r = run("--random-weights 1 --tokens 1,2,3 --max-new 63");
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "mkrt-run: error: the sequence does not fit: 3 prompt tokens + 63 new need positions 0 .. 64, and pos 64 is past the "
        "KV cache: positions 0 .. 63 (max_seq = 64); with this prompt --max-new can be at most 62\n");
  std::string tokens65 = "0";
  for (int i = 1; i < 65; ++i) tokens65 += "," + std::to_string(i);
  r = run("--weights '" + (dir / "nope.safetensors") + "' --tokens " + tokens65 + " --max-new 0");
  CHECK(r.status == 1);
  CHECK(r.err.find("teacher forcing 65 tokens needs positions 0 .. 64, and pos 64 is past the KV cache") != std::string::npos);
  CHECK(r.err.find("at most 64 tokens fit") != std::string::npos);

  // Weights files: missing, truncated, a malformed header.
  r = run("--weights '" + (dir / "nope.safetensors") + "' --tokens 1");
  CHECK(r.status == 1);
  CHECK(r.err.find("mkrt-run: error: " + (dir / "nope.safetensors") + ": cannot open") == 0);
  {
    std::ifstream in(std::string(MK_SOURCE_DIR) + "/tests/data/tiny_llama.safetensors", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    write(dir / "cut.safetensors", bytes.substr(0, bytes.size() / 2));
    write(dir / "head.safetensors", bytes.substr(0, 40));
  }
  r = run("--weights '" + (dir / "cut.safetensors") + "' --tokens 1");
  CHECK(r.status == 1);
  CHECK_MESSAGE(r.err.find("is past the data section") != std::string::npos, r.err);
  r = run("--weights '" + (dir / "head.safetensors") + "' --tokens 1");
  CHECK(r.status == 1);
  CHECK_MESSAGE(r.err.find("runs past the end of the file") != std::string::npos, r.err);
  write(dir / "json.safetensors", std::string("\x0c\0\0\0\0\0\0\0{\"a\": nope} ", 20));
  r = run("--weights '" + (dir / "json.safetensors") + "' --tokens 1");
  CHECK(r.status == 1);
  CHECK_MESSAGE(r.err.find("json.safetensors: malformed JSON header at byte") != std::string::npos, r.err);

  // A tensor missing, of the wrong dtype, of the wrong shape: named with its .mk line.
  writeTinyCheckpoint(dir / "shape.safetensors", [](std::vector<rt::TensorData>& ts) {
    rt::TensorData* t = tensorNamed(ts, "model.embed_tokens.weight");
    t->shape = {128, 64};
    t->data.resize(128 * 64 * 2);
  });
  r = run("--weights '" + (dir / "shape.safetensors") + "' --tokens 1");
  CHECK(r.status == 1);
  CHECK(r.err == "mkrt-run: error: weight 'embed_tokens' (bf16[256, 64]) declared at " +
                     tinyDeclaration("tiny.mk", "weight", "embed_tokens") + ": \"model.embed_tokens.weight\" in " +
                     (dir / "shape.safetensors") + " is BF16[128, 64]; expected shape [256, 64]\n");
  writeTinyCheckpoint(dir / "dtype.safetensors", [](std::vector<rt::TensorData>& ts) {
    tensorNamed(ts, "model.layers.1.input_layernorm.weight")->dtype = "I16";
  });
  r = run("--weights '" + (dir / "dtype.safetensors") + "' --tokens 1");
  CHECK(r.status == 1);
  CHECK(r.err.find("weight 'layer[1].input_norm' (bf16[64]) declared at " + tinyDeclaration("tiny.mk", "weight", "input_norm") +
                   ": \"model.layers.1.input_layernorm.weight\"") != std::string::npos);
  CHECK(r.err.find("is I16[64], which does not convert to bf16") != std::string::npos);
  writeTinyCheckpoint(dir / "missing.safetensors", [](std::vector<rt::TensorData>& ts) {
    ts.erase(ts.begin() + (tensorNamed(ts, "model.layers.1.mlp.up_proj.weight") - ts.data()));
  });
  r = run("--weights '" + (dir / "missing.safetensors") + "' --tokens 1");
  CHECK(r.status == 1);
  CHECK(r.err == "mkrt-run: error: weight 'layer[1].gate_up' (bf16[256, 64]) declared at " +
                     tinyDeclaration("tiny.mk", "weight", "gate_up") +
                     ": the checkpoint has no tensor \"model.layers.1.mlp.up_proj.weight\"\n");

  // A folder of shards with an index, as Hugging Face ships them.
  {
    auto f = rt::SafetensorsFile::open(std::string(MK_SOURCE_DIR) + "/tests/data/tiny_llama.safetensors");
    std::vector<rt::TensorData> a, b;
    std::string map;
    for (const rt::TensorInfo& t : f.tensors()) {
      auto bytes = f.bytes(t);
      const bool first = t.name.find("layers.1.") == std::string::npos;
      (first ? a : b).push_back({t.name, t.dtype, t.shape, std::vector<uint8_t>(bytes.begin(), bytes.end())});
      map += std::string(map.empty() ? "" : ", ") + "\"" + t.name + "\": \"" + (first ? "m-1.safetensors" : "m-2.safetensors") + "\"";
    }
    fs::create_directories(dir / "sharded");
    rt::writeSafetensors(dir / "sharded/m-1.safetensors", a);
    rt::writeSafetensors(dir / "sharded/m-2.safetensors", b);
    write(dir / "sharded/model.safetensors.index.json", "{\"metadata\": {}, \"weight_map\": {" + map + "}}");
  }
  r = run("--weights '" + (dir / "sharded") + "' --tokens 1,2 --max-new 2");
  CHECK_MESSAGE(r.status == 0, r.err);
  CHECK(r.out == "0,0\n");

  // A kernel for another GPU: the fake reports compute capability 8.0.
  env.set("FAKE_CUDA_CC", "80");
  r = run("--random-weights 1 --tokens 1");
  CHECK(r.status == 1);
  CHECK(r.err == "mkrt-run: error: the kernel is built for sm_90a (compute capability 9.0 only) but device 0 (Fake GPU, "
                 "sm_80, 132 SMs) is sm_80: rebuild it for this GPU (mkdsl build --gpu NAME --target ARCH)\n");
  env.set("FAKE_CUDA_CC", std::nullopt);

  // No driver at all.
  if (!haveRealDriver()) {
    env.set("MKRT_CUDA_LIBRARY", std::nullopt);
    r = run("--random-weights 1 --tokens 1");
    CHECK(r.status == 1);
    CHECK(r.err.find("mkrt-run: error: no CUDA driver (libcuda.so.1) on this machine") == 0);
  }
}

namespace {

// The fake driver's view of the trace parameter: its pointer at the last launch, and the size of
// the allocation at a pointer (0: none starts there).
uint64_t fakeLastTrace() {
  void* h = dlopen(fakeDriver().c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(h);
  auto f = reinterpret_cast<FakeCudaLastTraceFn>(dlsym(h, "fake_cuda_last_trace"));
  REQUIRE(reinterpret_cast<void*>(f) != nullptr);
  return f();
}
uint64_t fakeAllocationBytes(uint64_t p) {
  void* h = dlopen(fakeDriver().c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(h);
  auto f = reinterpret_cast<FakeCudaAllocationBytesFn>(dlsym(h, "fake_cuda_allocation_bytes"));
  REQUIRE(reinterpret_cast<void*>(f) != nullptr);
  return f(p);
}

// kMeta built with --trace: 10 records over two nodes.
std::string tracedMeta() {
  std::string m = kMeta;
  auto sub = [&](const std::string& from, const std::string& to) {
    const size_t at = m.find(from);
    REQUIRE(at != std::string::npos);
    m.replace(at, from.size(), to);
  };
  sub("\"epoch\", \"timeout\"],", "\"epoch\", \"timeout\", \"trace\"],");
  sub("\"arenas\":", "\"trace\": {\"records\": 10, \"record_words\": 8, \"nodes\": [{\"name\": \"copy#0\", \"op\": \"copy\", "
                     "\"tasks\": 6, \"bytes\": 600}, {\"name\": \"echo#1\", \"op\": \"echo\", \"tasks\": 4, \"bytes\": 40, "
                     "\"bytes_exact\": false}]},\n"
                     "  \"arenas\":");
  return m;
}

// ptx() with the 9 parameters of a traced entry (the fake reads a 9th only when it is declared).
std::string tracedPtx(const std::string& extra = "") {
  std::string p = ptx("// FAKE trace_nodes 2\n" + extra);
  std::string params;
  for (int i = 0; i < 9; ++i) params += std::string(i ? ",\n" : "") + "\t.param .u64 mk_step_param_" + std::to_string(i);
  const std::string one = "\t.param .u64 mk_step_param_0\n";
  p.replace(p.find(one), one.size(), params + "\n");
  return p;
}

}  // namespace

TEST_CASE("mkrt: a traced kernel gets a 9th parameter, its records buffer, and reads them back") {
  REQUIRE(fs::exists(fakeDriver()));
  TempDir dir;
  Env env;
  env.set("MKRT_CUDA_LIBRARY", fakeDriver());
  write(dir / "t.ptx", tracedPtx("// FAKE timeout_at 3\n"));
  write(dir / "t.meta.json", tracedMeta());
  write(dir / "u.ptx", ptx());
  write(dir / "u.meta.json", kMeta);
  const FakeCudaStats before = fakeStats();
  {
    auto t = openModel(dir / "t.ptx", dir / "t.meta.json");
    REQUIRE_MESSAGE(t->m, t->err);
    // One allocation more than an untraced kernel: the records.
    const int traced = fakeStats().liveAllocations - before.liveAllocations;
    auto u = openModel(dir / "u.ptx", dir / "u.meta.json");
    REQUIRE_MESSAGE(u->m, u->err);
    CHECK(fakeStats().liveAllocations - before.liveAllocations - traced == traced - 1);

    CHECK(mkrt_is_traced(t->m) == 1);
    CHECK(mkrt_trace_records(t->m) == 10);
    REQUIRE(mkrt_num_trace_nodes(t->m) == 2);
    mkrt_trace_node node{};
    CHECK(mkrt_trace_node_info(t->m, 1, &node) == MKRT_OK);
    CHECK(std::string(node.name) == "echo#1");
    CHECK(std::string(node.op) == "echo");
    CHECK(node.tasks == 4);
    CHECK(node.bytes == 40);
    CHECK(node.bytes_exact == 0);
    CHECK(mkrt_trace_node_info(t->m, 0, &node) == MKRT_OK);
    CHECK(node.bytes_exact == 1);  // no "bytes_exact": exact, as sidecars before it said
    CHECK(mkrt_trace_node_info(t->m, 2, &node) == MKRT_ERR_ARGUMENT);

    std::vector<uint64_t> words(80, 7);  // 10 records of MKRT_TRACE_RECORD_WORDS
    static_assert(MKRT_TRACE_RECORD_WORDS == 8);
    CHECK(mkrt_read_trace(t->m, words.data(), words.size()) == MKRT_ERR_STATE);
    CHECK(std::string(mkrt_last_error(t->m)) == "no step has run yet: the trace holds the last step's records");

    REQUIRE(mkrt_random_weights(t->m, 1) == MKRT_OK);
    REQUIRE(stepFake(t->m, 1, 0) == MKRT_OK);
    // The launch read 9 parameters; the 9th is an allocation of records * 64 bytes of its own.
    const FakeCudaStats s = fakeStats();
    CHECK(s.params == 9);
    const uint64_t trace = fakeLastTrace();
    CHECK(trace != 0);
    CHECK(fakeAllocationBytes(trace) == 10 * 64);
    for (uint64_t p : fakeLastParams()) CHECK(p != trace);

    // The records as the "kernel" wrote them (fake_cuda.cpp), all eight words of each: epoch 1;
    // the odd ones streamed weights (ring wait, the loader's first and last copy, its wait).
    CHECK(mkrt_read_trace(t->m, words.data(), words.size()) == MKRT_OK);
    for (uint64_t i = 0; i < 10; ++i) {
      INFO(i);
      const uint64_t* w = &words[8 * i];
      CHECK(w[0] == 1000000 + 100 * i);
      CHECK(w[1] == w[0] + 10 * (i % 3));
      CHECK(w[2] == w[1] + 40);
      CHECK(w[3] == ((i % 2) << 32 | i % 132));
      if (i % 2) {
        CHECK(w[4] == 5 + i % 3);
        CHECK(w[5] == w[0] - 150);
        CHECK(w[6] == w[1] + 20);
        CHECK(w[7] == 7);
      } else {
        CHECK(w[4] == 0);
        CHECK(w[5] == 0);
        CHECK(w[6] == 0);
        CHECK(w[7] == 0);
      }
    }
    CHECK(mkrt_read_trace(t->m, words.data(), 40) == MKRT_ERR_ARGUMENT);  // 10 records of 4 words: too few
    CHECK(std::string(mkrt_last_error(t->m)) == "the trace holds 10 records of 8 words (80); the buffer holds 40");
    CHECK(mkrt_read_trace(t->m, words.data(), 79) == MKRT_ERR_ARGUMENT);
    CHECK(std::string(mkrt_last_error(t->m)) == "the trace holds 10 records of 8 words (80); the buffer holds 79");
    CHECK(mkrt_read_trace(t->m, nullptr, 80) == MKRT_ERR_ARGUMENT);

    // Each step's own records; those of a step that timed out too (what ran before the stop).
    REQUIRE(stepFake(t->m, 1, 1) == MKRT_OK);
    CHECK(mkrt_read_trace(t->m, words.data(), words.size()) == MKRT_OK);
    CHECK(words[0] == 2000000);
    CHECK(stepFake(t->m, 1, 2) == MKRT_ERR_TIMEOUT);
    CHECK(mkrt_read_trace(t->m, words.data(), words.size()) == MKRT_OK);
    CHECK(words[0] == 3000000);
    // The C++ wrapper, and the summary of what it reads.
    {
      mkrt::Model m(dir / "t.ptx", dir / "t.meta.json");
      CHECK(m.traced());
      CHECK(m.traceRecords() == 10);
      CHECK(m.traceNodes().size() == 2);
      m.randomWeights(1);
      stepFake(m, 1, 0);
      const std::vector<uint64_t> w = m.readTrace();
      REQUIRE(w.size() == 80);
      const rt::KernelMetadata md = rt::parseMetadata(tracedMeta(), "t.meta.json");
      const rt::TraceSummary sum = rt::summarizeTrace(*md.trace, w, 1);
      CHECK(sum.written == 10);
      CHECK(sum.malformed == 0);
      CHECK(sum.spanNs == 940);  // the last record starts 900 ns after the first, waits 0 ns and runs 40
      // copy#0 (the even records) streamed nothing; echo#1 (the odd ones, 1 .. 9) all of its tasks:
      // ring waits 6 + 5 + 7 + 6 + 5, loader waits 5 x 7, leads 150 + 10 (i mod 3).
      REQUIRE(sum.ops.size() == 2);
      CHECK(sum.ops[0].op == "copy");
      CHECK(sum.ops[0].streamedTasks == 0);
      CHECK(sum.ops[0].ringWaitNs == 0);
      CHECK(sum.ops[1].op == "echo");
      CHECK(sum.ops[1].tasks == 5);
      CHECK(sum.ops[1].streamedTasks == 5);
      CHECK(sum.ops[1].ringWaitNs == 29);
      CHECK(sum.ops[1].loaderWaitNs == 35);
      CHECK(sum.ops[1].leadNs == 790);
      m.reset();
      CHECK_THROWS_WITH_AS(m.readTrace(), "no step has run yet: the trace holds the last step's records", mkrt::Error);
    }

    // Untraced: 8 parameters, no records, a clear error when asked for them.
    CHECK(mkrt_is_traced(u->m) == 0);
    CHECK(mkrt_trace_records(u->m) == 0);
    CHECK(mkrt_num_trace_nodes(u->m) == 0);
    REQUIRE(mkrt_random_weights(u->m, 1) == MKRT_OK);
    REQUIRE(stepFake(u->m, 1, 0) == MKRT_OK);
    CHECK(fakeStats().params == 8);
    CHECK(fakeLastTrace() == 0);
    CHECK(mkrt_read_trace(u->m, words.data(), words.size()) == MKRT_ERR_ARGUMENT);
    CHECK(std::string(mkrt_last_error(u->m)) == "the kernel was built without --trace: rebuild it with mkdsl build --trace");
    mkrt::Model um(dir / "u.ptx", dir / "u.meta.json");
    CHECK(!um.traced());
    CHECK_THROWS_WITH_AS(um.readTrace(), "the kernel was built without --trace: rebuild it with mkdsl build --trace",
                         mkrt::Error);
    CHECK(mkrt_read_trace(nullptr, words.data(), words.size()) == MKRT_ERR_ARGUMENT);
    CHECK(mkrt_is_traced(nullptr) == 0);
  }
  const FakeCudaStats after = fakeStats();
  CHECK(after.badAccesses == before.badAccesses);
  CHECK(after.liveAllocations == before.liveAllocations);
}

TEST_CASE("mkrt: the tiny Llama built with --trace on the fake driver") {
  REQUIRE(fs::exists(fakeDriver()));
  std::string diags;
  auto out = mk::testing::compileTinyLlama(true, &diags);
  REQUIRE_MESSAGE(out, diags);
  const int64_t records = out->artifact.launch().traceRecords;
  REQUIRE(records > 0);
  Env env;
  env.set("MKRT_CUDA_LIBRARY", fakeDriver());
  const FakeCudaStats before = fakeStats();
  {
    mkrt::Model m = mkrt::Model::fromData(out->artifact.assembly, out->metadataJson);
    CHECK(m.traceRecords() == size_t(records));
    m.randomWeights(1);
    stepTiny(m, 1, 0);
    CHECK(fakeStats().params == 9);
    CHECK(fakeAllocationBytes(fakeLastTrace()) == uint64_t(records) * 64);
    const std::vector<uint64_t> w = m.readTrace();
    REQUIRE(w.size() == size_t(records) * 8);
    // The metadata the compiler wrote reads the fake's records: all written, half of them streamed.
    const rt::TraceSummary sum = rt::summarizeTrace(*rt::parseMetadata(out->metadataJson, "tiny.meta.json").trace, w, 1);
    CHECK(sum.written == size_t(records));
    int64_t streamed = 0;
    for (const rt::TraceOpSummary& op : sum.ops) streamed += op.streamedTasks;
    CHECK(streamed == records / 2);
  }
  CHECK(fakeStats().badAccesses == before.badAccesses);
  CHECK(fakeStats().liveAllocations == before.liveAllocations);
}

TEST_CASE("mkrt-run --trace: the Chrome trace of a step, its summary, and the errors") {
  REQUIRE_MESSAGE(fs::exists(mkrtRun()), "build the mkrt-run target first: " << mkrtRun());
  REQUIRE(fs::exists(fakeDriver()));
  TempDir dir;
  const mk::CompileOutput untraced = compileTiny();
  write(dir / "u.ptx", untraced.artifact.assembly);
  write(dir / "u.meta.json", untraced.metadataJson);
  auto out = mk::testing::compileTinyLlama(true);
  REQUIRE(out);
  write(dir / "tiny.ptx", out->artifact.assembly);
  write(dir / "tiny.meta.json", out->metadataJson);
  Env env;
  env.set("MKRT_CUDA_LIBRARY", fakeDriver());
  // 3 prompt tokens + 2 new: 4 steps; the last is traced unless --trace-step says otherwise.
  const std::string tiny = "--ptx '" + (dir / "tiny.ptx") + "' --random-weights 1 --tokens 1,2,3 --max-new 2";
  RunResult r = runTool(tiny + " --trace '" + (dir / "last.json") + "'", dir);
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.out == "0,0\n");  // the ids alone on stdout
  CHECK(r.err.find("mkrt-run: wrote the trace to " + (dir / "last.json")) != std::string::npos);
  CHECK(r.err.find("mkrt-run: trace of step 4: 138 tasks on 132 SMs in ") != std::string::npos);
  CHECK(r.err.find("mkrt-run: estimated traffic ") != std::string::npos);
  CHECK(r.err.find("\nmkrt-run: op ") != std::string::npos);
  CHECK(r.err.find("   share ring wait us loader wait us  lead/task us\n") != std::string::npos);
  CHECK(r.err.find("\nmkrt-run: (ring wait: the compute threads waited for weight tiles; ") != std::string::npos);
  CHECK(r.err.find("mkrt-run: slowest SMs (by their last task's end):") != std::string::npos);
  mk::abi::JsonValue doc = mk::abi::parseJson(rt::readWholeFile(dir / "last.json"));
  CHECK(doc.get("displayTimeUnit")->text == "ns");
  CHECK(doc.get("otherData")->get("step")->text == "4");
  // The fake stamps epoch * 1e6 + 100 i, and record 1's loader 150 ns before its start: the origin.
  CHECK(doc.get("otherData")->get("start_ns")->text == "3999950");
  size_t tasks = 0, loaderSlices = 0;
  for (const mk::abi::JsonValue& e : doc.get("traceEvents")->items) {
    if (e.get("ph")->text != "X") continue;
    if (e.get("pid")->text == "1") {
      ++loaderSlices;
      CHECK(e.get("cat")->text == "loader");
    } else if (e.get("cat")->text != "wait") {
      ++tasks;
    }
  }
  CHECK(tasks == 138);
  CHECK(loaderSlices == 69);  // the odd records
  // --trace-step: the records read right after that step.
  r = runTool(tiny + " --trace '" + (dir / "two.json") + "' --trace-step 2", dir);
  CHECK(r.status == 0);
  CHECK(r.err.find("mkrt-run: trace of step 2: ") != std::string::npos);
  doc = mk::abi::parseJson(rt::readWholeFile(dir / "two.json"));
  CHECK(doc.get("otherData")->get("start_ns")->text == "1999950");

  // Errors: one line, exit status 1, nothing on stdout.
  r = runTool("--ptx '" + (dir / "u.ptx") + "' --random-weights 1 --tokens 1 --trace '" + (dir / "u.json") + "'", dir);
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  CHECK(r.err == "mkrt-run: error: the kernel was built without --trace: rebuild it with mkdsl build --trace\n");
  CHECK(!fs::exists(dir / "u.json"));
  r = runTool(tiny + " --trace '" + (dir / "x.json") + "' --trace-step 5", dir);
  CHECK(r.status == 1);
  CHECK(r.err == "mkrt-run: error: --trace-step 5 is not a step of this decode: it runs steps 1 .. 4\n");
  r = runTool(tiny + " --trace-step 2", dir);
  CHECK(r.status == 1);
  CHECK(r.err.find("mkrt-run: error: --trace-step goes with --trace FILE.json") == 0);
  r = runTool(tiny + " --trace-step 0 --trace x.json", dir);
  CHECK(r.status == 1);
  CHECK(r.err.find("--trace-step needs a step number (1 is the first)") != std::string::npos);
  r = runTool(tiny + " --trace", dir);
  CHECK(r.status == 1);
  CHECK(r.err.find("--trace needs a file") != std::string::npos);
  r = runTool(tiny + " --trace '" + (dir / "nowhere/t.json") + "'", dir);
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  CHECK(r.err == "mkrt-run: error: " + (dir / "nowhere/t.json") + ": cannot write: No such file or directory\n");
}

namespace {

// A program of two steps for the fake: decode (the first, entry mk_step) and prefill (entry
// mk_step_prefill), sharing weight w and state kv (the first two tensors), each with its own
// activations (256 and 1024 bytes), counters, inputs and outputs.
const std::string kTwoStepMeta = R"J({
  "format": "mkdsl-kernel-metadata", "version": 1, "program": "two.mk", "config": "c", "target": "h200",
  "arch": "sm_90a",
  "step": "decode", "entry": "mk_step", "grid": 132, "block": 128, "compute_threads": 128, "loader_warp": false,
  "ring_slots": 0, "ring_slot_bytes": 0, "dynamic_smem_bytes": 0, "sync_counters": 5, "sync_bytes": 20, "error_words": 8,
  "params": ["weights", "state", "activations", "sync", "error", "inputs", "epoch", "timeout"],
  "arenas": {"weights": 512, "state": 256, "activations": 256},
  "shared_tensors": 2,
  "tensors": [
    {"name": "w", "kind": "weight", "dtype": "f32", "shape": [8], "layout": "row_major", "arena": "weights", "offset": 0, "bytes": 32, "sources": ["w.src"]},
    {"name": "kv", "kind": "state", "dtype": "i32", "shape": [4], "layout": "row_major", "arena": "state", "offset": 0, "bytes": 16},
    {"name": "dout", "kind": "activation", "dtype": "i32", "shape": [4], "layout": "row_major", "arena": "activations", "offset": 0, "bytes": 16}
  ],
  "inputs": [{"name": "pos", "dtype": "i32", "tensor": null, "bound": 64, "role": "position"}],
  "outputs": [{"name": "dout", "tensor": "dout"}, {"name": "cache", "tensor": "kv"}],
  "steps": [
    {
      "step": "prefill", "entry": "mk_step_prefill", "grid": 132, "block": 256, "compute_threads": 256,
      "loader_warp": false, "ring_slots": 0, "ring_slot_bytes": 0, "dynamic_smem_bytes": 0, "sync_counters": 9,
      "sync_bytes": 36, "error_words": 8,
      "params": ["weights", "state", "activations", "sync", "error", "inputs", "epoch", "timeout"],
      "arenas": {"activations": 1024},
      "tensors": [
        {"name": "toks", "kind": "input", "dtype": "i32", "shape": [2], "layout": "row_major", "arena": "activations", "offset": 0, "bytes": 8},
        {"name": "pout", "kind": "activation", "dtype": "i32", "shape": [4], "layout": "row_major", "arena": "activations", "offset": 64, "bytes": 16}
      ],
      "inputs": [{"name": "toks", "dtype": "i32", "tensor": "toks", "bound": 256}, {"name": "pos0", "dtype": "i32", "tensor": null, "bound": 63}],
      "outputs": [{"name": "pout", "tensor": "pout"}]
    }
  ]
}
)J";

// Its kernel: the prefill entry first (its name extends the decode entry's). Decode writes
// dout = {pos, epoch, kv[0], kv[1]}; prefill writes kv[0..1] = toks (the shared state) and
// pout = {pos0, epoch, 0, 0}. `extra` is appended (after a `// FAKE entry` line, one entry's).
std::string twoStepPtx(const std::string& extra = "", bool withPrefill = true) {
  std::string s = ".version 8.0\n.target sm_90a\n.address_size 64\n\n";
  if (withPrefill) s += ".visible .entry mk_step_prefill(\n\t.param .u64 p0\n)\n{\n\tret;\n}\n";
  s += ".visible .entry mk_step(\n\t.param .u64 p0\n)\n{\n\tret;\n}\n"
       "// FAKE entry mk_step\n"
       "// FAKE input 0 2 0\n"
       "// FAKE epoch 2 4\n"
       "// FAKE copy 1 0 2 8 8\n"
       "// FAKE entry mk_step_prefill\n"
       "// FAKE copy 2 0 1 0 8\n"
       "// FAKE input 1 2 64\n"
       "// FAKE epoch 2 68\n";
  return s + extra;
}

std::string fakeLastEntry() {
  void* h = dlopen(fakeDriver().c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(h);
  auto f = reinterpret_cast<FakeCudaLastEntryFn>(dlsym(h, "fake_cuda_last_entry"));
  REQUIRE(reinterpret_cast<void*>(f) != nullptr);
  return f();
}

std::vector<int32_t> readInts(mkrt_model* m, const char* name, size_t n) {
  std::vector<int32_t> v(n, -1);
  CHECK_MESSAGE(mkrt_read_output_i32(m, name, v.data(), n) == MKRT_OK, mkrt_last_error(m));
  return v;
}

}  // namespace

TEST_CASE("mkrt: a program of two steps: one entry each over the same weights and state (fake driver)") {
  REQUIRE(fs::exists(fakeDriver()));
  TempDir dir;
  Env env;
  env.set("MKRT_CUDA_LIBRARY", fakeDriver());
  write(dir / "two.ptx", twoStepPtx());
  write(dir / "two.meta.json", kTwoStepMeta);
  const FakeCudaStats before = fakeStats();
  {
    auto o = openModel(dir / "two.ptx", dir / "two.meta.json");
    REQUIRE_MESSAGE(o->m, o->err);
    mkrt_model* m = o->m;
    CHECK(mkrt_num_steps(m) == 2);
    CHECK(std::string(mkrt_step_name(m, 0)) == "decode");
    CHECK(std::string(mkrt_step_name(m, 1)) == "prefill");
    CHECK(std::string(mkrt_step_name(m, 2)).empty());
    CHECK(std::string(mkrt_selected_step(m)) == "decode");  // the program's first step
    CHECK(mkrt_select_step(m, "verify") == MKRT_ERR_ARGUMENT);
    CHECK(std::string(mkrt_last_error(m)) == "the program has no step 'verify' (its steps: 'decode', 'prefill')");
    CHECK(mkrt_select_step(m, nullptr) == MKRT_ERR_ARGUMENT);
    CHECK(std::string(mkrt_selected_step(m)) == "decode");
    REQUIRE(mkrt_random_weights(m, 3) == MKRT_OK);

    // Decode: its own inputs and outputs.
    CHECK(mkrt_num_inputs(m) == 1);
    CHECK(mkrt_num_outputs(m) == 2);
    int32_t pos = 5;
    REQUIRE(mkrt_set_input(m, "pos", MKRT_I32, 0, nullptr, &pos, sizeof pos) == MKRT_OK);
    REQUIRE_MESSAGE(mkrt_step(m) == MKRT_OK, mkrt_last_error(m));
    CHECK(fakeLastEntry() == "mk_step");
    CHECK(fakeStats().epoch == 1);
    CHECK(fakeStats().block == 128);
    const std::vector<uint64_t> decode = fakeLastParams();
    CHECK(fakeAllocationBytes(decode[2]) == 256);  // its activations arena

    // Prefill: its inputs, none set yet; its own epoch, activations, counters, error record and
    // inputs; the same weights and state.
    REQUIRE(mkrt_select_step(m, "prefill") == MKRT_OK);
    CHECK(std::string(mkrt_selected_step(m)) == "prefill");
    CHECK(mkrt_steps_run(m) == 0);
    CHECK(mkrt_num_inputs(m) == 2);
    CHECK(mkrt_num_outputs(m) == 1);
    mkrt_tensor_info info{};
    REQUIRE(mkrt_input_info(m, 0, &info) == MKRT_OK);
    CHECK(std::string(info.name) == "toks");
    CHECK(info.elements == 2);
    int64_t bound = 0;
    REQUIRE(mkrt_input_bound(m, 1, &bound) == MKRT_OK);
    CHECK(bound == 63);
    CHECK(mkrt_set_input(m, "pos", MKRT_I32, 0, nullptr, &pos, sizeof pos) == MKRT_ERR_ARGUMENT);
    CHECK(std::string(mkrt_last_error(m)) == "the step has no input 'pos' (its inputs: toks, pos0)");
    CHECK(mkrt_step(m) == MKRT_ERR_ARGUMENT);
    CHECK(std::string(mkrt_last_error(m)).find("input 'toks' (i32[2]) has no value") == 0);
    const int32_t toks[2] = {7, 9};
    const int64_t toksShape[1] = {2};
    int32_t pos0 = 3;
    REQUIRE(mkrt_set_input(m, "toks", MKRT_I32, 1, toksShape, toks, sizeof toks) == MKRT_OK);
    REQUIRE(mkrt_set_input(m, "pos0", MKRT_I32, 0, nullptr, &pos0, sizeof pos0) == MKRT_OK);
    REQUIRE_MESSAGE(mkrt_step(m) == MKRT_OK, mkrt_last_error(m));
    CHECK(fakeLastEntry() == "mk_step_prefill");
    CHECK(fakeStats().epoch == 1);  // its own counters: its first launch
    CHECK(fakeStats().block == 256);
    const std::vector<uint64_t> prefill = fakeLastParams();
    CHECK(prefill[0] == decode[0]);  // weights
    CHECK(prefill[1] == decode[1]);  // state
    for (int i = 2; i < 6; ++i) CHECK(prefill[i] != decode[i]);  // activations, sync, error, inputs
    CHECK(fakeAllocationBytes(prefill[2]) == 1024);
    CHECK(readInts(m, "pout", 4) == std::vector<int32_t>{3, 1, 0, 0});
    REQUIRE(mkrt_step(m) == MKRT_OK);
    CHECK(fakeStats().epoch == 2);
    CHECK(mkrt_steps_run(m) == 2);
    CHECK(mkrt_read_output_i32(m, "dout", nullptr, 4) == MKRT_ERR_ARGUMENT);
    CHECK(std::string(mkrt_last_error(m)) == "the step has no output 'dout' (it has: pout)");

    // Back to decode: its own epoch and its input kept; it reads the state prefill wrote.
    REQUIRE(mkrt_select_step(m, "decode") == MKRT_OK);
    CHECK(mkrt_steps_run(m) == 1);
    REQUIRE_MESSAGE(mkrt_step(m) == MKRT_OK, mkrt_last_error(m));
    CHECK(fakeLastEntry() == "mk_step");
    CHECK(fakeStats().epoch == 2);
    CHECK(fakeLastParams() == decode);
    CHECK(readInts(m, "dout", 4) == std::vector<int32_t>{5, 2, 7, 9});
    CHECK(readInts(m, "cache", 4) == std::vector<int32_t>{7, 9, 0, 0});

    // Reset zeroes the state and both steps' activations, and both start at epoch 1 again.
    REQUIRE(mkrt_reset(m) == MKRT_OK);
    CHECK(mkrt_steps_run(m) == 0);
    CHECK(readInts(m, "dout", 4) == std::vector<int32_t>{0, 0, 0, 0});
    CHECK(readInts(m, "cache", 4) == std::vector<int32_t>{0, 0, 0, 0});
    uint32_t counters[9] = {1};
    CHECK(std::memcmp(reinterpret_cast<const void*>(uintptr_t(decode[3])), std::vector<uint32_t>(5, 0).data(), 20) == 0);
    std::memcpy(counters, reinterpret_cast<const void*>(uintptr_t(prefill[3])), sizeof counters);
    CHECK(std::vector<uint32_t>(counters, counters + 9) == std::vector<uint32_t>(9, 0));
    REQUIRE(mkrt_select_step(m, "prefill") == MKRT_OK);
    CHECK(mkrt_steps_run(m) == 0);
    CHECK(readInts(m, "pout", 4) == std::vector<int32_t>{0, 0, 0, 0});
    REQUIRE(mkrt_step(m) == MKRT_OK);  // inputs kept across the reset
    CHECK(fakeStats().epoch == 1);
    CHECK(readInts(m, "pout", 4) == std::vector<int32_t>{3, 1, 0, 0});
  }
  // The C++ wrapper.
  {
    mkrt::Model m(dir / "two.ptx", dir / "two.meta.json");
    CHECK(m.numSteps() == 2);
    CHECK(m.stepNames() == std::vector<std::string>{"decode", "prefill"});
    CHECK(m.stepName(1) == "prefill");
    CHECK(m.selectedStep() == "decode");
    CHECK_THROWS_WITH_AS(m.selectStep("verify"), "the program has no step 'verify' (its steps: 'decode', 'prefill')",
                         mkrt::Error);
    m.selectStep("prefill");
    CHECK(m.selectedStep() == "prefill");
    CHECK(m.inputs().size() == 2);
  }
  // A program of one step is one step, unnamed in metadata that names none.
  {
    write(dir / "k.ptx", ptx());
    write(dir / "k.meta.json", kMeta);
    mkrt::Model m(dir / "k.ptx", dir / "k.meta.json");
    CHECK(m.numSteps() == 1);
    CHECK(m.selectedStep().empty());
    m.selectStep("");
    CHECK_THROWS_WITH_AS(m.selectStep("prefill"), "the program has no step 'prefill' (its steps: '')", mkrt::Error);
  }
  const FakeCudaStats after = fakeStats();
  CHECK(after.badAccesses == before.badAccesses);
  CHECK(after.liveAllocations == before.liveAllocations);
}

TEST_CASE("mkrt: a failed step of one entry stops every step until reset, and a missing entry fails at open (fake driver)") {
  REQUIRE(fs::exists(fakeDriver()));
  TempDir dir;
  Env env;
  env.set("MKRT_CUDA_LIBRARY", fakeDriver());
  write(dir / "two.meta.json", kTwoStepMeta);
  write(dir / "timeout.ptx", twoStepPtx("// FAKE timeout_at 1\n"));  // in the prefill entry's lines
  {
    mkrt::Model m(dir / "timeout.ptx", dir / "two.meta.json");
    m.randomWeights(1);
    m.setInput("pos", 0);
    m.step();  // decode's epoch 1: no timeout there
    m.selectStep("prefill");
    m.setInput("toks", std::vector<int32_t>{1, 2}, {2});
    m.setInput("pos0", 0);
    CHECK_THROWS_WITH_AS(m.step(),
                         "step 1 of 'prefill' (epoch 1): task 17 on SM 3 waited for counter 5 (expected 12, saw 11) past "
                         "the timeout of 2000 ms; the kernel stopped (see the schedule: mkdsl build --emit=schedule)",
                         mkrt::Error);
    // The shared state may be half-written: decode refuses too.
    m.selectStep("decode");
    CHECK_THROWS_WITH_AS(m.step(),
                         "an earlier step failed (a wait timed out in step 1 of 'prefill'); call mkrt_reset before "
                         "stepping again",
                         mkrt::Error);
    m.reset();
    m.step();
    CHECK(m.stepsRun() == 1);
  }
  // Every step's entry must be in the PTX.
  write(dir / "decode_only.ptx", twoStepPtx("", false));
  auto o = openModel(dir / "decode_only.ptx", dir / "two.meta.json");
  CHECK(o->m == nullptr);
  CHECK(o->status == MKRT_ERR_FILE);
  CHECK(o->err == (dir / "decode_only.ptx") + ": no kernel `mk_step_prefill` (the entry " + (dir / "two.meta.json") +
                      " names for step 'prefill') in this PTX: are the two files from the same build?");
}
