// The decode loop, once for every device: the prompt (in chunks through the program's prefill step
// where it has one, else one token per step), greedy decoding (each step's next token fed back),
// teacher forcing (--max-new 0: every given token is one step), the logits of every step (for
// --dump-logits and comparisons) and the latency statistics.
// `mkrt-run` and `mkdsl run --device cuda` drive it with MkrtStepper (a kernel on a GPU, through
// mkrt); `mkdsl run --device cpu` with a stepper over the CPU interpreter (tools/mkdsl: the
// runtime includes nothing of the compiler).
//
// The step's inputs must be a token and a position, as the compiler marks them in the metadata
// (abi::Role: an i32 that indexes the embedding's rows, an i32 that indexes the KV cache), in any
// order and under any names: step i gets position i and the i-th prompt token, then (after the
// prompt) the token the previous step generated. The logits are the output marked Logits; the next
// token the one marked NextToken, else the argmax of the logits. With P prompt tokens and max-new N > 0 it runs P + N - 1 steps and
// generates N tokens; with N = 0 it runs P steps and generates none.
//
// Prefill: when the stepper has prefill steps (Stepper::prefillShapes), generation (N > 0) without
// kept logits feeds the prompt to them in chunks: while the tokens left fill the longest chunk T,
// a step of T of them; then the shortest step whose chunk holds the rest (a partial chunk: the
// step is told its last real row, and the padding rows' cache entries are overwritten by the
// decode steps after it). A program with a 512- and a 128-token step runs 600 tokens as 512 + 128
// (88 real), 100 as one 128. Only steps whose chunk fits the KV cache from the chunk's position
// are taken (pos0's bound); what no step can take goes one token per step.
// The last prompt step's next token is the first generated one, as without prefill. Teacher
// forcing and kept logits (--dump-logits, --compare-logits) run one token per step, so that every
// position has its logits.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/metadata.h"
#include "runtime/mkrt.hpp"

namespace mk::runtime {

// The sequence cannot be decoded (a token out of the vocabulary, more steps than the KV cache
// holds, a step whose inputs are not a token and a position), or a step refused its inputs.
class DecodeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct StepperInput {
  std::string name;
  int64_t bound = -1;  // exclusive upper bound of its values (the metadata's "bound"); -1: none
  abi::Role role = abi::Role::None;
};

// One way of running decode steps: a kernel on a GPU, or the CPU interpreter. Failures throw
// (std::exception; the message is shown as is).
class Stepper {
 public:
  virtual ~Stepper() = default;
  // The step's inputs, in the order step() takes them.
  virtual std::vector<StepperInput> inputs() const = 0;
  // The length of the logits (the output with Role::Logits); 0 when the step returns none.
  virtual size_t vocab() const = 0;
  // Whether the step returns its own next token (the output with Role::NextToken).
  virtual bool hasNext() const = 0;
  // Why `value` may not be given to input `input` ("pos 64 is past the KV cache: positions
  // 0 .. 63 (max_seq = 64)"); "" when it may.
  virtual std::string inputProblem(size_t input, int64_t value) = 0;
  // Runs a step with one value per input, in inputs() order.
  virtual void step(const std::vector<int64_t>& inputs) = 0;
  // After a step: its logits (vocab() floats), and its next token (only when hasNext()).
  virtual std::vector<float> logits() = 0;
  virtual int64_t next() = 0;
  // How long the last step took, in milliseconds, and what that time measures ("GPU time per
  // launch", "interpreter host time per step").
  virtual double lastStepMs() const = 0;
  virtual std::string timeSource() const = 0;

