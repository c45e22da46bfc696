#include "runtime/cuda_driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <type_traits>

namespace mk::runtime::cu {

namespace {
// Names of the codes declared in cuda_driver.h, for drivers that cannot name them (the stub).
const char* knownName(CUresult r) {
  switch (r) {
    case CUDA_SUCCESS: return "CUDA_SUCCESS";
    case CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
    case CUDA_ERROR_OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY";
    case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
    case CUDA_ERROR_STUB_LIBRARY: return "CUDA_ERROR_STUB_LIBRARY (the CUDA driver library is the toolkit's stub, not a real driver)";
    case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
    case CUDA_ERROR_INVALID_DEVICE: return "CUDA_ERROR_INVALID_DEVICE";
    case CUDA_ERROR_INVALID_IMAGE: return "CUDA_ERROR_INVALID_IMAGE";
    case CUDA_ERROR_NO_BINARY_FOR_GPU: return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    case CUDA_ERROR_INVALID_PTX: return "CUDA_ERROR_INVALID_PTX";
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION: return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
    case CUDA_ERROR_NOT_FOUND: return "CUDA_ERROR_NOT_FOUND";
    case CUDA_ERROR_ILLEGAL_ADDRESS: return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
    case CUDA_ERROR_LAUNCH_TIMEOUT: return "CUDA_ERROR_LAUNCH_TIMEOUT";
  }
  return nullptr;
}
}  // namespace

std::string Driver::describe(CUresult r) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (getErrorName && getErrorName(r, &name) != CUDA_SUCCESS) name = nullptr;
  if (getErrorString && getErrorString(r, &text) != CUDA_SUCCESS) text = nullptr;
  if (!name) name = knownName(r);
  std::string s = name ? name : "CUDA error " + std::to_string(int(r));
  if (text) s += std::string(" (") + text + ")";
  return s;
}

std::shared_ptr<const Driver> loadDriver(std::string& error) {
  const char* override = std::getenv("MKRT_CUDA_LIBRARY");
  const std::string lib = override && *override ? override : "libcuda.so.1";
  // RTLD_LOCAL: the driver's symbols stay out of the global namespace; never dlclose'd.
  void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* why = dlerror();
    error = "no CUDA driver (" + lib + ") on this machine" + (why ? std::string(": ") + why : std::string());
    return nullptr;
  }
  auto d = std::make_shared<Driver>();
  d->library = lib;
  std::string missing;
  auto sym = [&](auto& fn, const char* name, const char* fallback = nullptr) {
    void* p = dlsym(h, name);
    if (!p && fallback) p = dlsym(h, fallback);
    if (!p) missing += (missing.empty() ? "" : ", ") + std::string(name);
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
  };
  sym(d->init, "cuInit");
  sym(d->driverGetVersion, "cuDriverGetVersion");
  sym(d->getErrorString, "cuGetErrorString");
  sym(d->getErrorName, "cuGetErrorName");
  sym(d->deviceGetCount, "cuDeviceGetCount");
  sym(d->deviceGet, "cuDeviceGet");
  sym(d->deviceGetName, "cuDeviceGetName");
  sym(d->deviceGetAttribute, "cuDeviceGetAttribute");
  sym(d->deviceTotalMem, "cuDeviceTotalMem_v2");
  sym(d->ctxCreate, "cuCtxCreate_v2");
  sym(d->ctxDestroy, "cuCtxDestroy_v2");
  sym(d->ctxSetCurrent, "cuCtxSetCurrent");
  sym(d->ctxSynchronize, "cuCtxSynchronize");
  sym(d->memGetInfo, "cuMemGetInfo_v2");
  sym(d->memAlloc, "cuMemAlloc_v2");
  sym(d->memFree, "cuMemFree_v2");
  sym(d->memcpyHtoD, "cuMemcpyHtoD_v2");
  sym(d->memcpyDtoH, "cuMemcpyDtoH_v2");
  sym(d->memsetD8, "cuMemsetD8_v2");
  sym(d->moduleLoadDataEx, "cuModuleLoadDataEx");
  sym(d->moduleUnload, "cuModuleUnload");
  sym(d->moduleGetFunction, "cuModuleGetFunction");
  sym(d->funcSetAttribute, "cuFuncSetAttribute");
  sym(d->funcGetAttribute, "cuFuncGetAttribute");
  sym(d->occupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  sym(d->launchKernel, "cuLaunchKernel");
  sym(d->eventCreate, "cuEventCreate");
  sym(d->eventDestroy, "cuEventDestroy_v2");
  sym(d->eventRecord, "cuEventRecord");
  sym(d->eventSynchronize, "cuEventSynchronize");
  sym(d->eventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime");
  if (!missing.empty()) {
    error = "the CUDA driver " + lib + " lacks " + missing + " (a driver older than CUDA 11?)";
    return nullptr;
  }
  return d;
}

}  // namespace mk::runtime::cu
