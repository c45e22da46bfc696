// The mkrt C API (mkrt.h): one compiled megakernel on one GPU, through the CUDA driver API
// (cuda_driver.h, loaded at run time). Launch ABI: backend/backend.h LaunchInfo, restated in
// metadata.h; everything about the program comes from the metadata sidecar.
#include "runtime/mkrt.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "runtime/cuda_driver.h"
#include "runtime/metadata.h"
#include "runtime/safetensors.h"
#include "runtime/weights.h"

using namespace mk;
using namespace mk::runtime;
using namespace mk::runtime::cu;

static_assert(MKRT_TRACE_RECORD_WORDS == TraceWords, "mkrt.h and abi/records.h disagree on the trace record");

namespace {

// A failed call: its status and message. Thrown inside the implementation, caught at the API.
struct Failure {
  mkrt_status status;
  std::string message;
};

[[noreturn]] void failWith(mkrt_status s, std::string msg) { throw Failure{s, std::move(msg)}; }

// mkrt.h is C, so its dtype enum restates abi/dtype.h's values; these keep them one.
static_assert(MKRT_BF16 == int(DType::BF16) && MKRT_F16 == int(DType::F16) && MKRT_F32 == int(DType::F32) &&
                  MKRT_I32 == int(DType::I32) && MKRT_BOOL == int(DType::Bool),
              "mkrt.h's mkrt_dtype and abi/dtype.h disagree");
mkrt_dtype toApi(DType t) { return mkrt_dtype(int(t)); }
static_assert(MKRT_ROLE_NONE == int(abi::Role::None) && MKRT_ROLE_TOKEN == int(abi::Role::Token) &&
                  MKRT_ROLE_POSITION == int(abi::Role::Position) && MKRT_ROLE_LOGITS == int(abi::Role::Logits) &&
                  MKRT_ROLE_NEXT_TOKEN == int(abi::Role::NextToken) && MKRT_ROLE_TOKENS == int(abi::Role::Tokens) &&
                  MKRT_ROLE_ROW == int(abi::Role::Row),
              "mkrt.h's mkrt_role and abi/metadata.h disagree");
mkrt_role toApi(abi::Role r) { return mkrt_role(int(r)); }

// "sm_90a" -> {9, 0, 'a'}; nullopt for anything else (then only the driver checks).
struct Arch {
  int major = 0, minor = 0;
  char suffix = 0;
};
std::optional<Arch> parseArch(const std::string& s) {
  if (s.size() < 5 || s.compare(0, 3, "sm_") != 0) return std::nullopt;
  size_t end = s.size();
  Arch a;
  if (s.back() == 'a' || s.back() == 'f') a.suffix = s.back(), --end;
  if (end - 3 < 2) return std::nullopt;
  int v = 0;
  for (size_t i = 3; i < end; ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    v = v * 10 + (s[i] - '0');
  }
  a.major = v / 10;
  a.minor = v % 10;
  return a;
}

// The word after ".target" in PTX text ("sm_90a"), or "".
std::string ptxTarget(const std::string& ptx) {
  size_t p = ptx.find(".target");
  if (p == std::string::npos) return "";
  p += 7;
  while (p < ptx.size() && (ptx[p] == ' ' || ptx[p] == '\t')) ++p;
  size_t e = p;
  while (e < ptx.size() && (isalnum(static_cast<unsigned char>(ptx[e])) || ptx[e] == '_')) ++e;
  return ptx.substr(p, e - p);
}

// Whether the PTX text defines kernel `entry` (".entry mk_step(").
bool ptxHasEntry(const std::string& ptx, const std::string& entry) {
  for (size_t p = ptx.find(".entry"); p != std::string::npos; p = ptx.find(".entry", p + 6)) {
    size_t q = p + 6;
    while (q < ptx.size() && (ptx[q] == ' ' || ptx[q] == '\t')) ++q;
    if (ptx.compare(q, entry.size(), entry) == 0) {
      size_t r = q + entry.size();
      if (r >= ptx.size() || ptx[r] == '(' || ptx[r] == ' ' || ptx[r] == '\t' || ptx[r] == '\n' || ptx[r] == '\r') return true;
    }
  }
  return false;
}

}  // namespace

// What one step of the program has of its own on the device: its kernel entry, activations, sync
// counters, error record, inputs and trace records, and its launches (the weights and state
// arenas are the model's, shared by every step).
struct StepEntry {
  const KernelMetadata* meta = nullptr;  // its view: the model's `meta` or one of its otherSteps
  CUfunction fn = nullptr;
  CUdeviceptr activations = 0, sync = 0, error = 0, inputs = 0;
  CUdeviceptr trace = 0;  // u64[records * TraceWords] of a traced kernel, else 0
  bool traceWritten = false;  // a launch has written the records since open / reset
  uint64_t steps = 0;         // launches since open / reset: its counters' last epoch
  double lastMs = 0;

  std::vector<mkrt_tensor_info> inInfo, outInfo;
  // Each step input's value as mkrt_set_input gave it (logical row-major, in its dtype's
  // storage); nullopt until set.
  std::vector<std::optional<std::vector<uint8_t>>> inputValues;
  std::vector<mkrt_trace_node> traceNodes;

  uint64_t traceBytes() const { return meta->trace ? uint64_t(meta->trace->records) * TraceWords * 8 : 0; }
};

struct mkrt_model {
  KernelMetadata meta;  // the program's first step; its otherSteps the others
  std::string ptxPath, metaPath;  // or, for mkrt_open_data, what messages call the two
  bool fromMemory = false;
  std::shared_ptr<const Driver> drv;
  CUcontext ctx = nullptr;
  CUmodule module = nullptr;
  CUdeviceptr weights = 0, state = 0;  // every step's
  std::vector<StepEntry> entries;      // by step: the first, then meta.otherSteps in order
  size_t selected = 0;                 // the step the per-step functions address
  CUevent start = nullptr, stop = nullptr;
  std::string device;

