// The part of the CUDA driver API the runtime uses, declared here and loaded at run time with
// dlopen("libcuda.so.1"), so runtime/ builds and tests on machines without a GPU or a CUDA
// toolkit (cuda.h is not included anywhere in runtime/).
//
// The ABI relied on (the driver's C ABI on 64-bit Linux, stable across driver releases):
//   - every entry point is a plain C function (CUDAAPI is empty off Windows) returning CUresult,
//     a C enum of int size; CUDA_SUCCESS is 0;
//   - CUdevice is int; CUdeviceptr is unsigned long long (64-bit); contexts, modules, functions,
//     streams and events are opaque pointers (a null CUstream is the legacy default stream);
//   - the versioned symbols are the ones cuda.h maps the plain names to: cuCtxCreate_v2,
//     cuCtxDestroy_v2, cuMemAlloc_v2, cuMemFree_v2, cuMemcpyHtoD_v2, cuMemcpyDtoH_v2,
//     cuMemsetD8_v2, cuMemGetInfo_v2, cuDeviceTotalMem_v2, cuEventDestroy_v2, and
//     cuEventElapsedTime_v2 where the driver has it (else cuEventElapsedTime, same signature);
//   - the enumerator values below (CUjit_option, CUfunction_attribute, CUdevice_attribute,
//     CUresult) are those of cuda.h; they never change meaning between releases.
// When cuda.h is available at build time, runtime/testing/cuda_abi_check.cpp checks every
// signature and value here against it (a compile-time test; see runtime/CMakeLists.txt).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace mk::runtime::cu {

using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;

enum CUresult : int {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_STUB_LIBRARY = 34,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  CUDA_ERROR_LAUNCH_TIMEOUT = 702,
};

enum CUjit_option : int {
  CU_JIT_WALL_TIME = 2,
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_LOG_VERBOSE = 12,
};

enum CUfunction_attribute : int {
  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
  CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

enum CUdevice_attribute : int {
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

constexpr unsigned CU_EVENT_DEFAULT = 0;

// The driver's entry points, resolved with dlsym. Member names drop the `cu` prefix and the
// version suffix; `symbol` lists say which symbol each one is.
struct Driver {
  CUresult (*init)(unsigned flags) = nullptr;
  CUresult (*driverGetVersion)(int* version) = nullptr;
  CUresult (*getErrorString)(CUresult error, const char** str) = nullptr;
  CUresult (*getErrorName)(CUresult error, const char** str) = nullptr;
  CUresult (*deviceGetCount)(int* count) = nullptr;
  CUresult (*deviceGet)(CUdevice* device, int ordinal) = nullptr;
  CUresult (*deviceGetName)(char* name, int len, CUdevice dev) = nullptr;
  CUresult (*deviceGetAttribute)(int* value, CUdevice_attribute attrib, CUdevice dev) = nullptr;
  CUresult (*deviceTotalMem)(size_t* bytes, CUdevice dev) = nullptr;                        // _v2
  CUresult (*ctxCreate)(CUcontext* ctx, unsigned flags, CUdevice dev) = nullptr;            // _v2
  CUresult (*ctxDestroy)(CUcontext ctx) = nullptr;                                          // _v2
  CUresult (*ctxSetCurrent)(CUcontext ctx) = nullptr;
  CUresult (*ctxSynchronize)() = nullptr;
  CUresult (*memGetInfo)(size_t* free, size_t* total) = nullptr;                            // _v2
  CUresult (*memAlloc)(CUdeviceptr* ptr, size_t bytes) = nullptr;                           // _v2
  CUresult (*memFree)(CUdeviceptr ptr) = nullptr;                                           // _v2
  CUresult (*memcpyHtoD)(CUdeviceptr dst, const void* src, size_t bytes) = nullptr;         // _v2
  CUresult (*memcpyDtoH)(void* dst, CUdeviceptr src, size_t bytes) = nullptr;               // _v2
  CUresult (*memsetD8)(CUdeviceptr dst, unsigned char value, size_t bytes) = nullptr;       // _v2
  CUresult (*moduleLoadDataEx)(CUmodule* module, const void* image, unsigned numOptions, CUjit_option* options,
                               void** optionValues) = nullptr;
  CUresult (*moduleUnload)(CUmodule module) = nullptr;
  CUresult (*moduleGetFunction)(CUfunction* f, CUmodule module, const char* name) = nullptr;
  CUresult (*funcSetAttribute)(CUfunction f, CUfunction_attribute attrib, int value) = nullptr;
  CUresult (*funcGetAttribute)(int* value, CUfunction_attribute attrib, CUfunction f) = nullptr;
  CUresult (*occupancyMaxActiveBlocksPerMultiprocessor)(int* blocks, CUfunction f, int blockSize,
                                                        size_t dynamicSmemBytes) = nullptr;
  CUresult (*launchKernel)(CUfunction f, unsigned gridX, unsigned gridY, unsigned gridZ, unsigned blockX,
                           unsigned blockY, unsigned blockZ, unsigned sharedMemBytes, CUstream stream,
                           void** kernelParams, void** extra) = nullptr;
  CUresult (*eventCreate)(CUevent* event, unsigned flags) = nullptr;
  CUresult (*eventDestroy)(CUevent event) = nullptr;                                        // _v2
  CUresult (*eventRecord)(CUevent event, CUstream stream) = nullptr;
  CUresult (*eventSynchronize)(CUevent event) = nullptr;
  CUresult (*eventElapsedTime)(float* ms, CUevent start, CUevent end) = nullptr;             // _v2, else v1

  std::string library;  // what was dlopen'ed

  // "CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)"; works for any code.
  std::string describe(CUresult r) const;
};

// Opens the driver: $MKRT_CUDA_LIBRARY if set (tests point it at a fake driver), else
// libcuda.so.1. Returns nullptr and sets `error` when the library or a symbol is missing:
// "no CUDA driver (libcuda.so.1) on this machine: ...". The library stays loaded for the life of
// the process (unloading the CUDA driver is not safe).
std::shared_ptr<const Driver> loadDriver(std::string& error);

}  // namespace mk::runtime::cu