  // The program's prefill steps, shortest chunk first: the tokens each takes per step (its
  // Role::Tokens input's length) and the exclusive bound of the position a chunk may start at
  // (its Role::Position input: the chunk must fit the KV cache from there; -1 for none). None:
  // the prompt runs one token per step.
  struct PrefillShape {
    int64_t chunk = 0, startBound = -1;
  };
  virtual std::vector<PrefillShape> prefillShapes() const { return {}; }
  // Runs the prefill step of chunk length `chunk` (one of prefillShapes()) on `tokens` (1 ..
  // chunk of them; padded) at positions from `pos0`. Afterwards logits() and next() are its last
  // real row's, and lastStepMs() its time.
  virtual void prefill(const std::vector<int64_t>& tokens, int64_t pos0, int64_t chunk);
};

struct DecodeOptions {
  int64_t maxNew = 16;      // 0: teacher forcing
  bool keepLogits = false;  // keep every step's logits in DecodeResult::logits
  bool prefill = true;      // feed the prompt through the prefill step where there is one (above)
  // A trace of the run reads the decode step's records, so every prompt token is then a decode step.
  bool traced = false;
  // Called after each step (1-based) once its outputs are read, e.g. to read a trace
  // (TraceCapture); between steps, so it is not part of any step's time.
  std::function<void(int64_t step)> afterStep = nullptr;
};

struct DecodeResult {
  int64_t steps = 0, promptTokens = 0;
  int64_t promptSteps = 0;     // the steps that fed the prompt
  int64_t prefillSteps = 0;    // ... of them, chunks through a prefill step
  std::vector<int64_t> prefillChunks;  // the chunk length of each of those steps
  size_t vocab = 0;
  std::vector<int64_t> generated;  // max-new ids (none with teacher forcing)
  std::vector<float> logits;       // [steps, vocab] row-major, with keepLogits
  std::vector<double> stepMs;      // every step's time (Stepper::lastStepMs)
  std::vector<double> decodeMs;    // the steps after the prompt: the per-token latency
  double ttftMs = -1;              // host wall clock from the first step to the first generated token
                                   // (teacher forcing: to the prediction after the last token)
  std::string timeSource;
};

// The steps decoding `tokens` with `maxNew` takes one token per step: P + N - 1, or P for
// teacher forcing.
int64_t decodeSteps(size_t promptTokens, int64_t maxNew);
// Whether decode() feeds this prompt to the stepper's prefill step.
bool usesPrefill(const Stepper& stepper, const DecodeOptions& options);
// The steps decode() takes for `tokens` with `options` (prefill chunks counted as one step each).
int64_t plannedSteps(const Stepper& stepper, size_t promptTokens, const DecodeOptions& options);

// Checks everything that can be checked before the first step, with messages that say why:
// the step's interface, every prompt token below the vocabulary (the token input's bound, else
// the logits' length), and every position the sequence needs within the pos input's bound (the
// KV cache). Throws DecodeError.
void checkDecode(Stepper& stepper, const std::vector<int64_t>& tokens, int64_t maxNew);

// Decodes (checkDecode first). Each step's inputs are checked against their bounds too (a
// generated token past the embedding): DecodeError names the step.
DecodeResult decode(Stepper& stepper, const std::vector<int64_t>& tokens, const DecodeOptions& options);

// "median 0.250 ms, p90 0.250 ms, p99 0.250 ms" (nearest-rank percentiles).
std::string latencySummary(std::vector<double> ms);

// The lines both runners print on stderr after decoding (each prefixed with the tool's name):
//   6 steps (3 prompt tokens, 4 generated)
//   time to first token: 1.234 ms (the 3 prompt steps, host wall clock)
// (with prefill: "(the 512 prompt tokens in 4 prefill steps of 128, host wall clock)", or "in 2
// prefill steps of 512 + 128" where the chunks differ, and a line with the prefill steps' own times)
//   per-token latency (3 decode steps, GPU time per launch): median 0.250 ms, p90 0.250 ms, p99 0.250 ms
//   step time (all 6 steps, GPU time per launch): median 0.250 ms, p90 0.250 ms, p99 0.250 ms
// (with teacher forcing the time to first token is the time of all steps, and there is no
// per-token latency line: every step is a prompt step).
std::vector<std::string> decodeReport(const DecodeResult& r);

// A step described by its kernel metadata (inputs, their bounds and roles from "inputs", the
// logits and next token from the roles of "outputs", input problems in inputRangeProblem's
// words): what the CPU
// interpreter's stepper builds on, and what a runner checks a sequence against before it opens
// a device (checkDecode). Running steps is left to a subclass: here step() throws.
class MetadataStepper : public Stepper {
 public:
  explicit MetadataStepper(KernelMetadata metadata);
  std::vector<StepperInput> inputs() const override;
  size_t vocab() const override;
  bool hasNext() const override { return next_ >= 0; }
  std::string inputProblem(size_t input, int64_t value) override { return inputRangeProblem(md_, input, value); }
  void step(const std::vector<int64_t>&) override;
  std::vector<float> logits() override;
  int64_t next() override;
  double lastStepMs() const override { return 0; }
  std::string timeSource() const override { return "no time"; }