  uint64_t timeoutNs = 2000000000ull;
  bool weightsLoaded = false;
  // Why steps are refused until mkrt_reset ("" when fine): a failed step of any entry may have
  // half-written the state every step shares.
  std::string broken;
  bool contextLost = false;
  std::string lastError;

  StepEntry& current() { return entries[selected]; }
  const StepEntry& current() const { return entries[selected]; }
  const KernelMetadata& md() const { return *current().meta; }  // the selected step's view
  // " of step 'prefill'" for messages about one step of several; "" for a program of one step.
  std::string ofStep(const StepEntry& e) const { return entries.size() > 1 ? " of step '" + e.meta->step + "'" : ""; }
  // "step 3" (e's next launch) or, in a program of several, "step 3 of 'prefill'".
  std::string launchName(const StepEntry& e) const {
    return "step " + std::to_string(e.steps + 1) + (entries.size() > 1 ? " of '" + e.meta->step + "'" : "");
  }

  ~mkrt_model() {
    if (!drv || !ctx) return;
    drv->ctxSetCurrent(ctx);
    if (start) drv->eventDestroy(start);
    if (stop) drv->eventDestroy(stop);
    for (CUdeviceptr p : {weights, state})
      if (p) drv->memFree(p);
    for (const StepEntry& e : entries)
      for (CUdeviceptr p : {e.activations, e.sync, e.error, e.inputs, e.trace})
        if (p) drv->memFree(p);
    if (module) drv->moduleUnload(module);
    drv->ctxDestroy(ctx);
  }

  void check(CUresult r, const std::string& what) const {
    if (r != CUDA_SUCCESS) failWith(MKRT_ERR_DRIVER, what + " failed: " + drv->describe(r));
  }
  void makeCurrent() const { check(drv->ctxSetCurrent(ctx), "cuCtxSetCurrent"); }

  // Every buffer has at least 256 bytes, so that an empty one is still a valid pointer.
  static size_t bufferBytes(uint64_t bytes) { return size_t(std::max<uint64_t>(bytes, 256)); }
  void zero(CUdeviceptr p, uint64_t bytes, const std::string& what) const {
    check(drv->memsetD8(p, 0, bufferBytes(bytes)), "zeroing the " + what);
  }
  CUdeviceptr alloc(uint64_t bytes, const std::string& what) {
    CUdeviceptr p = 0;
    CUresult r = drv->memAlloc(&p, bufferBytes(bytes));
    if (r != CUDA_SUCCESS)
      failWith(MKRT_ERR_DRIVER, "cannot allocate " + std::to_string(bytes) + " bytes for the " + what + " on " + device + ": " +
                                    drv->describe(r));
    zero(p, bytes, what);
    return p;
  }

  CUdeviceptr arenaBase(const StepEntry& e, Arena a) const {
    return a == Arena::Weights ? weights : a == Arena::State ? state : e.activations;
  }
  CUdeviceptr tensorPtr(const StepEntry& e, const TensorMeta& t) const { return arenaBase(e, t.arena) + t.offset; }

  void upload(const StepEntry& e, const TensorMeta& t, const std::vector<uint8_t>& storage) {
    check(drv->memcpyHtoD(tensorPtr(e, t), storage.data(), storage.size()), "copying '" + t.name + "' to the GPU");
  }
};

