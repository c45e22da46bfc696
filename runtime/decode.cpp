#include "runtime/decode.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <utility>

#include "runtime/trace.h"

namespace mk::runtime {

namespace {

// Where the decode loop's token and position go among the step's inputs.
struct Interface {
  int token = -1, pos = -1;
};

Interface stepInterface(const Stepper& s) {
  const std::vector<StepperInput> in = s.inputs();
  Interface io;
  int tokens = 0, positions = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].role == abi::Role::Token) io.token = int(i), ++tokens;
    if (in[i].role == abi::Role::Position) io.pos = int(i), ++positions;
  }
  if (tokens != 1 || positions != 1 || in.size() != 2) {
    std::string names;
    bool anyRole = false;
    for (const StepperInput& i : in) {
      names += (names.empty() ? "" : ", ") + i.name + (i.role == abi::Role::None ? "" : std::string(": ") + abi::roleName(i.role));
      anyRole = anyRole || i.role != abi::Role::None;
    }
    throw DecodeError("the decode loop feeds a step whose inputs are a token (an i32 that indexes the embedding's rows) and "
                      "a position (an i32 that indexes the KV cache); this step takes (" +
                      (names.empty() ? std::string("nothing") : names) + ")" +
                      (anyRole || in.empty() ? ""
                                             : "; its metadata gives none of them a role: if the kernel was built by an older "
                                               "mkdsl, build it again"));
  }
  if (s.vocab() == 0) throw DecodeError("the step returns no logits (an f32 vector output)");
  return io;
}

std::string str(int64_t v) { return std::to_string(v); }

}  // namespace

int64_t decodeSteps(size_t promptTokens, int64_t maxNew) {
  return maxNew == 0 ? int64_t(promptTokens) : int64_t(promptTokens) + maxNew - 1;
}

void Stepper::prefill(const std::vector<int64_t>&, int64_t, int64_t) {
  throw DecodeError("this step runner has no prefill step");
}

bool usesPrefill(const Stepper& s, const DecodeOptions& o) {
  return o.prefill && !o.traced && o.maxNew > 0 && !o.keepLogits && !s.prefillShapes().empty();
}

namespace {

// One prefill step of a prompt: `tokens` of them through the step of chunk length `chunk`.
struct PlannedChunk {
  int64_t tokens, chunk;
};

// The prompt's prefill steps, in order (the tokens after them go one per step): the longest chunk
// while the tokens left fill it, then the shortest that holds the rest, of the steps whose chunk
// fits the KV cache from its position.
std::vector<PlannedChunk> prefillPlan(const Stepper& s, int64_t promptTokens, const DecodeOptions& o) {
  std::vector<PlannedChunk> plan;
  if (!usesPrefill(s, o)) return plan;
  const std::vector<Stepper::PrefillShape> shapes = s.prefillShapes();  // shortest first
  for (int64_t pos = 0; pos < promptTokens;) {
    const int64_t rest = promptTokens - pos;
    const Stepper::PrefillShape* pick = nullptr;
    for (const Stepper::PrefillShape& shape : shapes) {
      if (shape.startBound >= 0 && pos >= shape.startBound) continue;
      pick = &shape;
      if (shape.chunk >= rest) break;
    }
    if (!pick) break;
    plan.push_back({std::min(pick->chunk, rest), pick->chunk});
    pos += plan.back().tokens;
  }
  return plan;
}

int64_t plannedTokens(const std::vector<PlannedChunk>& plan) {
  int64_t n = 0;
  for (const PlannedChunk& c : plan) n += c.tokens;
  return n;
}

}  // namespace

int64_t plannedSteps(const Stepper& s, size_t promptTokens, const DecodeOptions& o) {
  const std::vector<PlannedChunk> plan = prefillPlan(s, int64_t(promptTokens), o);
  return int64_t(plan.size()) + decodeSteps(promptTokens, o.maxNew) - plannedTokens(plan);
}

