// A thin C++ wrapper over the mkrt C API (mkrt.h): RAII for the model, exceptions for failures.
//
//   mkrt::Model m("tiny.ptx", "tiny.meta.json");    // throws mkrt::Error
//   m.randomWeights(7);
//   m.step({token, pos});
//   std::vector<float> logits = m.output("logits");
#pragma once

#include <cstdint>
#include <initializer_list>
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
  void step(const std::vector<int64_t>& inputs) { check(mkrt_step(m_, inputs.data(), inputs.size())); }
  void step(std::initializer_list<int64_t> inputs) { step(std::vector<int64_t>(inputs)); }
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

  uint64_t stepsRun() const { return mkrt_steps_run(m_); }
  double lastStepMs() const { return mkrt_last_step_ms(m_); }
  std::string device() const { return mkrt_device_description(m_); }
  mkrt_model* get() const { return m_; }

 private:
  void check(mkrt_status s) const {
    if (s != MKRT_OK) throw Error(s, mkrt_last_error(m_));
  }
  mkrt_model* m_ = nullptr;
};

}  // namespace mkrt