namespace {

// Loads the driver and checks that `device` exists; returns the driver.
std::shared_ptr<const Driver> openDriver(int device) {
  if (device < 0) failWith(MKRT_ERR_ARGUMENT, "device " + std::to_string(device) + " is not a device index");
  std::string why;
  std::shared_ptr<const Driver> drv = loadDriver(why);
  if (!drv) failWith(MKRT_ERR_DRIVER, why);
  const Driver& d = *drv;
  if (CUresult r = d.init(0); r != CUDA_SUCCESS)
    failWith(MKRT_ERR_DRIVER, (r == CUDA_ERROR_NO_DEVICE ? "no CUDA device on this machine: cuInit: "
                                                         : "the CUDA driver does not initialize: cuInit: ") +
                                  d.describe(r));
  int count = 0;
  if (CUresult r = d.deviceGetCount(&count); r != CUDA_SUCCESS)
    failWith(MKRT_ERR_DRIVER, "cuDeviceGetCount failed: " + d.describe(r));
  if (device >= count)
    failWith(MKRT_ERR_ARGUMENT, "there is no CUDA device " + std::to_string(device) + " (this machine has " +
                                    std::to_string(count) + ")");
  return drv;
}

// `image` is the PTX text or cubin; ptxPath and metaPath name the two in messages.
void open(mkrt_model& m, std::string image, const KernelMetadata& metadata, int device) {
  m.meta = metadata;
  const KernelMetadata& md = m.meta;  // the program-wide fields (arch, weights and state) are every view's
  m.entries.emplace_back().meta = &md;
  for (const KernelMetadata& other : md.otherSteps) m.entries.emplace_back().meta = &other;
  if (image.empty()) failWith(MKRT_ERR_FILE, m.ptxPath + (m.fromMemory ? " is empty" : ": the file is empty"));
  // mkdsl build --target gfx942 (or gfx90a) writes the same sidecar beside an AMDGPU code object.
  if (md.arch.rfind("gfx", 0) == 0)
    failWith(MKRT_ERR_FILE, m.metaPath + " describes a kernel for " + md.arch +
                                " (AMDGPU); mkrt runs NVPTX kernels through the CUDA driver: load the code object "
                                "from a HIP host (runtime/README.md)");
  const bool cubin = image.compare(0, 4, "\x7f" "ELF") == 0;
  if (!cubin) {
    std::string target = ptxTarget(image);
    if (!target.empty() && target != md.arch)
      failWith(MKRT_ERR_FILE, m.ptxPath + " is built for " + target + " but " + m.metaPath + " says " + md.arch +
                                  ": the two files are from different builds");
    for (const StepEntry& e : m.entries)
      if (!ptxHasEntry(image, e.meta->entry))
        failWith(MKRT_ERR_FILE, m.ptxPath + ": no kernel `" + e.meta->entry + "` (the entry " + m.metaPath + " names" +
                                    (m.entries.size() > 1 ? " for step '" + e.meta->step + "'" : "") +
                                    ") in this PTX: are the two files from the same build?");
    image.push_back('\0');  // the driver reads PTX as a C string
  }
  m.drv = openDriver(device);
  const Driver& d = *m.drv;
  CUdevice dev = 0;
  m.check(d.deviceGet(&dev, device), "cuDeviceGet");
  char name[256] = {};
  m.check(d.deviceGetName(name, sizeof name - 1, dev), "cuDeviceGetName");
  auto attr = [&](CUdevice_attribute a, const char* what) {
    int v = 0;
    m.check(d.deviceGetAttribute(&v, a, dev), std::string("cuDeviceGetAttribute(") + what + ")");
    return v;
  };
  const int ccMajor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute capability");
  const int ccMinor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute capability");
  const int sms = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "SM count");
  const int smemOptin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "shared memory");
  const std::string devArch = "sm_" + std::to_string(ccMajor) + std::to_string(ccMinor);
  m.device = "device " + std::to_string(device) + " (" + name + ", " + devArch + ", " + std::to_string(sms) + " SMs)";

  // The kernel's architecture against the device's (before the driver's less telling error).
  if (auto a = parseArch(md.arch)) {
    const bool exact = a->suffix == 'a', family = a->suffix == 'f';
    const bool ok = exact    ? ccMajor == a->major && ccMinor == a->minor
                    : family ? ccMajor == a->major && ccMinor >= a->minor
                             : ccMajor > a->major || (ccMajor == a->major && ccMinor >= a->minor);
    if (!ok)
      failWith(MKRT_ERR_KERNEL, "the kernel is built for " + md.arch + " (" +
                                    (exact ? "compute capability " + std::to_string(a->major) + "." + std::to_string(a->minor) + " only"
                                           : "compute capability " + std::to_string(a->major) + "." + std::to_string(a->minor) + " or newer") +
                                    ") but " + m.device + " is " + devArch +
                                    ": rebuild it for this GPU (mkdsl build --gpu NAME --target ARCH)");
  }

  m.check(d.ctxCreate(&m.ctx, 0, dev), "cuCtxCreate on " + m.device);

  // The module: PTX is JIT-compiled here; its log explains a rejection.
  std::vector<char> errLog(16384, 0), infoLog(16384, 0);
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                         CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {errLog.data(), reinterpret_cast<void*>(uintptr_t(errLog.size() - 1)), infoLog.data(),
                  reinterpret_cast<void*>(uintptr_t(infoLog.size() - 1))};
  if (CUresult r = d.moduleLoadDataEx(&m.module, image.data(), 4, opts, vals); r != CUDA_SUCCESS) {
    m.module = nullptr;
    std::string log(errLog.data(), strnlen(errLog.data(), errLog.size()));
    while (!log.empty() && (log.back() == '\n' || log.back() == ' ')) log.pop_back();
    int version = 0;
    d.driverGetVersion(&version);
    std::string msg = "the CUDA driver rejected " + m.ptxPath + " on " + m.device + ": " + d.describe(r);
    if (r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
      msg += "; the driver supports CUDA " + std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10) +
             ", older than the PTX ISA this file uses";
    if (!log.empty()) msg += "\n" + log;
    failWith(MKRT_ERR_KERNEL, msg);
  }

  // Each step's entry, and whether it fits the device.
  for (StepEntry& e : m.entries) {
    const KernelMetadata& s = *e.meta;
    const std::string note = m.entries.size() > 1 ? "step '" + s.step + "': " : "";
    if (CUresult r = d.moduleGetFunction(&e.fn, m.module, s.entry.c_str()); r != CUDA_SUCCESS)
      failWith(MKRT_ERR_KERNEL, m.ptxPath + ": no kernel `" + s.entry + "` in the module: " + d.describe(r));
    if (s.dynamicSmemBytes > smemOptin)
      failWith(MKRT_ERR_KERNEL, note + "the kernel needs " + std::to_string(s.dynamicSmemBytes) +
                                    " bytes of dynamic shared memory per block; " + m.device + " allows " +
                                    std::to_string(smemOptin) + ": rebuild it for this GPU");
    if (s.dynamicSmemBytes > 48 * 1024)
      m.check(d.funcSetAttribute(e.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(s.dynamicSmemBytes)),
              "cuFuncSetAttribute(" + s.entry + ", MAX_DYNAMIC_SHARED_SIZE_BYTES = " + std::to_string(s.dynamicSmemBytes) + ")");
    // A persistent kernel's blocks wait for each other: all of them must be resident at once.
    int perSm = 0;
    m.check(d.occupancyMaxActiveBlocksPerMultiprocessor(&perSm, e.fn, s.block, size_t(s.dynamicSmemBytes)),
            "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    if (int64_t(perSm) * sms < s.grid)
      failWith(MKRT_ERR_KERNEL, note + "the kernel's " + std::to_string(s.grid) + " blocks (" + std::to_string(s.block) +
                                    " threads, " + std::to_string(s.dynamicSmemBytes) +
                                    " bytes of dynamic shared memory each) must all be resident at once, but " + m.device +
                                    " holds " + std::to_string(perSm) + " per SM (" + std::to_string(int64_t(perSm) * sms) +
                                    " in all): rebuild it for this GPU (mkdsl build --gpu NAME, or --sms N)");
  }

  m.weights = m.alloc(md.arenaBytes[int(Arena::Weights)], "weights arena");
  m.state = m.alloc(md.arenaBytes[int(Arena::State)], "state arena");
  for (StepEntry& e : m.entries) {
    const KernelMetadata& s = *e.meta;
    const std::string of = m.ofStep(e);
    e.activations = m.alloc(s.arenaBytes[int(Arena::Activations)], "activations arena" + of);
    e.sync = m.alloc(uint64_t(s.syncCounters) * 4, "sync counters" + of);
    e.error = m.alloc(uint64_t(s.errorWords) * 4, "error record" + of);
    e.inputs = m.alloc(std::max<uint64_t>(s.inputs.size(), 1) * 4, "step inputs" + of);
    if (s.trace) {
      e.trace = m.alloc(e.traceBytes(), "trace records" + of);
      for (const TraceNode& n : s.trace->nodes)
        e.traceNodes.push_back({n.name.c_str(), n.op.c_str(), n.tasks, n.bytes, n.bytesExact ? 1 : 0});
    }
    auto info = [&](const std::string& name, int tensor, DType dtype, abi::Role role) {
      mkrt_tensor_info i{};
      i.name = name.c_str();
      i.dtype = toApi(dtype);
      i.role = toApi(role);
      if (tensor >= 0) {
        const TensorMeta& t = s.tensors[size_t(tensor)];
        i.tensor = t.name.c_str();
        i.rank = int(t.shape.size());
        i.shape = t.shape.data();
        i.elements = size_t(t.elements());
      } else {
        i.tensor = "";
        i.elements = 1;
      }
      return i;
    };
    for (const InputMeta& in : s.inputs) e.inInfo.push_back(info(in.name, in.tensor, in.dtype, in.role));
    for (const OutputMeta& out : s.outputs)
      e.outInfo.push_back(info(out.name, out.tensor, s.tensors[size_t(out.tensor)].dtype, out.role));
    e.inputValues.resize(s.inputs.size());
  }
  m.check(d.eventCreate(&m.start, CU_EVENT_DEFAULT), "cuEventCreate");
  m.check(d.eventCreate(&m.stop, CU_EVENT_DEFAULT), "cuEventCreate");
  m.check(d.ctxSynchronize(), "cuCtxSynchronize");
}