void checkDecode(Stepper& s, const std::vector<int64_t>& tokens, int64_t maxNew) {
  const Interface io = stepInterface(s);
  if (tokens.empty()) throw DecodeError("nothing to decode: give at least one prompt token");
  if (maxNew < 0) throw DecodeError("the number of new tokens must not be negative (got " + str(maxNew) + ")");
  const std::vector<StepperInput> in = s.inputs();
  // The vocabulary: what the token may index (the embedding's rows), else the logits' length.
  const int64_t vocab = in[size_t(io.token)].bound >= 0 ? in[size_t(io.token)].bound : int64_t(s.vocab());
  for (int64_t t : tokens)
    if (t < 0 || t >= vocab)
      throw DecodeError("token id " + str(t) + " is out of range: the vocabulary has " + str(vocab) + " entries");
  // The positions: 0 .. steps - 1, all within the KV cache.
  const int64_t bound = in[size_t(io.pos)].bound;
  const int64_t steps = decodeSteps(tokens.size(), maxNew), last = steps - 1;
  const int64_t P = int64_t(tokens.size());
  if (bound >= 0 && last >= bound) {
    std::string why = s.inputProblem(size_t(io.pos), last);
    if (why.empty()) why = "pos must stay below " + str(bound);
    std::string msg = "the sequence does not fit: ";
    if (maxNew == 0) msg += "teacher forcing " + str(P) + (P == 1 ? " token" : " tokens") + " needs positions 0 .. " + str(last);
    else msg += str(P) + (P == 1 ? " prompt token + " : " prompt tokens + ") + str(maxNew) + " new need positions 0 .. " + str(last);
    msg += ", and " + why;
    if (maxNew == 0) msg += "; at most " + str(bound) + " tokens fit";
    else if (bound - P + 1 >= 1) msg += "; with this prompt --max-new can be at most " + str(bound - P + 1);
    else msg += "; the prompt alone is longer than that";
    throw DecodeError(msg);
  }
}

DecodeResult decode(Stepper& s, const std::vector<int64_t>& tokens, const DecodeOptions& o) {
  checkDecode(s, tokens, o.maxNew);
  const Interface io = stepInterface(s);
  DecodeResult r;
  r.promptTokens = int64_t(tokens.size());
  r.steps = plannedSteps(s, tokens.size(), o);
  r.vocab = s.vocab();
  r.timeSource = s.timeSource();
  const bool needLogits = o.keepLogits || !s.hasNext();
  if (o.keepLogits) r.logits.reserve(size_t(r.steps) * r.vocab);

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  std::vector<float> logits;
  int64_t steps = 0;  // run so far
  // After a step: its time, logits and next token. `prompt`: it fed prompt tokens only.
  auto finish = [&](bool prompt) {
    ++steps;
    r.stepMs.push_back(s.lastStepMs());
    if (prompt) ++r.promptSteps;
    else r.decodeMs.push_back(s.lastStepMs());
    if (needLogits) {
      logits = s.logits();
      if (logits.size() != r.vocab)
        throw DecodeError("step " + str(steps) + " returned " + str(int64_t(logits.size())) + " logits; expected " +
                          str(int64_t(r.vocab)));
      if (o.keepLogits) r.logits.insert(r.logits.end(), logits.begin(), logits.end());
    }
    const int64_t next = s.hasNext() ? s.next() : int64_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
    if (o.afterStep) o.afterStep(steps);
    return next;
  };
  auto generated = [&](int64_t next) {
    if (r.generated.empty()) r.ttftMs = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    r.generated.push_back(next);
  };

  // The prompt's chunks through the prefill steps, then one token per step from `pos` on.
  const std::vector<PlannedChunk> plan = prefillPlan(s, r.promptTokens, o);
  const int64_t consumed = plannedTokens(plan);
  int64_t pos = 0, token = tokens[0];
  for (const PlannedChunk& chunk : plan) {
    const int64_t n = chunk.tokens;
    s.prefill(std::vector<int64_t>(tokens.begin() + pos, tokens.begin() + pos + n), pos, chunk.chunk);
    ++r.prefillSteps;
    r.prefillChunks.push_back(chunk.chunk);
    const int64_t next = finish(true);
    pos += n;
    if (pos == r.promptTokens) generated(next), token = next;
    else if (pos == consumed) token = tokens[size_t(pos)];
  }
  std::vector<int64_t> in(2);
  for (const int64_t end = decodeSteps(tokens.size(), o.maxNew); pos < end; ++pos) {
    in[size_t(io.token)] = token;
    in[size_t(io.pos)] = pos;
    for (size_t i = 0; i < in.size(); ++i)
      if (std::string p = s.inputProblem(i, in[i]); !p.empty()) throw DecodeError("step " + str(steps + 1) + ": " + p);
    s.step(in);
    const int64_t next = finish(pos < r.promptTokens);
    if (pos + 1 < r.promptTokens) {
      token = tokens[size_t(pos + 1)];
    } else {
      generated(next);
      token = next;
    }
  }
  // Teacher forcing: the prediction after the last token is not a generated one (its time, the
  // whole prompt's, stays the time to first token).
  if (o.maxNew == 0) r.generated.clear();
  return r;
}