  const KernelMetadata& metadata() const { return md_; }
  // The metadata's tensor indices of the logits and the next-token outputs (-1: none).
  int logitsTensor() const { return logits_; }
  int nextTensor() const { return next_; }

 private:
  KernelMetadata md_;
  int logits_ = -1, next_ = -1;
};

// A kernel on a GPU through the host runtime (mkrt.hpp): the model must have its weights.
// The model's prefill steps, when the program has them (mkrt_select_step): steps whose inputs are
// Tokens, Position and Row and whose outputs have Logits; of those of one chunk length, the one
// with the fewest outputs (a `prefill` over a `prefill_logits`). Decode steps run the step selected when the stepper is made.
class MkrtStepper : public Stepper {
 public:
  explicit MkrtStepper(mkrt::Model& model);
  std::vector<StepperInput> inputs() const override { return inputs_; }
  size_t vocab() const override { return vocab_; }
  bool hasNext() const override { return !next_.empty(); }
  std::string inputProblem(size_t input, int64_t value) override { return model_.inputProblem(input, value); }
  void step(const std::vector<int64_t>& inputs) override;
  std::vector<float> logits() override;
  int64_t next() override;
  double lastStepMs() const override { return model_.lastStepMs(); }
  std::string timeSource() const override { return "GPU time per launch"; }
  std::vector<PrefillShape> prefillShapes() const override;
  void prefill(const std::vector<int64_t>& tokens, int64_t pos0, int64_t chunk) override;

 private:
  // What one of the model's steps reads and writes, by name.
  struct PrefillStep {
    std::string step, tokens, pos0, row, logits, next;
    int64_t chunk = 0, startBound = -1;
    size_t outputs = 0;  // how many outputs the step has
  };
  void select(const std::string& step);

  mkrt::Model& model_;
  std::string decodeStep_;  // the step selected when made
  std::vector<StepperInput> inputs_;
  std::string logits_, next_;  // output names ("" none)
  size_t vocab_ = 0;
  std::vector<PrefillStep> prefill_;  // shortest chunk first
  int inPrefill_ = -1;  // the index in prefill_ of the step the last run was, if it was one
};

// The step `--trace-step` names (1-based; 0 for the last of `steps`); throws DecodeError when the
// decode has no such step.
int64_t traceStepOf(int64_t step, int64_t steps);

// `--trace FILE` of mkrt-run and `mkdsl run --device cuda`: one step's records of a traced kernel
// (`mkdsl build --trace`), read right after that step through DecodeOptions::afterStep, then
// written as a Chrome trace with a summary (runtime/trace.h).
class TraceCapture {
 public:
  // `step` is 1-based, 0 for the last of the decode's `steps`. Throws DecodeError when the kernel
  // was built without --trace or the decode has no such step.
  TraceCapture(mkrt::Model& model, int64_t step, int64_t steps);
  // The hook: reads the records when `step` is the one to capture.
  void afterStep(int64_t step);
  // Writes the Chrome trace to `path` and returns the summary's lines (traceReport). Throws when
  // the step never ran or the file cannot be written.
  std::vector<std::string> write(const std::string& path) const;

 private:
  mkrt::Model& model_;
  int64_t step_ = 0;
  TraceInfo info_;
  std::vector<uint64_t> words_;
  bool captured_ = false;
};

}  // namespace mk::runtime