// Loads weights through `storage(spec)`.
template <typename F>
void loadAll(mkrt_model& m, F&& storage) {
  m.makeCurrent();
  m.weightsLoaded = false;
  for (const TensorMeta& t : m.meta.tensors) {  // the first step's view has every weight
    if (t.kind != TensorMeta::Weight) continue;
    WeightSpec w{t.name, t.dtype, t.shape, t.layout, t.sources, t.declaredAt};
    std::vector<uint8_t> bytes;
    try {
      bytes = storage(w);
    } catch (const WeightError& e) {
      failWith(MKRT_ERR_WEIGHTS, e.what());
    } catch (const SafetensorsError& e) {
      failWith(MKRT_ERR_FILE, e.what());
    }
    m.upload(m.current(), t, bytes);  // in the weights arena, which every step shares
  }
  m.check(m.drv->ctxSynchronize(), "cuCtxSynchronize");
  m.weightsLoaded = true;
}

std::string timeoutMessage(const mkrt_model& m, const StepEntry& e, const uint32_t* w) {
  const std::string task = "task " + std::to_string(w[ErrTask]), sm = "SM " + std::to_string(w[ErrSm]);
  std::string what;
  switch (w[ErrKind]) {
    case ErrCounterWait:
      what = task + " on " + sm + " waited for counter " + std::to_string(w[ErrCounter]) + " (expected " +
             std::to_string(w[ErrExpected]) + ", saw " + std::to_string(w[ErrSeen]) + ") past the timeout";
      break;
    case ErrRingFull:
      what = task + " on " + sm + " waited for its weight tile in ring slot " + std::to_string(w[ErrCounter]) +
             " (phase " + std::to_string(w[ErrExpected]) + ") past the timeout: the loader warp did not deliver it";
      break;
    case ErrRingEmpty:
      what = "the loader warp on " + sm + ", loading for " + task + ", waited for ring slot " + std::to_string(w[ErrCounter]) +
             " to be freed (phase " + std::to_string(w[ErrExpected]) + ") past the timeout";
      break;
    default:
      what = task + " on " + sm + " recorded error kind " + std::to_string(w[ErrKind]) + " (counter " +
             std::to_string(w[ErrCounter]) + ", expected " + std::to_string(w[ErrExpected]) + ", saw " +
             std::to_string(w[ErrSeen]) + ")";
  }
  return m.launchName(e) + " (epoch " + std::to_string(w[ErrEpoch]) + "): " + what + " of " +
         std::to_string(m.timeoutNs / 1000000) + " ms; the kernel stopped (see the schedule: mkdsl build --emit=schedule)";
}

// "[16, 64]"; "" for a scalar.
std::string dimsText(const std::vector<int64_t>& shape) { return shape.empty() ? "" : shapeString(shape); }

// "i32", "f32[64]": a step input's type as the program declares it.
std::string inputTypeText(const KernelMetadata& md, const InputMeta& in) {
  return dtypeName(in.dtype) + dimsText(in.tensor >= 0 ? md.tensors[size_t(in.tensor)].shape : std::vector<int64_t>{});
}

