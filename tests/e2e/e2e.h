// Helpers shared by the end-to-end CPU tests (tiny_llama_test.cpp, long_positions_test.cpp):
// building a megakernel from a .mk in-process, one decode step on the interpreter, random
// Hugging Face-named weights and their safetensors file, scratch folders.
#pragma once

#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "frontend/sema.h"
#include "interp/interp.h"
#include "ir/target.h"
#include "ir/verify.h"
#include "lowering/graph.h"
#include "lowering/schedule.h"
#include "runtime/safetensors.h"
#include "support/diagnostics.h"
#include "support/source.h"
#include "tests/reference/llama_ref.h"

namespace mk::e2e {

inline const std::string kRoot = MK_SOURCE_DIR;
inline const std::string kStdlib = MK_STDLIB_DIR;

// ---- Building a megakernel in-process --------------------------------------------------------

// Every diagnostic rendered (file, line, snippet): only while `sm` still holds the files.
inline std::string renderAll(const SourceManager& sm, const DiagnosticEngine& diags) {
  std::string s;
  for (const auto& d : diags.diagnostics()) s += renderText(sm, d, false);
  return s;
}

// The messages alone (diagnostics about a kernel built elsewhere point into sources freed since).
inline std::string messagesOf(const DiagnosticEngine& diags) {
  std::string s;
  for (const auto& d : diags.diagnostics()) s += d.message + "\n";
  return s;
}

// buildGraphs -> schedule -> verify of step `step` of `path` (empty: its first) for the h200
// target (optionally with another SM count), under `config` (empty: the file's first) with
// `overrides` (as `--set NAME=VALUE`).
inline ir::Megakernel buildKernel(const std::string& path, const std::string& config = "",
                                  const std::vector<std::pair<std::string, std::string>>& overrides = {},
                                  int sms = 0, const std::string& step = "") {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  auto file = sm.load(path);
  REQUIRE(file.has_value());
  CheckOptions options;
  options.stdlibDir = kStdlib;
  if (!config.empty()) options.configName = config;
  options.overrides = overrides;
  auto graphs = lowering::buildGraphs(sm, diags, *file, options);
  INFO(renderAll(sm, diags));
  REQUIRE(graphs.has_value());
  auto graph = std::find_if(graphs->begin(), graphs->end(), [&](const ir::Graph& g) { return step.empty() || g.step == step; });
  REQUIRE_MESSAGE(graph != graphs->end(), "no step '" << step << "'");
  auto target = ir::findTarget("h200");
  REQUIRE(target.has_value());
  if (sms > 0) target->sms = sms;
  ir::Megakernel mk = lowering::schedule(std::move(*graph), *target);
  DiagnosticEngine vdiags(sm);
  bool ok = ir::verify(mk, vdiags);
  INFO(renderAll(sm, vdiags));
  REQUIRE(ok);
  return mk;
}

// The step's inputs and outputs by name.
struct Io {
  int token = -1, pos = -1;  // index into Graph::inputs
  int logits = -1, next = -1;  // tensor ids
};
inline Io findIo(const ir::Megakernel& mk) {
  Io io;
  const ir::Graph& g = mk.graph;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    if (g.inputs[i].name == "token") io.token = static_cast<int>(i);
    if (g.inputs[i].name == "pos") io.pos = static_cast<int>(i);
  }
  for (const auto& [name, t] : g.outputs) {
    if (name == "logits") io.logits = t;
    if (name == "next") io.next = t;
  }
  REQUIRE(g.inputs.size() == 2);
  REQUIRE(io.token >= 0);
  REQUIRE(io.pos >= 0);
  REQUIRE(io.logits >= 0);
  REQUIRE(io.next >= 0);
  return io;
}

// One decode step; returns the logits and sets `next` to the step's greedy token.
inline std::vector<float> decode(interp::Interpreter& in, const Io& io, int token, int pos, uint64_t seed,
                                 int* next = nullptr) {
  std::vector<int64_t> inputs(2);
  inputs[io.token] = token;
  inputs[io.pos] = pos;
  in.step(inputs, seed);
  if (next) *next = in.tensorInts(io.next).at(0);
  return in.tensor(io.logits);
}

// The 24 prompt tokens of tests/data's transformers goldens (tiny_llama_tokens.txt).
inline std::vector<int> goldenTokens() {
  std::vector<int> tokens;
  std::ifstream f(kRoot + "/tests/data/tiny_llama_tokens.txt");
  REQUIRE(f.good());
  std::string item;
  while (std::getline(f, item, ',')) tokens.push_back(std::stoi(item));
  REQUIRE(tokens.size() == 24);
  return tokens;
}

// ---- Weights ---------------------------------------------------------------------------------

struct Shaped {
  std::vector<int64_t> shape;
  std::vector<float> values;
};
using HfWeights = std::map<std::string, Shaped>;