namespace {

// Nearest-rank percentile of a sorted list.
double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t rank = size_t(std::ceil(p / 100.0 * double(sorted.size())));
  return sorted[std::min(sorted.size(), std::max<size_t>(rank, 1)) - 1];
}

}  // namespace

std::string latencySummary(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  char buf[160];
  std::snprintf(buf, sizeof buf, "median %.3f ms, p90 %.3f ms, p99 %.3f ms", percentile(v, 50), percentile(v, 90),
                percentile(v, 99));
  return buf;
}

std::vector<std::string> decodeReport(const DecodeResult& r) {
  std::vector<std::string> lines;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%lld steps (%lld prompt tokens, %lld generated)", (long long)r.steps,
                (long long)r.promptTokens, (long long)r.generated.size());
  lines.push_back(buf);
  if (r.ttftMs >= 0 && r.prefillSteps == 0) {
    std::snprintf(buf, sizeof buf, "time to first token: %.3f ms (the %lld prompt step%s, host wall clock)", r.ttftMs,
                  (long long)r.promptTokens, r.promptTokens == 1 ? "" : "s");
    lines.push_back(buf);
  } else if (r.ttftMs >= 0) {
    const int64_t single = r.promptSteps - r.prefillSteps;
    const std::string rest = single ? ", then " + str(single) + " one token per step" : "";
    // "of 4" where every chunk has one length, else runs of equal ones: "of 3 x 512 + 128".
    std::string chunks;
    const std::vector<int64_t>& c = r.prefillChunks;
    const bool oneLength = std::all_of(c.begin(), c.end(), [&](int64_t t) { return t == c.at(0); });
    for (size_t i = 0; i < c.size();) {
      size_t j = i;
      while (j < c.size() && c[j] == c[i]) ++j;
      chunks += (i ? " + " : "") + (j - i > 1 && !oneLength ? str(int64_t(j - i)) + " x " : "") + str(c[i]);
      i = j;
    }
    std::snprintf(buf, sizeof buf, "%.3f", r.ttftMs);
    lines.push_back("time to first token: " + std::string(buf) + " ms (the " + str(r.promptTokens) +
                    " prompt tokens in " + str(r.prefillSteps) + " prefill step" + (r.prefillSteps == 1 ? "" : "s") +
                    " of " + chunks + rest + ", host wall clock)");
    double sum = 0;
    for (int64_t i = 0; i < r.prefillSteps; ++i) sum += r.stepMs[size_t(i)];
    std::snprintf(buf, sizeof buf, "prefill: %.3f ms in %lld step%s (%s)", sum, (long long)r.prefillSteps,
                  r.prefillSteps == 1 ? "" : "s", r.timeSource.c_str());
    lines.push_back(buf);
  }
  if (!r.decodeMs.empty())
    lines.push_back("per-token latency (" + std::to_string(r.decodeMs.size()) + " decode steps, " + r.timeSource +
                    "): " + latencySummary(r.decodeMs));
  if (!r.stepMs.empty())
    lines.push_back("step time (all " + std::to_string(r.stepMs.size()) + " steps, " + r.timeSource +
                    "): " + latencySummary(r.stepMs));
  return lines;
}