void setInput(mkrt_model& m, const char* name, mkrt_dtype dtype, int rank, const int64_t* shape, const void* data,
              size_t bytes) {
  const KernelMetadata& md = m.md();
  if (!name) failWith(MKRT_ERR_ARGUMENT, "mkrt_set_input: the name is NULL");
  size_t index = 0;
  while (index < md.inputs.size() && md.inputs[index].name != name) ++index;
  if (index == md.inputs.size()) {
    std::string names;
    for (const InputMeta& in : md.inputs) names += (names.empty() ? "" : ", ") + in.name;
    failWith(MKRT_ERR_ARGUMENT, std::string("the step has no input '") + name + "' (its inputs: " +
                                    (names.empty() ? "none" : names) + ")");
  }
  const InputMeta& in = md.inputs[index];
  const std::vector<int64_t> want = in.tensor >= 0 ? md.tensors[size_t(in.tensor)].shape : std::vector<int64_t>{};
  std::vector<int64_t> got;
  if (rank < 0 || (rank > 0 && !shape)) failWith(MKRT_ERR_ARGUMENT, "mkrt_set_input: rank " + std::to_string(rank) + " needs a shape");
  for (int d = 0; d < rank; ++d) got.push_back(shape[d]);
  if (int(dtype) < 0 || int(dtype) > int(DType::Bool) || DType(int(dtype)) != in.dtype || got != want)
    failWith(MKRT_ERR_ARGUMENT, "input '" + in.name + "' is " + inputTypeText(md, in) + "; got " +
                                    (int(dtype) >= 0 && int(dtype) <= int(DType::Bool) ? dtypeName(DType(int(dtype))) : "?") +
                                    dimsText(got));
  const size_t need = size_t(abi::shapeElements(want)) * dtypeBytes(in.dtype);
  if (bytes != need)
    failWith(MKRT_ERR_ARGUMENT, "input '" + in.name + "' (" + inputTypeText(md, in) + ") takes " + std::to_string(need) +
                                    " bytes; got " + std::to_string(bytes));
  if (!data && bytes) failWith(MKRT_ERR_ARGUMENT, "mkrt_set_input: data is NULL");
  const auto* p = static_cast<const uint8_t*>(data);
  if (in.tensor < 0 && !isFloat(in.dtype)) {  // a token past the embedding, a position past the cache
    if (std::string why = inputRangeProblem(md, index, int64_t(decodeElement(in.dtype, p))); !why.empty())
      failWith(MKRT_ERR_ARGUMENT, why);
  } else if (in.tensor >= 0 && in.bound >= 0 && !isFloat(in.dtype)) {  // a prefill's tokens: each one
    const size_t width = dtypeBytes(in.dtype);
    for (size_t i = 0; i < bytes / width; ++i)
      if (std::string why = inputRangeProblem(md, index, int64_t(decodeElement(in.dtype, p + i * width))); !why.empty())
        failWith(MKRT_ERR_ARGUMENT, "element " + std::to_string(i) + " of '" + in.name + "': " + why);
  }
  m.current().inputValues[index] = std::vector<uint8_t>(p, p + bytes);
}

// The u32 word the kernel reads for a scalar step input (f32 as its bits); 0 for a tensor input,
// which the kernel reads from its buffer.
uint32_t inputWord(const InputMeta& in, const std::vector<uint8_t>& value) {
  if (in.tensor >= 0) return 0;
  const double v = decodeElement(in.dtype, value.data());
  if (isFloat(in.dtype)) {
    float f = float(v);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return bits;
  }
  return in.dtype == DType::Bool ? uint32_t(v != 0) : uint32_t(int32_t(v));
}

void step(mkrt_model& m) {
  StepEntry& e = m.current();
  const KernelMetadata& md = *e.meta;
  if (!m.broken.empty()) failWith(MKRT_ERR_STATE, "an earlier step failed (" + m.broken + "); call mkrt_reset before stepping again");
  if (!m.weightsLoaded)
    for (const TensorMeta& t : md.tensors)
      if (t.kind == TensorMeta::Weight)
        failWith(MKRT_ERR_STATE, "no weights: call mkrt_load_weights or mkrt_random_weights before mkrt_step");
  const size_t n = md.inputs.size();
  for (size_t i = 0; i < n; ++i)
    if (!e.inputValues[i])
      failWith(MKRT_ERR_ARGUMENT, "input '" + md.inputs[i].name + "' (" + inputTypeText(md, md.inputs[i]) +
                                      ") has no value: give it one with mkrt_set_input before mkrt_step");
  std::vector<uint32_t> words(std::max<size_t>(n, 1), 0);
  for (size_t i = 0; i < n; ++i) words[i] = inputWord(md.inputs[i], *e.inputValues[i]);
  if (e.steps >= std::numeric_limits<uint32_t>::max() - 1u)
    failWith(MKRT_ERR_STATE, "the epoch counter is exhausted (2^32 - 1 steps); call mkrt_reset");

  m.makeCurrent();
  const Driver& d = *m.drv;
  m.check(d.memcpyHtoD(e.inputs, words.data(), words.size() * 4), "copying the step inputs");
  for (size_t i = 0; i < n; ++i) {  // a tensor input: its value, laid out as the kernel stores it
    const InputMeta& in = md.inputs[i];
    if (in.tensor < 0) continue;
    const TensorMeta& t = md.tensors[size_t(in.tensor)];
    const unsigned eb = dtypeBytes(t.dtype);
    std::vector<uint8_t> storage(size_t(t.storageBytes()), 0);
    if (auto p = mappingProblem(t.layout, t.shape, eb); !p.empty()) failWith(MKRT_ERR_KERNEL, "input tensor '" + t.name + "': " + p);
    toPhysical(t.layout, t.shape, eb, e.inputValues[i]->data(), storage.data());
    m.upload(e, t, storage);
  }

  // A traced kernel's records start at zero, so that one the step never reached reads as such.
  if (e.trace) m.zero(e.trace, e.traceBytes(), "trace records");

  // Each step's counters are its own, so its epoch counts its own launches.
  uint32_t epoch = uint32_t(e.steps + 1);
  uint64_t timeout = m.timeoutNs;
  // The driver reads as many parameters as the kernel declares: the trace only when traced.
  CUdeviceptr buffers[abi::ParamCount] = {};
  buffers[abi::ParamWeights] = m.weights;
  buffers[abi::ParamState] = m.state;
  buffers[abi::ParamActivations] = e.activations;
  buffers[abi::ParamSync] = e.sync;
  buffers[abi::ParamError] = e.error;
  buffers[abi::ParamInputs] = e.inputs;
  buffers[abi::ParamTrace] = e.trace;
  void* params[abi::ParamCount] = {};
  for (int i = 0; i < abi::ParamCount; ++i)
    if (abi::kKernelParams[i].kind == abi::ParamKind::GlobalPointer) params[i] = &buffers[i];
  params[abi::ParamEpoch] = &epoch;
  params[abi::ParamTimeout] = &timeout;
  if (!e.trace) params[abi::ParamTrace] = nullptr;
  // A failed launch of any step breaks the model: the state every step shares may be half-written.
  auto breakModel = [&](const char* why) {
    m.broken = why + (m.entries.size() > 1 ? " in " + m.launchName(e) : std::string());
  };
  m.check(d.eventRecord(m.start, nullptr), "cuEventRecord");
  if (CUresult r = d.launchKernel(e.fn, unsigned(md.grid), 1, 1, unsigned(md.block), 1, 1, unsigned(md.dynamicSmemBytes),
                                  nullptr, params, nullptr);
      r != CUDA_SUCCESS) {
    breakModel("the launch failed");
    failWith(MKRT_ERR_KERNEL, m.launchName(e) + ": cuLaunchKernel (grid " + std::to_string(md.grid) + ", block " +
                                  std::to_string(md.block) + ", " + std::to_string(md.dynamicSmemBytes) +
                                  " bytes of shared memory) failed on " + m.device + ": " + d.describe(r));
  }
  e.traceWritten = e.trace != 0;
  m.check(d.eventRecord(m.stop, nullptr), "cuEventRecord");
  if (CUresult r = d.ctxSynchronize(); r != CUDA_SUCCESS) {
    breakModel("the kernel faulted");
    m.contextLost = true;
    failWith(MKRT_ERR_KERNEL, m.launchName(e) + ": the kernel failed on " + m.device + ": " + d.describe(r) +
                                  " (the CUDA context is unusable now; close the model)");
  }
  float ms = 0;
  m.check(d.eventElapsedTime(&ms, m.start, m.stop), "cuEventElapsedTime");
  e.lastMs = ms;
  uint32_t record[ErrWords] = {};
  m.check(d.memcpyDtoH(record, e.error, sizeof record), "reading the error record");
  if (record[ErrFlag] != 0) {
    std::string msg = timeoutMessage(m, e, record);
    breakModel("a wait timed out");
    failWith(MKRT_ERR_TIMEOUT, msg);
  }
  ++e.steps;
}