// Normal standard deviations of random weights by kind; norm gains are 1 + gain * randn.
struct InitStd {
  float embed, qk, v, o, gate_up, down, lm_head, gain;
};
// As tests/data's goldens (scripts/make_hf_golden.py) for the tiny model: attention peaked, logits
// not near zero.
inline constexpr InitStd kGoldenInit{1.0f, 0.15f, 0.1f, 0.1f, 0.1f, 0.1f, 0.2f, 0.1f};
// transformers' own initialisation of LlamaForCausalLM (initializer_range 0.02, norm gains 1).
inline constexpr InitStd kTransformersInit{0.02f, 0.02f, 0.02f, 0.02f, 0.02f, 0.02f, 0.02f, 0.0f};

// Random HF-named weights of config `c`, rounded to bf16, with an untied lm_head.
inline HfWeights randomHfWeights(const mkref::Config& c, uint32_t seed, const InitStd& init = kGoldenInit) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  HfWeights w;
  auto mat = [&](const std::string& name, int64_t rows, int64_t cols, float std_) {
    Shaped s{{rows, cols}, std::vector<float>(size_t(rows * cols))};
    for (float& x : s.values) x = mkref::bf16_round(std_ * nd(rng));
    w[name] = std::move(s);
  };
  auto gain = [&](const std::string& name, int64_t n) {
    Shaped s{{n}, std::vector<float>(size_t(n))};
    for (float& x : s.values) x = mkref::bf16_round(1.0f + init.gain * nd(rng));
    w[name] = std::move(s);
  };
  const int64_t D = c.hidden, QD = int64_t(c.heads) * c.head_dim, KD = int64_t(c.kv_heads) * c.head_dim;
  mat("model.embed_tokens.weight", c.vocab, D, init.embed);
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    gain(p + "input_layernorm.weight", D);
    mat(p + "self_attn.q_proj.weight", QD, D, init.qk);
    mat(p + "self_attn.k_proj.weight", KD, D, init.qk);
    mat(p + "self_attn.v_proj.weight", KD, D, init.v);
    mat(p + "self_attn.o_proj.weight", D, QD, init.o);
    gain(p + "post_attention_layernorm.weight", D);
    mat(p + "mlp.gate_proj.weight", c.ffn, D, init.gate_up);
    mat(p + "mlp.up_proj.weight", c.ffn, D, init.gate_up);
    mat(p + "mlp.down_proj.weight", D, c.ffn, init.down);
  }
  gain("model.norm.weight", D);
  mat("lm_head.weight", c.vocab, D, init.lm_head);
  return w;
}

inline void writeBf16(const std::string& path, const HfWeights& w) {
  std::vector<runtime::TensorData> tensors;
  for (const auto& [name, s] : w)
    tensors.push_back({name, "BF16", s.shape, runtime::encodeFloats(s.values, "BF16")});
  runtime::writeSafetensors(path, tensors);
}

// Every tensor of a checkpoint, as the reference wants them.
inline mkref::Weights readForReference(const runtime::SafetensorsSet& set) {
  mkref::Weights w;
  for (const std::string& name : set.names()) {
    std::vector<double> d = runtime::toDoubles(*set.find(name));
    w[name] = std::vector<float>(d.begin(), d.end());
  }
  return w;
}

// The reference's model config from the kernel's own config values (the .mk config, overrides
// applied), so the two cannot drift apart. Tuning fields are not read: the reference sums in its
// plain order unless the caller sets k_chunk / attn_splits / attn_chunk.
inline mkref::Config refConfigOf(const ir::Graph& g) {
  std::map<std::string, double> v;
  for (const auto& [name, text] : g.configValues)
    if (text != "true" && text != "false") v[name] = std::stod(text);
  auto get = [&](const char* name) {
    auto it = v.find(name);
    REQUIRE_MESSAGE(it != v.end(), "the config has no field '" << name << "'");
    return it->second;
  };
  mkref::Config c;
  c.vocab = int(get("vocab"));
  c.hidden = int(get("hidden"));
  c.layers = int(get("layers"));
  c.heads = int(get("heads"));
  c.kv_heads = int(get("kv_heads"));
  c.head_dim = int(get("head_dim"));
  c.ffn = int(get("ffn"));
  c.max_seq = int(get("max_seq"));
  c.rope_theta = float(get("rope_theta"));
  c.rms_eps = float(get("rms_eps"));
  c.rope_factor = float(get("rope_factor"));
  c.rope_low_freq = float(get("rope_low_freq"));
  c.rope_high_freq = float(get("rope_high_freq"));
  c.rope_orig_ctx = float(get("rope_orig_ctx"));
  return c;
}

// ---- Odds and ends ---------------------------------------------------------------------------

// A scratch folder removed at the end of the test.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() /
           ("mk_e2e_" + std::to_string(getpid()) + "_" + std::to_string(counter()++));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
  static int& counter() {
    static int n = 0;
    return n;
  }
};

// The gap between the largest and the second largest value, and the value range.
struct Top2 {
  double margin = 0, range = 0;
};
inline Top2 top2(const std::vector<float>& v) {
  std::vector<float> s = v;
  std::sort(s.begin(), s.end(), std::greater<float>());
  return {double(s[0]) - double(s[1]), double(s.front()) - double(s.back())};
}

inline std::string fmtNum(const char* f, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, a);
  return buf;
}

}  // namespace mk::e2e