MetadataStepper::MetadataStepper(KernelMetadata metadata) : md_(std::move(metadata)) {
  for (const OutputMeta& o : md_.outputs) {
    if (logits_ < 0 && o.role == abi::Role::Logits) logits_ = o.tensor;
    if (next_ < 0 && o.role == abi::Role::NextToken) next_ = o.tensor;
  }
}

std::vector<StepperInput> MetadataStepper::inputs() const {
  std::vector<StepperInput> v;
  for (const InputMeta& in : md_.inputs) v.push_back({in.name, in.bound, in.role});
  return v;
}

size_t MetadataStepper::vocab() const { return logits_ < 0 ? 0 : size_t(md_.tensors[size_t(logits_)].elements()); }

void MetadataStepper::step(const std::vector<int64_t>&) {
  throw DecodeError("this stepper only describes the step (" + md_.program + "); it cannot run it");
}
std::vector<float> MetadataStepper::logits() { throw DecodeError("no step has run"); }
int64_t MetadataStepper::next() { throw DecodeError("no step has run"); }

MkrtStepper::MkrtStepper(mkrt::Model& model) : model_(model), decodeStep_(model.selectedStep()) {
  const auto ins = model_.inputs();
  for (size_t i = 0; i < ins.size(); ++i) inputs_.push_back({ins[i].name, model_.inputBound(i), abi::Role(ins[i].role)});
  for (const mkrt_tensor_info& o : model_.outputs()) {
    if (logits_.empty() && o.role == MKRT_ROLE_LOGITS) logits_ = o.name, vocab_ = o.elements;
    if (next_.empty() && o.role == MKRT_ROLE_NEXT_TOKEN) next_ = o.name;
  }
  // The prefill steps: inputs Tokens [T], Position and Row; logits of the decode step's length.
  // Of those of one T, the one with the fewest outputs.
  for (const std::string& name : model_.stepNames()) {
    if (name == decodeStep_) continue;
    model_.selectStep(name);
    PrefillStep p;
    p.step = name;
    const auto pins = model_.inputs();
    bool other = false;
    for (size_t i = 0; i < pins.size(); ++i) {
      const mkrt_tensor_info& in = pins[i];
      if (in.role == MKRT_ROLE_TOKENS && in.rank == 1 && p.tokens.empty()) p.tokens = in.name, p.chunk = in.shape[0];
      else if (in.role == MKRT_ROLE_POSITION && in.rank == 0 && p.pos0.empty()) p.pos0 = in.name, p.startBound = model_.inputBound(i);
      else if (in.role == MKRT_ROLE_ROW && in.rank == 0 && p.row.empty()) p.row = in.name;
      else other = true;
    }
    const auto outs = model_.outputs();
    for (const mkrt_tensor_info& o : outs) {
      if (p.logits.empty() && o.role == MKRT_ROLE_LOGITS && o.elements == vocab_) p.logits = o.name;
      if (p.next.empty() && o.role == MKRT_ROLE_NEXT_TOKEN) p.next = o.name;
    }
    if (other || p.tokens.empty() || p.pos0.empty() || p.row.empty() || p.logits.empty() || p.chunk <= 0 ||
        (next_.empty() != p.next.empty()))
      continue;
    p.outputs = outs.size();
    auto same = std::find_if(prefill_.begin(), prefill_.end(), [&](const PrefillStep& q) { return q.chunk == p.chunk; });
    if (same == prefill_.end()) prefill_.push_back(p);
    else if (p.outputs < same->outputs) *same = p;
  }
  std::sort(prefill_.begin(), prefill_.end(), [](const PrefillStep& a, const PrefillStep& b) { return a.chunk < b.chunk; });
  model_.selectStep(decodeStep_);
}