// Zeroes the state and every step's activations, counters, error record and trace records.
void reset(mkrt_model& m) {
  if (m.contextLost) failWith(MKRT_ERR_STATE, "the CUDA context was lost to a kernel fault; close and reopen the model");
  m.makeCurrent();
  m.zero(m.state, m.meta.arenaBytes[int(Arena::State)], "state");
  for (StepEntry& e : m.entries) {
    const KernelMetadata& s = *e.meta;
    const std::string of = m.ofStep(e);
    m.zero(e.activations, s.arenaBytes[int(Arena::Activations)], "activations" + of);
    m.zero(e.sync, uint64_t(s.syncCounters) * 4, "sync counters" + of);
    m.zero(e.error, uint64_t(s.errorWords) * 4, "error record" + of);
    if (e.trace) m.zero(e.trace, e.traceBytes(), "trace records" + of);
  }
  m.check(m.drv->ctxSynchronize(), "cuCtxSynchronize");
  for (StepEntry& e : m.entries) {
    e.traceWritten = false;
    e.steps = 0;
  }
  m.broken.clear();
}

const TensorMeta& outputTensor(const mkrt_model& m, const char* name, size_t n) {
  if (!name) failWith(MKRT_ERR_ARGUMENT, "the output name is NULL");
  const KernelMetadata& md = m.md();
  for (const OutputMeta& o : md.outputs)
    if (o.name == name) {
      const TensorMeta& t = md.tensors[size_t(o.tensor)];
      if (n != size_t(t.elements()))
        failWith(MKRT_ERR_ARGUMENT, "output '" + o.name + "' (" + dtypeName(t.dtype) + shapeString(t.shape) + ") has " +
                                        std::to_string(t.elements()) + " elements; the buffer holds " + std::to_string(n));
      return t;
    }
  std::string names;
  for (const OutputMeta& o : md.outputs) names += (names.empty() ? "" : ", ") + o.name;
  failWith(MKRT_ERR_ARGUMENT, std::string("the step has no output '") + name + "' (it has: " + names + ")");
}

// An output's logical bytes (the selected step's).
std::vector<uint8_t> readLogical(mkrt_model& m, const TensorMeta& t) {
  m.makeCurrent();
  std::vector<uint8_t> storage(size_t(t.storageBytes()));
  m.check(m.drv->memcpyDtoH(storage.data(), m.tensorPtr(m.current(), t), storage.size()), "reading '" + t.name + "' from the GPU");
  const unsigned eb = dtypeBytes(t.dtype);
  if (auto p = mappingProblem(t.layout, t.shape, eb); !p.empty()) failWith(MKRT_ERR_KERNEL, "output tensor '" + t.name + "': " + p);
  std::vector<uint8_t> logical(size_t(t.elements()) * eb);
  fromPhysical(t.layout, t.shape, eb, storage.data(), logical.data());
  return logical;
}

// Runs `f`, turning failures into the status and mkrt_last_error.
template <typename F>
mkrt_status guarded(mkrt_model* m, F&& f) {
  if (!m) return MKRT_ERR_ARGUMENT;
  m->lastError.clear();
  try {
    f(*m);
    return MKRT_OK;
  } catch (const Failure& e) {
    m->lastError = e.message;
    return e.status;
  } catch (const std::bad_alloc&) {
    m->lastError = "out of host memory";
    return MKRT_ERR_ARGUMENT;
  } catch (const std::exception& e) {
    m->lastError = e.what();
    return MKRT_ERR_FILE;
  }
}

void copyError(char* err, size_t errlen, const std::string& msg) {
  if (!err || errlen == 0) return;
  size_t n = std::min(msg.size(), errlen - 1);
  std::memcpy(err, msg.data(), n);
  err[n] = '\0';
}

}  // namespace

static thread_local mkrt_status openStatus = MKRT_OK;

// Runs an opening function, turning failures into openStatus and `err`.
template <typename F>
static mkrt_model* opening(char* err, size_t errlen, F&& f) {
  copyError(err, errlen, "");
  openStatus = MKRT_OK;
  try {
    auto m = std::make_unique<mkrt_model>();
    f(*m);
    return m.release();
  } catch (const Failure& e) {
    openStatus = e.status;
    copyError(err, errlen, e.message);
  } catch (const std::bad_alloc&) {
    openStatus = MKRT_ERR_ARGUMENT;
    copyError(err, errlen, "out of host memory");
  } catch (const std::exception& e) {
    openStatus = MKRT_ERR_FILE;
    copyError(err, errlen, e.what());
  }
  return nullptr;
}

