// The decode loop every runner shares (runtime/decode.h): prefill, greedy decoding, teacher
// forcing, the logits kept, the timings, and the checks before the first step, against a scripted
// stepper; MetadataStepper against the tiny Llama's real metadata.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "runtime/decode.h"
#include "runtime/metadata.h"
#include "tiny_llama.h"

namespace rt = mk::runtime;

namespace {

// A step whose logits are one-hot at (token + 1) mod vocab and whose `next` output is
// (3 * token) mod vocab, so the two ways of choosing the next token differ; step i takes i + 1 ms.
struct ScriptedStepper : rt::Stepper {
  int64_t vocabSize = 10, posBound = 8, tokenBound = 10;
  bool withNext = true;
  std::vector<std::vector<int64_t>> seen;
  std::vector<std::string> names = {"token", "pos"};
  std::vector<mk::abi::Role> roles = {mk::abi::Role::Token, mk::abi::Role::Position};

  std::vector<rt::StepperInput> inputs() const override {
    return {{names[0], tokenBound, roles[0]}, {names[1], posBound, roles[1]}};
  }
  size_t vocab() const override { return size_t(vocabSize); }
  bool hasNext() const override { return withNext; }
  std::string inputProblem(size_t input, int64_t value) override {
    const int64_t b = input == 0 ? tokenBound : posBound;
    if (b < 0 || (value >= 0 && value < b)) return "";
    return names[input] + " " + std::to_string(value) + " is past the thing: 0 .. " + std::to_string(b - 1);
  }
  void step(const std::vector<int64_t>& in) override { seen.push_back(in); }
  std::vector<float> logits() override {
    std::vector<float> l(size_t(vocabSize), 0.0f);
    l[size_t((seen.back()[0] + 1) % vocabSize)] = 1.0f;
    return l;
  }
  int64_t next() override { return (3 * seen.back()[0]) % vocabSize; }
  double lastStepMs() const override { return double(seen.size()); }
  std::string timeSource() const override { return "test time"; }
};

// The same with prefill steps of `lengths` tokens (one of 4 by default), whose chunks must fit
// the posBound positions (a chunk of 4 in 8 starts at 0 .. 4); their logits and next token are
// those ScriptedStepper gives for the chunk's last token.
struct PrefillStepper : ScriptedStepper {
  std::vector<int64_t> lengths = {4};  // shortest first
  std::vector<std::pair<std::vector<int64_t>, int64_t>> chunks;  // (tokens, pos0) per prefill
  std::vector<int64_t> stepLengths;                              // the chunk length of each
  std::vector<PrefillShape> prefillShapes() const override {
    std::vector<PrefillShape> shapes;
    for (int64_t n : lengths) shapes.push_back({n, posBound - n + 1});
    return shapes;
  }
  void prefill(const std::vector<int64_t>& tokens, int64_t pos0, int64_t chunk) override {
    REQUIRE(int64_t(tokens.size()) <= chunk);
    REQUIRE(pos0 + chunk <= posBound);
    chunks.push_back({tokens, pos0});
    stepLengths.push_back(chunk);
    seen.push_back({tokens.back(), pos0 + int64_t(tokens.size()) - 1});
  }
};

std::string errorOf(rt::Stepper& s, const std::vector<int64_t>& tokens, int64_t maxNew) {
  try {
    rt::decode(s, tokens, {maxNew, false});
  } catch (const rt::DecodeError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("decode: prefill, then greedy from the step's next token or the logits' argmax") {
  ScriptedStepper s;
  rt::DecodeOptions o;
  o.maxNew = 4;
  o.keepLogits = true;
  rt::DecodeResult r = rt::decode(s, {1, 2, 3}, o);
  CHECK(r.steps == 6);
  CHECK(r.promptTokens == 3);
  // Prompt 1, 2, 3; then 3*3=9, 3*9=27%10=7, 3*7=21%10=1; the last generated (3) is not fed.
  REQUIRE(s.seen.size() == 6);
  std::vector<int64_t> fed, pos;
  for (const auto& in : s.seen) fed.push_back(in[0]), pos.push_back(in[1]);
  CHECK(fed == std::vector<int64_t>{1, 2, 3, 9, 7, 1});
  CHECK(pos == std::vector<int64_t>{0, 1, 2, 3, 4, 5});
  CHECK(r.generated == std::vector<int64_t>{9, 7, 1, 3});
  CHECK(r.logits.size() == 60);
  CHECK(r.logits[0 * 10 + 2] == 1.0f);  // step 0 fed token 1: one-hot at 2
  CHECK(r.logits[5 * 10 + 2] == 1.0f);  // step 5 fed token 1
  CHECK(r.stepMs == std::vector<double>{1, 2, 3, 4, 5, 6});
  CHECK(r.decodeMs == std::vector<double>{4, 5, 6});
  CHECK(r.ttftMs >= 0);
  const auto lines = rt::decodeReport(r);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == "6 steps (3 prompt tokens, 4 generated)");
  CHECK(lines[1].rfind("time to first token: ", 0) == 0);
  CHECK(lines[1].find(" ms (the 3 prompt steps, host wall clock)") != std::string::npos);
  CHECK(lines[2] == "per-token latency (3 decode steps, test time): median 5.000 ms, p90 6.000 ms, p99 6.000 ms");
  CHECK(lines[3] == "step time (all 6 steps, test time): median 3.000 ms, p90 6.000 ms, p99 6.000 ms");

  // Without a next-token output: the argmax of the logits (token + 1).
  ScriptedStepper a;
  a.withNext = false;
  r = rt::decode(a, {1, 2, 3}, {4, false});
  CHECK(r.generated == std::vector<int64_t>{4, 5, 6, 7});
  CHECK(r.logits.empty());

  // A one-token prompt is one step, in the singular.
  ScriptedStepper one;
  r = rt::decode(one, {1}, {2, false});
  CHECK(rt::decodeReport(r)[1].find(" ms (the 1 prompt step, host wall clock)") != std::string::npos);
}

TEST_CASE("decode: the prompt in chunks through the prefill step, the tail one token per step") {
  using Chunks = std::vector<std::pair<std::vector<int64_t>, int64_t>>;
  SUBCASE("a full chunk and a partial one, then greedy decoding") {
    PrefillStepper s;
    s.posBound = 16;
    rt::DecodeOptions o;
    o.maxNew = 3;
    CHECK(rt::plannedSteps(s, 6, o) == 2 + 2);
    rt::DecodeResult r = rt::decode(s, {1, 2, 3, 4, 5, 6}, o);
    CHECK(s.chunks == Chunks{{{1, 2, 3, 4}, 0}, {{5, 6}, 4}});
    // The last chunk's next token (3 * 6 % 10 = 8) is the first generated; then 4 (3 * 8), 2.
    CHECK(r.generated == std::vector<int64_t>{8, 4, 2});
    REQUIRE(s.seen.size() == 4);
    CHECK(s.seen[2] == std::vector<int64_t>{8, 6});  // decode steps at positions 6 and 7
    CHECK(s.seen[3] == std::vector<int64_t>{4, 7});
    CHECK(r.steps == 4);
    CHECK(r.promptSteps == 2);
    CHECK(r.prefillSteps == 2);
    CHECK(r.decodeMs == std::vector<double>{3, 4});
    const auto lines = rt::decodeReport(r);
    REQUIRE(lines.size() == 5);
    CHECK(lines[1].find(" ms (the 6 prompt tokens in 2 prefill steps of 4, host wall clock)") != std::string::npos);
    CHECK(lines[2] == "prefill: 3.000 ms in 2 steps (test time)");
  }
  SUBCASE("a chunk that would not fit the KV cache leaves the rest to decode steps") {
    PrefillStepper s;  // 8 positions: chunks may start at 0 .. 4
    rt::DecodeResult r = rt::decode(s, {1, 2, 3, 4, 5, 6}, {2, false});
    CHECK(s.chunks == Chunks{{{1, 2, 3, 4}, 0}, {{5, 6}, 4}});
    r = rt::decode(s = PrefillStepper(), {1, 2, 3, 4, 5, 6, 7}, {1, false});
    // Chunks at 0 and 4 take all seven tokens; nothing is left for decode steps.
    CHECK(s.chunks == Chunks{{{1, 2, 3, 4}, 0}, {{5, 6, 7}, 4}});
    CHECK(r.generated == std::vector<int64_t>{1});  // 3 * 7 % 10
    s = PrefillStepper();
    s.posBound = 6;  // chunks may start at 0 .. 2: the second would start at 4
    r = rt::decode(s, {1, 2, 3, 4, 5}, {1, false});
    CHECK(s.chunks == Chunks{{{1, 2, 3, 4}, 0}});
    REQUIRE(s.seen.size() == 2);
    CHECK(s.seen[1] == std::vector<int64_t>{5, 4});  // the fifth token at position 4, a decode step
    CHECK(r.promptSteps == 2);
    CHECK(r.generated == std::vector<int64_t>{5});
    CHECK(rt::decodeReport(r)[1].find("in 1 prefill step of 4, then 1 one token per step") != std::string::npos);
  }
  SUBCASE("teacher forcing, kept logits, DecodeOptions::prefill off and a traced run: one token per step") {
    for (int c = 0; c < 4; ++c) {
      PrefillStepper s;
      rt::DecodeOptions o;
      o.maxNew = c == 0 ? 0 : 2;
      o.keepLogits = c == 1;
      o.prefill = c != 2;
      o.traced = c == 3;
      CAPTURE(c);
      CHECK_FALSE(rt::usesPrefill(s, o));
      rt::decode(s, {1, 2, 3}, o);
      CHECK(s.chunks.empty());
      CHECK(s.seen.size() == size_t(c == 0 ? 3 : 4));
    }
  }
}

TEST_CASE("decode: prefill steps of two lengths: the longest while it fills, then the shortest that holds the rest") {
  using Chunks = std::vector<std::pair<std::vector<int64_t>, int64_t>>;
  PrefillStepper s;
  s.lengths = {2, 4};
  s.posBound = 16;
  rt::DecodeResult r = rt::decode(s, {1, 2, 3, 4, 5}, {2, false});
  CHECK(s.chunks == Chunks{{{1, 2, 3, 4}, 0}, {{5}, 4}});
  CHECK(s.stepLengths == std::vector<int64_t>{4, 2});
  CHECK(r.prefillChunks == std::vector<int64_t>{4, 2});
  CHECK(r.generated == std::vector<int64_t>{5, 5});  // 3 * 5 % 10, then 3 * 5 % 10
  CHECK(rt::decodeReport(r)[1].find(" ms (the 5 prompt tokens in 2 prefill steps of 4 + 2, host wall clock)") !=
        std::string::npos);
  // A short prompt takes the short step alone; a longer one, the longest while it fills it, then
  // the shortest that holds the rest.
  s = PrefillStepper();
  s.lengths = {2, 4};
  s.posBound = 16;
  r = rt::decode(s, {7}, {1, false});
  CHECK(s.chunks == Chunks{{{7}, 0}});
  CHECK(s.stepLengths == std::vector<int64_t>{2});
  s = PrefillStepper();
  s.lengths = {2, 4};
  s.posBound = 16;
  r = rt::decode(s, {1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, false});
  CHECK(s.stepLengths == std::vector<int64_t>{4, 4, 2});
  CHECK(rt::decodeReport(r)[1].find("in 3 prefill steps of 2 x 4 + 2, host wall clock") != std::string::npos);
  s = PrefillStepper();
  s.lengths = {2, 4};
  s.posBound = 16;
  r = rt::decode(s, {1, 2, 3}, {1, false});
  CHECK(s.stepLengths == std::vector<int64_t>{4});
  CHECK(s.chunks == Chunks{{{1, 2, 3}, 0}});
  // Near the end of the KV cache (7 positions: a chunk of 4 starts at 0 .. 3, of 2 at 0 .. 5):
  // the short step takes what the long one cannot, the rest goes one token per step.
  s = PrefillStepper();
  s.lengths = {2, 4};
  s.posBound = 7;
  CHECK(rt::plannedSteps(s, 7, {1, false}) == 3);
  r = rt::decode(s, {1, 2, 3, 4, 5, 6, 7}, {1, false});
  CHECK(s.chunks == Chunks{{{1, 2, 3, 4}, 0}, {{5, 6}, 4}});
  CHECK(s.stepLengths == std::vector<int64_t>{4, 2});
  REQUIRE(s.seen.size() == 3);
  CHECK(s.seen[2] == std::vector<int64_t>{7, 6});  // the seventh token at position 6, a decode step
  CHECK(rt::decodeReport(r)[1].find("in 2 prefill steps of 4 + 2, then 1 one token per step") != std::string::npos);
}

TEST_CASE("decode: the after-step hook sees every step once, in order, after it ran") {
  ScriptedStepper s;
  rt::DecodeOptions o;
  o.maxNew = 3;
  std::vector<int64_t> steps;
  o.afterStep = [&](int64_t step) {
    CHECK(s.seen.size() == size_t(step));  // the step has run
    steps.push_back(step);
  };
  rt::decode(s, {1, 2}, o);
  CHECK(steps == std::vector<int64_t>{1, 2, 3, 4});
  // --trace-step: 1-based, 0 for the last; anything else is refused with the range.
  CHECK(rt::traceStepOf(0, 4) == 4);
  CHECK(rt::traceStepOf(2, 4) == 2);
  CHECK_THROWS_WITH_AS(rt::traceStepOf(5, 4), "--trace-step 5 is not a step of this decode: it runs steps 1 .. 4",
                       rt::DecodeError);
}

TEST_CASE("decode: teacher forcing feeds every given token and generates nothing") {
  ScriptedStepper s;
  rt::DecodeResult r = rt::decode(s, {5, 4, 3, 2}, {0, true});
  CHECK(r.steps == 4);
  REQUIRE(s.seen.size() == 4);
  CHECK(s.seen[3] == std::vector<int64_t>{2, 3});
  CHECK(r.generated.empty());
  CHECK(r.ttftMs >= 0);
  CHECK(r.logits.size() == 40);
  CHECK(r.decodeMs.empty());
  const auto lines = rt::decodeReport(r);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "4 steps (4 prompt tokens, 0 generated)");
  CHECK(lines[1].rfind("time to first token: ", 0) == 0);
  CHECK(lines[2].rfind("step time (all 4 steps, test time): ", 0) == 0);
  CHECK(rt::decodeSteps(4, 0) == 4);
  CHECK(rt::decodeSteps(4, 1) == 4);
  CHECK(rt::decodeSteps(4, 5) == 8);
}

TEST_CASE("decode: tokens, sequence length and the step's interface are checked before the first step") {
  ScriptedStepper s;  // vocab 10, 8 positions
  CHECK(errorOf(s, {1, 10}, 2) == "token id 10 is out of range: the vocabulary has 10 entries");
  CHECK(errorOf(s, {-1}, 2) == "token id -1 is out of range: the vocabulary has 10 entries");
  // 3 + 6 - 1 = 8 steps fit exactly; one more does not.
  CHECK(errorOf(s, {1, 2, 3}, 6).empty());
  s.seen.clear();
  CHECK(errorOf(s, {1, 2, 3}, 7) ==
        "the sequence does not fit: 3 prompt tokens + 7 new need positions 0 .. 8, and pos 8 is past the thing: 0 .. 7; "
        "with this prompt --max-new can be at most 6");
  CHECK(s.seen.empty());  // nothing ran
  CHECK(errorOf(s, {1, 2, 3, 4, 5, 6, 7, 8, 9}, 0) ==
        "the sequence does not fit: teacher forcing 9 tokens needs positions 0 .. 8, and pos 8 is past the thing: 0 .. 7; "
        "at most 8 tokens fit");
  CHECK(errorOf(s, {1, 2, 3, 4, 5, 6, 7, 8, 9}, 1).find("the prompt alone is longer than that") != std::string::npos);
  CHECK(errorOf(s, {}, 1) == "nothing to decode: give at least one prompt token");
  // Without bounds, the logits' length is the vocabulary and the sequence is not limited.
  s.tokenBound = -1;
  s.posBound = -1;
  CHECK(errorOf(s, {10}, 1) == "token id 10 is out of range: the vocabulary has 10 entries");
  CHECK(errorOf(s, {1}, 20).empty());
  // A generated token the embedding cannot take (the logits are longer than its rows).
  ScriptedStepper g;
  g.withNext = false;
  g.tokenBound = 5;
  CHECK(errorOf(g, {3}, 3) == "step 3: token 5 is past the thing: 0 .. 4");
  // The inputs are found by their roles, whatever their names ...
  ScriptedStepper n;
  n.names = {"tok", "p"};
  CHECK(errorOf(n, {1}, 1).empty());
  // ... and a step without a token and a position is not decoded.
  n.roles = {mk::abi::Role::None, mk::abi::Role::Position};
  CHECK(errorOf(n, {1}, 1) ==
        "the decode loop feeds a step whose inputs are a token (an i32 that indexes the embedding's rows) and a position "
        "(an i32 that indexes the KV cache); this step takes (tok, p: position)");
  n.roles = {mk::abi::Role::Position, mk::abi::Role::Position};
  CHECK(errorOf(n, {1}, 1) ==
        "the decode loop feeds a step whose inputs are a token (an i32 that indexes the embedding's rows) and a position "
        "(an i32 that indexes the KV cache); this step takes (tok: position, p: position)");
  n.roles = {mk::abi::Role::None, mk::abi::Role::None};  // metadata from before roles
  CHECK(errorOf(n, {1}, 1) ==
        "the decode loop feeds a step whose inputs are a token (an i32 that indexes the embedding's rows) and a position "
        "(an i32 that indexes the KV cache); this step takes (tok, p); its metadata gives none of them a role: if the "
        "kernel was built by an older mkdsl, build it again");
  ScriptedStepper v;
  v.vocabSize = 0;
  CHECK(errorOf(v, {1}, 1) == "the step returns no logits (an f32 vector output)");
}

TEST_CASE("decode: MetadataStepper reads the step's interface and bounds from the tiny Llama's metadata") {
  std::string diags;
  auto out = mk::testing::compileTinyLlama(false, &diags);
  REQUIRE_MESSAGE(out, diags);
  rt::MetadataStepper s(rt::parseMetadata(out->metadataJson, "tiny.meta.json"));
  const auto in = s.inputs();
  REQUIRE(in.size() == 2);
  CHECK(in[0].name == "token");
  CHECK(in[0].bound == 256);
  CHECK(in[0].role == mk::abi::Role::Token);
  CHECK(in[1].name == "pos");
  CHECK(in[1].bound == 64);
  CHECK(in[1].role == mk::abi::Role::Position);
  CHECK(s.vocab() == 256);
  CHECK(s.hasNext());
  CHECK(s.metadata().tensors[size_t(s.logitsTensor())].shape == std::vector<int64_t>{256});
  CHECK(s.inputProblem(1, 63).empty());
  CHECK(s.inputProblem(1, 64) == "pos 64 is past the KV cache: positions 0 .. 63 (max_seq = 64)");
  CHECK(s.inputProblem(0, 256) == "token 256 is past the rows of 'embed_tokens': ids 0 .. 255 (vocab = 256)");
  CHECK(s.inputProblem(0, -2) == "token -2 is outside the rows of 'embed_tokens': ids 0 .. 255 (vocab = 256)");
  rt::checkDecode(s, {1, 2, 3}, 62);
  try {
    rt::checkDecode(s, {1, 2, 3}, 63);
    FAIL("no error");
  } catch (const rt::DecodeError& e) {
    CHECK(std::string(e.what()) ==
          "the sequence does not fit: 3 prompt tokens + 63 new need positions 0 .. 64, and pos 64 is past the KV cache: "
          "positions 0 .. 63 (max_seq = 64); with this prompt --max-new can be at most 62");
  }
  CHECK_THROWS_AS(s.step({1, 0}), rt::DecodeError);
}