void MkrtStepper::select(const std::string& step) {
  if (model_.selectedStep() != step) model_.selectStep(step);
}

std::vector<Stepper::PrefillShape> MkrtStepper::prefillShapes() const {
  std::vector<PrefillShape> shapes;
  for (const PrefillStep& p : prefill_) shapes.push_back({p.chunk, p.startBound});
  return shapes;
}

void MkrtStepper::prefill(const std::vector<int64_t>& tokens, int64_t pos0, int64_t chunk) {
  auto it = std::find_if(prefill_.begin(), prefill_.end(), [&](const PrefillStep& p) { return p.chunk == chunk; });
  if (it == prefill_.end()) {
    if (prefill_.empty()) Stepper::prefill(tokens, pos0, chunk);
    throw DecodeError("the program has no prefill step of " + str(chunk) + " tokens");
  }
  const PrefillStep& p = *it;
  if (tokens.empty() || int64_t(tokens.size()) > p.chunk)
    throw DecodeError("a prefill chunk holds 1 .. " + str(p.chunk) + " tokens; got " + str(int64_t(tokens.size())));
  select(p.step);
  std::vector<int32_t> padded(size_t(p.chunk), 0);
  for (size_t i = 0; i < tokens.size(); ++i) padded[i] = int32_t(tokens[i]);
  model_.setInput(p.tokens, padded, {p.chunk});
  model_.setInput(p.pos0, int32_t(pos0));
  model_.setInput(p.row, int32_t(tokens.size() - 1));
  model_.step();
  inPrefill_ = int(it - prefill_.begin());
}

void MkrtStepper::step(const std::vector<int64_t>& inputs) {
  select(decodeStep_);
  inPrefill_ = -1;
  if (inputs.size() != inputs_.size())
    throw DecodeError("the step takes " + str(int64_t(inputs_.size())) + " inputs; got " + str(int64_t(inputs.size())));
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] < INT32_MIN || inputs[i] > INT32_MAX)
      throw DecodeError("input '" + inputs_[i].name + "' = " + str(inputs[i]) + " does not fit in i32");
    model_.setInput(inputs_[i].name, int32_t(inputs[i]));
  }
  model_.step();
}

std::vector<float> MkrtStepper::logits() { return model_.output(inPrefill_ >= 0 ? prefill_[size_t(inPrefill_)].logits : logits_); }

int64_t MkrtStepper::next() { return model_.outputInts(inPrefill_ >= 0 ? prefill_[size_t(inPrefill_)].next : next_).at(0); }

int64_t traceStepOf(int64_t step, int64_t steps) {
  if (step < 0 || step > steps)
    throw DecodeError("--trace-step " + str(step) + " is not a step of this decode: it runs steps 1 .. " + str(steps));
  return step ? step : steps;
}

TraceCapture::TraceCapture(mkrt::Model& model, int64_t step, int64_t steps) : model_(model) {
  if (!model_.traced()) throw DecodeError("the kernel was built without --trace: rebuild it with mkdsl build --trace");
  step_ = traceStepOf(step, steps);
  info_.records = int64_t(model_.traceRecords());
  for (const mkrt_trace_node& n : model_.traceNodes()) info_.nodes.push_back({n.name, n.op, n.tasks, n.bytes, n.bytes_exact != 0});
}

void TraceCapture::afterStep(int64_t step) {
  if (step != step_) return;
  words_ = model_.readTrace();
  captured_ = true;
}

std::vector<std::string> TraceCapture::write(const std::string& path) const {
  if (!captured_) throw DecodeError("step " + str(step_) + " did not run: there is no trace to write");
  writeTraceFile(path, traceEventsJson(info_, words_, step_));
  std::vector<std::string> lines = traceReport(summarizeTrace(info_, words_, step_));
  lines.insert(lines.begin(), "wrote the trace to " + path + " (open it in ui.perfetto.dev or chrome://tracing)");
  return lines;
}

}  // namespace mk::runtime
