// A thin C++ wrapper over the mkrt C API (mkrt.h): RAII for the model, exceptions for failures.
//
//   mkrt::Model m("tiny.ptx", "tiny.meta.json");    // throws mkrt::Error
//   m.randomWeights(7);
//   m.setInput("token", token);
//   m.setInput("pos", pos);
//   m.step();
//   std::vector<float> logits = m.output("logits");
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "runtime/mkrt.h"

namespace mkrt {

class Error : public std::runtime_error {
 public:
  Error(mkrt_status status, const std::string& message) : std::runtime_error(message), status_(status) {}
  mkrt_status status() const { return status_; }

 private:
  mkrt_status status_;
};

class Model {
 public:
  Model(const std::string& ptxPath, const std::string& metadataPath, int device = 0) {
    char err[4096];
    m_ = mkrt_open(ptxPath.c_str(), metadataPath.c_str(), device, err, sizeof err);
    if (!m_) throw Error(mkrt_open_status(), err);
  }
  // From memory (mkrt_open_data): the PTX (or cubin) and the metadata JSON, e.g. from mk::compile.
  static Model fromData(const std::string& ptx, const std::string& metadataJson, int device = 0) {
    char err[4096];
    mkrt_model* m = mkrt_open_data(ptx.data(), ptx.size(), metadataJson.data(), metadataJson.size(), device, err, sizeof err);
    if (!m) throw Error(mkrt_open_status(), err);
    return Model(m);
  }
  // Throws unless a kernel could be opened on `device` (mkrt_probe_device).
  static void probeDevice(int device = 0) {
    char err[4096];
    if (mkrt_status s = mkrt_probe_device(device, err, sizeof err); s != MKRT_OK) throw Error(s, err);
  }
  ~Model() { mkrt_close(m_); }
  Model(Model&& o) noexcept : m_(std::exchange(o.m_, nullptr)) {}
  Model& operator=(Model&& o) noexcept {
    if (this != &o) {
      mkrt_close(m_);
      m_ = std::exchange(o.m_, nullptr);
    }
    return *this;
  }
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  void loadWeights(const std::string& path) { check(mkrt_load_weights(m_, path.c_str())); }
  void randomWeights(uint64_t seed) { check(mkrt_random_weights(m_, seed)); }
  // A scalar i32 input, or a tensor input's elements in row-major order with its shape
  // (mkrt_set_input).
  void setInput(const std::string& name, int32_t value) {
    check(mkrt_set_input(m_, name.c_str(), MKRT_I32, 0, nullptr, &value, sizeof value));
  }
  void setInput(const std::string& name, const std::vector<float>& values, const std::vector<int64_t>& shape) {
    check(mkrt_set_input(m_, name.c_str(), MKRT_F32, int(shape.size()), shape.data(), values.data(),
                         values.size() * sizeof(float)));
  }
  void setInput(const std::string& name, const std::vector<int32_t>& values, const std::vector<int64_t>& shape) {
    check(mkrt_set_input(m_, name.c_str(), MKRT_I32, int(shape.size()), shape.data(), values.data(),
                         values.size() * sizeof(int32_t)));
  }
  void step() { check(mkrt_step(m_)); }

  // The program's steps (mkrt_select_step): the per-step methods address the selected one.
  size_t numSteps() const { return mkrt_num_steps(m_); }
  std::string stepName(size_t index) const { return mkrt_step_name(m_, index); }
  std::vector<std::string> stepNames() const {
    std::vector<std::string> v;
    for (size_t i = 0; i < numSteps(); ++i) v.push_back(stepName(i));
    return v;
  }
  void selectStep(const std::string& name) { check(mkrt_select_step(m_, name.c_str())); }
  std::string selectedStep() const { return mkrt_selected_step(m_); }
  void reset() { check(mkrt_reset(m_)); }
  void setTimeoutNs(uint64_t ns) { check(mkrt_set_timeout_ns(m_, ns)); }

  std::vector<mkrt_tensor_info> inputs() const {
    std::vector<mkrt_tensor_info> v(mkrt_num_inputs(m_));
    for (size_t i = 0; i < v.size(); ++i) mkrt_input_info(m_, i, &v[i]);
    return v;
  }
  std::vector<mkrt_tensor_info> outputs() const {
    std::vector<mkrt_tensor_info> v(mkrt_num_outputs(m_));
    for (size_t i = 0; i < v.size(); ++i) mkrt_output_info(m_, i, &v[i]);
    return v;
  }
  // The output's element count, or throws if there is no such output.
  size_t outputElements(const std::string& name) const {
    for (const mkrt_tensor_info& i : outputs())
      if (name == i.name) return i.elements;
    throw Error(MKRT_ERR_ARGUMENT, "the step has no output '" + name + "'");
  }
  std::vector<float> output(const std::string& name) {
    std::vector<float> v(outputElements(name));
    check(mkrt_read_output(m_, name.c_str(), v.data(), v.size()));
    return v;
  }
  std::vector<int32_t> outputInts(const std::string& name) {
    std::vector<int32_t> v(outputElements(name));
    check(mkrt_read_output_i32(m_, name.c_str(), v.data(), v.size()));
    return v;
  }

  // Input `index`'s exclusive upper bound, or -1 (mkrt_input_bound).
  int64_t inputBound(size_t index) const {
    int64_t b = -1;
    check(mkrt_input_bound(m_, index, &b));
    return b;
  }
  // Why `value` is out of input `index`'s bound; "" when it is fine (mkrt_check_input).
  std::string inputProblem(size_t index, int64_t value) {
    return mkrt_check_input(m_, index, value) == MKRT_OK ? std::string() : std::string(mkrt_last_error(m_));
  }
  std::string configName() const { return mkrt_config_name(m_); }
  // A config field's value, or `fallback` when the config has no such field.
  double configValue(const std::string& name, double fallback) const {
    double v = 0;
    return mkrt_config_value(m_, name.c_str(), &v) == MKRT_OK ? v : fallback;
  }
  std::string declaredAt(const std::string& tensor) const { return mkrt_tensor_declared_at(m_, tensor.c_str()); }

  // Tracing (a kernel built with `mkdsl build --trace`; mkrt_read_trace).
  bool traced() const { return mkrt_is_traced(m_) != 0; }
  size_t traceRecords() const { return mkrt_trace_records(m_); }
  std::vector<mkrt_trace_node> traceNodes() const {
    std::vector<mkrt_trace_node> v(mkrt_num_trace_nodes(m_));
    for (size_t i = 0; i < v.size(); ++i) mkrt_trace_node_info(m_, i, &v[i]);
    return v;
  }
  // The last step's records, MKRT_TRACE_RECORD_WORDS words each; throws for an untraced kernel.
  std::vector<uint64_t> readTrace() {
    std::vector<uint64_t> words(traceRecords() * MKRT_TRACE_RECORD_WORDS);
    check(mkrt_read_trace(m_, words.data(), words.size()));
    return words;
  }

  uint64_t stepsRun() const { return mkrt_steps_run(m_); }
  double lastStepMs() const { return mkrt_last_step_ms(m_); }
  std::string device() const { return mkrt_device_description(m_); }
  mkrt_model* get() const { return m_; }

 private:
  explicit Model(mkrt_model* m) : m_(m) {}
  void check(mkrt_status s) const {
    if (s != MKRT_OK) throw Error(s, mkrt_last_error(m_));
  }
  mkrt_model* m_ = nullptr;
};

}  // namespace mkrt