extern "C" {

mkrt_status mkrt_open_status(void) { return openStatus; }

mkrt_model* mkrt_open(const char* ptx_path, const char* metadata_path, int device, char* err, size_t errlen) {
  return opening(err, errlen, [&](mkrt_model& m) {
    if (!ptx_path || !metadata_path) failWith(MKRT_ERR_ARGUMENT, "mkrt_open: the PTX and metadata paths must not be NULL");
    m.ptxPath = ptx_path;
    m.metaPath = metadata_path;
    // The files first: their errors do not need a GPU.
    KernelMetadata md;
    try {
      md = readMetadata(m.metaPath);
    } catch (const MetadataError& e) {
      failWith(MKRT_ERR_FILE, e.what());
    }
    std::string image;
    try {
      image = readWholeFile(m.ptxPath);
    } catch (const FileError& e) {
      failWith(MKRT_ERR_FILE, e.what());
    }
    open(m, std::move(image), md, device);
  });
}

mkrt_model* mkrt_open_data(const char* ptx, size_t ptx_len, const char* metadata_json, size_t meta_len, int device,
                           char* err, size_t errlen) {
  return opening(err, errlen, [&](mkrt_model& m) {
    if ((!ptx && ptx_len) || (!metadata_json && meta_len))
      failWith(MKRT_ERR_ARGUMENT, "mkrt_open_data: the PTX and metadata must not be NULL");
    m.fromMemory = true;
    m.ptxPath = "the in-memory PTX";
    m.metaPath = "the in-memory metadata";
    KernelMetadata md;
    try {
      md = parseMetadata(std::string_view(metadata_json ? metadata_json : "", meta_len), m.metaPath);
    } catch (const MetadataError& e) {
      failWith(MKRT_ERR_FILE, e.what());
    }
    std::string image(ptx ? ptx : "", ptx_len);
    while (!image.empty() && image.back() == '\0' && image.compare(0, 4, "\x7f" "ELF") != 0) image.pop_back();
    open(m, std::move(image), md, device);
  });
}

mkrt_status mkrt_probe_device(int device, char* err, size_t errlen) {
  copyError(err, errlen, "");
  try {
    openDriver(device);
    return MKRT_OK;
  } catch (const Failure& e) {
    copyError(err, errlen, e.message);
    return e.status;
  } catch (const std::exception& e) {
    copyError(err, errlen, e.what());
    return MKRT_ERR_DRIVER;
  }
}

void mkrt_close(mkrt_model* model) { delete model; }

mkrt_status mkrt_load_weights(mkrt_model* model, const char* path) {
  return guarded(model, [&](mkrt_model& m) {
    if (!path) failWith(MKRT_ERR_ARGUMENT, "mkrt_load_weights: the path is NULL");
    std::optional<SafetensorsSet> set;
    try {
      set = SafetensorsSet::open(path);
    } catch (const SafetensorsError& e) {
      failWith(MKRT_ERR_FILE, e.what());
    }
    loadAll(m, [&](const WeightSpec& w) { return assembleWeightStorage(w, *set); });
  });
}

mkrt_status mkrt_random_weights(mkrt_model* model, uint64_t seed) {
  return guarded(model, [&](mkrt_model& m) { loadAll(m, [&](const WeightSpec& w) { return randomWeightStorage(w, seed); }); });
}

mkrt_status mkrt_set_input(mkrt_model* model, const char* name, mkrt_dtype dtype, int rank, const int64_t* shape,
                           const void* data, size_t bytes) {
  return guarded(model, [&](mkrt_model& m) { setInput(m, name, dtype, rank, shape, data, bytes); });
}

mkrt_status mkrt_step(mkrt_model* model) {
  return guarded(model, [&](mkrt_model& m) { step(m); });
}

mkrt_status mkrt_reset(mkrt_model* model) {
  return guarded(model, [&](mkrt_model& m) { reset(m); });
}

mkrt_status mkrt_read_output(mkrt_model* model, const char* name, float* out, size_t n) {
  return guarded(model, [&](mkrt_model& m) {
    const TensorMeta& t = outputTensor(m, name, n);
    if (!out && n) failWith(MKRT_ERR_ARGUMENT, "mkrt_read_output: out is NULL");
    std::vector<uint8_t> logical = readLogical(m, t);
    const unsigned eb = dtypeBytes(t.dtype);
    for (size_t k = 0; k < n; ++k) out[k] = float(decodeElement(t.dtype, logical.data() + k * eb));
  });
}

mkrt_status mkrt_read_output_i32(mkrt_model* model, const char* name, int32_t* out, size_t n) {
  return guarded(model, [&](mkrt_model& m) {
    const TensorMeta& t = outputTensor(m, name, n);
    if (isFloat(t.dtype))
      failWith(MKRT_ERR_ARGUMENT, std::string("output '") + name + "' is " + dtypeName(t.dtype) + ": read it with mkrt_read_output");
    if (!out && n) failWith(MKRT_ERR_ARGUMENT, "mkrt_read_output_i32: out is NULL");
    std::vector<uint8_t> logical = readLogical(m, t);
    const unsigned eb = dtypeBytes(t.dtype);
    for (size_t k = 0; k < n; ++k) out[k] = int32_t(decodeElement(t.dtype, logical.data() + k * eb));
  });
}

size_t mkrt_num_inputs(const mkrt_model* model) { return model ? model->current().inInfo.size() : 0; }
size_t mkrt_num_outputs(const mkrt_model* model) { return model ? model->current().outInfo.size() : 0; }

mkrt_status mkrt_input_info(const mkrt_model* model, size_t index, mkrt_tensor_info* info) {
  if (!model || !info || index >= model->current().inInfo.size()) return MKRT_ERR_ARGUMENT;
  *info = model->current().inInfo[index];
  return MKRT_OK;
}

mkrt_status mkrt_output_info(const mkrt_model* model, size_t index, mkrt_tensor_info* info) {
  if (!model || !info || index >= model->current().outInfo.size()) return MKRT_ERR_ARGUMENT;
  *info = model->current().outInfo[index];
  return MKRT_OK;
}

size_t mkrt_num_steps(const mkrt_model* model) { return model ? model->entries.size() : 0; }

const char* mkrt_step_name(const mkrt_model* model, size_t index) {
  return model && index < model->entries.size() ? model->entries[index].meta->step.c_str() : "";
}

mkrt_status mkrt_select_step(mkrt_model* model, const char* name) {
  return guarded(model, [&](mkrt_model& m) {
    if (!name) failWith(MKRT_ERR_ARGUMENT, "mkrt_select_step: the name is NULL");
    std::string names;
    for (size_t i = 0; i < m.entries.size(); ++i) {
      if (m.entries[i].meta->step == name) {
        m.selected = i;
        return;
      }
      names += (i ? ", '" : "'") + m.entries[i].meta->step + "'";
    }
    failWith(MKRT_ERR_ARGUMENT, std::string("the program has no step '") + name + "' (its steps: " + names + ")");
  });
}

const char* mkrt_selected_step(const mkrt_model* model) { return model ? model->md().step.c_str() : ""; }

mkrt_status mkrt_set_timeout_ns(mkrt_model* model, uint64_t ns) {
  return guarded(model, [&](mkrt_model& m) {
    if (ns == 0) failWith(MKRT_ERR_ARGUMENT, "the wait timeout must be > 0 ns");
    m.timeoutNs = ns;
  });
}

mkrt_status mkrt_input_bound(const mkrt_model* model, size_t index, int64_t* bound) {
  if (!model || !bound || index >= model->md().inputs.size()) return MKRT_ERR_ARGUMENT;
  *bound = model->md().inputs[index].bound;
  return MKRT_OK;
}

mkrt_status mkrt_check_input(mkrt_model* model, size_t index, int64_t value) {
  return guarded(model, [&](mkrt_model& m) {
    const KernelMetadata& md = m.md();
    if (index >= md.inputs.size())
      failWith(MKRT_ERR_ARGUMENT, "the step has " + std::to_string(md.inputs.size()) + " inputs; there is no input " +
                                      std::to_string(index));
    if (std::string p = inputRangeProblem(md, index, value); !p.empty()) failWith(MKRT_ERR_ARGUMENT, p);
  });
}

size_t mkrt_num_config_values(const mkrt_model* model) { return model ? model->meta.configValues.size() : 0; }

mkrt_status mkrt_config_value_at(const mkrt_model* model, size_t index, const char** name, double* value) {
  if (!model || index >= model->meta.configValues.size()) return MKRT_ERR_ARGUMENT;
  const ConfigValue& c = model->meta.configValues[index];
  if (name) *name = c.name.c_str();
  if (value) *value = c.value;
  return MKRT_OK;
}

mkrt_status mkrt_config_value(const mkrt_model* model, const char* name, double* value) {
  if (!model || !name) return MKRT_ERR_ARGUMENT;
  const ConfigValue* c = model->meta.configValue(name);
  if (!c) return MKRT_ERR_ARGUMENT;
  if (value) *value = c->value;
  return MKRT_OK;
}

const char* mkrt_config_name(const mkrt_model* model) { return model ? model->meta.config.c_str() : ""; }

const char* mkrt_tensor_declared_at(const mkrt_model* model, const char* tensor) {
  if (!model || !tensor) return "";
  const KernelMetadata& md = model->md();
  int id = md.find(tensor);
  return id < 0 ? "" : md.tensors[size_t(id)].declaredAt.c_str();
}

int mkrt_is_traced(const mkrt_model* model) { return model && model->md().trace ? 1 : 0; }

size_t mkrt_trace_records(const mkrt_model* model) {
  return model && model->md().trace ? size_t(model->md().trace->records) : 0;
}

size_t mkrt_num_trace_nodes(const mkrt_model* model) { return model ? model->current().traceNodes.size() : 0; }

mkrt_status mkrt_trace_node_info(const mkrt_model* model, size_t node, mkrt_trace_node* info) {
  if (!model || !info || node >= model->current().traceNodes.size()) return MKRT_ERR_ARGUMENT;
  *info = model->current().traceNodes[node];
  return MKRT_OK;
}

mkrt_status mkrt_read_trace(mkrt_model* model, uint64_t* words, size_t count) {
  return guarded(model, [&](mkrt_model& m) {
    const StepEntry& e = m.current();
    const KernelMetadata& md = *e.meta;
    if (!md.trace) failWith(MKRT_ERR_ARGUMENT, "the kernel was built without --trace: rebuild it with mkdsl build --trace");
    const uint64_t want = uint64_t(md.trace->records) * TraceWords;
    if (count != want)
      failWith(MKRT_ERR_ARGUMENT, "the trace holds " + std::to_string(md.trace->records) + " records of " +
                                      std::to_string(int(TraceWords)) + " words (" + std::to_string(want) +
                                      "); the buffer holds " + std::to_string(count));
    if (count && !words) failWith(MKRT_ERR_ARGUMENT, "mkrt_read_trace: words is NULL");
    if (!e.traceWritten) failWith(MKRT_ERR_STATE, "no step has run yet: the trace holds the last step's records");
    if (count == 0) return;
    m.makeCurrent();
    m.check(m.drv->memcpyDtoH(words, e.trace, size_t(e.traceBytes())), "reading the trace records");
  });
}

const char* mkrt_last_error(const mkrt_model* model) { return model ? model->lastError.c_str() : "no model (NULL)"; }
uint64_t mkrt_steps_run(const mkrt_model* model) { return model ? model->current().steps : 0; }
double mkrt_last_step_ms(const mkrt_model* model) { return model ? model->current().lastMs : 0; }
const char* mkrt_device_description(const mkrt_model* model) { return model ? model->device.c_str() : ""; }

}  // extern "C"
