// Parity at long positions, on the CPU: the shipped Llama-3.2-1B model of examples/llama.mk at its
// real widths (hidden 2048, 32 query and 8 KV heads of 64, llama3 RoPE scaling, the shipped
// attention split and chunk), with few layers, a small vocabulary and MLP, run by the interpreter
// for hundreds of teacher-forced positions against a float64 reference with no rounding
// (tests/reference, Numerics::F64), weights drawn as transformers initialises them.
//
// What it guards: an error that grows with the position (a RoPE frequency, position or scaling
// that differs from transformers', a wrong attention range or scale) stays invisible on the tiny
// model (head_dim 16, near-uniform attention) and over a few dozen positions, and shows here as
// the late positions' error leaving the early positions' behind.
//
// Run: build/tests/mk_long_position_tests   (ctest: long_positions)
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "tests/e2e/e2e.h"
#include "tests/reference/llama_ref.h"

using namespace mk;
using namespace mk::e2e;

namespace {

// Sanitizers slow the interpreter about tenfold: fewer positions there (still past the first
// attention chunk and split boundaries), all of them in optimised builds.
#if defined(__SANITIZE_ADDRESS__)
constexpr int kPositions = 160;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
constexpr int kPositions = 160;
#else
constexpr int kPositions = 512;
#endif
#else
constexpr int kPositions = 512;
#endif

// The window over which the error is averaged when early and late positions are compared.
constexpr int kWindow = 32;

}  // namespace

TEST_CASE("long positions: the 1B model's widths through 512 positions stay as close to float64 as at the start") {
  const ir::Megakernel mk = buildKernel(kRoot + "/examples/llama.mk", "llama_3_2_1b",
                                        {{"layers", "2"}, {"vocab", "256"}, {"ffn", "512"}, {"max_seq", "512"},
                                         {"down_chunk", "512"}});
  const mkref::Config cfg = refConfigOf(mk.graph);
  REQUIRE(cfg.max_seq >= kPositions);
  REQUIRE(cfg.rope_factor != 1.0f);  // the llama3-scaled RoPE of Llama-3.2-1B is on the path
  TempDir tmp;
  const std::string path = tmp.file("weights.safetensors");
  writeBf16(path, randomHfWeights(cfg, 11, kTransformersInit));
  const runtime::SafetensorsSet set = runtime::SafetensorsSet::open(path);
  interp::Interpreter in(mk);
  in.loadWeights(set);
  const Io io = findIo(mk);
  const mkref::Weights w = readForReference(set);
  mkref::LlamaRef truth(cfg, w, mkref::Numerics::F64);
  mkref::LlamaRef hfBf16(cfg, w, mkref::Numerics::HfBf16);  // for scale: transformers' own bf16 path

  std::mt19937 rng(5);
  std::vector<double> err(kPositions), errHf(kPositions);
  int argmaxChecked = 0, argmaxEqual = 0;
  for (int pos = 0; pos < kPositions; ++pos) {
    const int token = int(rng() % uint32_t(cfg.vocab));
    const std::vector<float> got = decode(in, io, token, pos, 7000 + pos);
    const std::vector<float> want = truth.step(token, pos);
    err[pos] = mkref::rel_l2(got, want);
    errHf[pos] = mkref::rel_l2(hfBf16.step(token, pos), want);
    const Top2 t = top2(want);
    if (t.margin > 1e-2 * t.range) {  // issue 5's argmax rule
      ++argmaxChecked;
      argmaxEqual += mkref::argmax(got) == mkref::argmax(want);
    }
    if (pos % kWindow == 0 || pos == kPositions - 1)
      MESSAGE("position " << pos << ": rel_l2(interp, float64) " << fmtNum("%.3e", err[pos])
                          << ", transformers-style bf16 " << fmtNum("%.3e", errHf[pos]));
  }
  auto mean = [](const std::vector<double>& v, int lo, int hi) {
    double s = 0;
    for (int i = lo; i < hi; ++i) s += v[i];
    return s / (hi - lo);
  };
  // Position 0 attends to itself alone; the first window starts after the first few positions.
  const double early = mean(err, 8, 8 + kWindow), late = mean(err, kPositions - kWindow, kPositions);
  const double worst = *std::max_element(err.begin(), err.end());
  MESSAGE("interp vs float64 over " << kPositions << " positions: worst " << fmtNum("%.3e", worst)
                                    << ", mean of positions 8-" << 8 + kWindow - 1 << " " << fmtNum("%.3e", early)
                                    << ", of the last " << kWindow << " " << fmtNum("%.3e", late)
                                    << "; transformers-style bf16 means " << fmtNum("%.3e", mean(errHf, 8, 8 + kWindow))
                                    << " and " << fmtNum("%.3e", mean(errHf, kPositions - kWindow, kPositions))
                                    << "; argmax equal on " << argmaxEqual << "/" << argmaxChecked << " clear positions");
  CHECK(worst < 1e-2);             // every position within issue 5's gate
  CHECK(late < 1.5 * early);       // no growth with the position
  CHECK(late < mean(errHf, kPositions - kWindow, kPositions));  // closer than transformers' bf16 path
  CHECK(argmaxEqual == argmaxChecked);
  CHECK(argmaxChecked > kPositions / 2);
}
