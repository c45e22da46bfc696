// A compile-time test: runtime/cuda_driver.h's hand-written declarations against the CUDA
// toolkit's cuda.h, where one is installed (runtime/CMakeLists.txt compiles this file only then;
// nothing links it). Every function pointer type must be the real entry point's type once our
// types are mapped to cuda.h's, and every enumerator must have cuda.h's value.
// The internal mode declares the versioned entry points under their own names (cuCtxCreate_v2
// is otherwise hidden behind cuCtxCreate -> cuCtxCreate_v4), and the unversioned ones
// (cuLaunchKernel, cuEventRecord) without the per-thread-stream suffixes.
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include <type_traits>

#include "runtime/cuda_driver.h"

namespace ours = mk::runtime::cu;

namespace {

// Our type -> cuda.h's type.
template <typename T> struct Real { using type = T; };
template <typename T> using RealT = typename Real<T>::type;
template <> struct Real<ours::CUresult> { using type = ::CUresult; };
template <> struct Real<ours::CUjit_option> { using type = ::CUjit_option; };
template <> struct Real<ours::CUfunction_attribute> { using type = ::CUfunction_attribute; };
template <> struct Real<ours::CUdevice_attribute> { using type = ::CUdevice_attribute; };
template <> struct Real<ours::CUctx_st> { using type = ::CUctx_st; };
template <> struct Real<ours::CUmod_st> { using type = ::CUmod_st; };
template <> struct Real<ours::CUfunc_st> { using type = ::CUfunc_st; };
template <> struct Real<ours::CUstream_st> { using type = ::CUstream_st; };
template <> struct Real<ours::CUevent_st> { using type = ::CUevent_st; };
template <typename T> struct Real<T*> { using type = RealT<T>*; };
template <typename T> struct Real<const T> { using type = const RealT<T>; };
template <typename R, typename... A> struct Real<R (*)(A...)> { using type = RealT<R> (*)(RealT<A>...); };

#define SAME(member, symbol)                                                                        \
  static_assert(std::is_same_v<RealT<decltype(ours::Driver::member)>, decltype(&::symbol)>, \
                "cuda_driver.h: " #member " does not match " #symbol)

SAME(init, cuInit);
SAME(driverGetVersion, cuDriverGetVersion);
SAME(getErrorString, cuGetErrorString);
SAME(getErrorName, cuGetErrorName);
SAME(deviceGetCount, cuDeviceGetCount);
SAME(deviceGet, cuDeviceGet);
SAME(deviceGetName, cuDeviceGetName);
SAME(deviceGetAttribute, cuDeviceGetAttribute);
SAME(deviceTotalMem, cuDeviceTotalMem_v2);
SAME(ctxCreate, cuCtxCreate_v2);
SAME(ctxDestroy, cuCtxDestroy_v2);
SAME(ctxSetCurrent, cuCtxSetCurrent);
SAME(ctxSynchronize, cuCtxSynchronize);
SAME(memGetInfo, cuMemGetInfo_v2);
SAME(memAlloc, cuMemAlloc_v2);
SAME(memFree, cuMemFree_v2);
SAME(memcpyHtoD, cuMemcpyHtoD_v2);
SAME(memcpyDtoH, cuMemcpyDtoH_v2);
SAME(memsetD8, cuMemsetD8_v2);
SAME(moduleLoadDataEx, cuModuleLoadDataEx);
SAME(moduleUnload, cuModuleUnload);
SAME(moduleGetFunction, cuModuleGetFunction);
SAME(funcSetAttribute, cuFuncSetAttribute);
SAME(funcGetAttribute, cuFuncGetAttribute);
SAME(occupancyMaxActiveBlocksPerMultiprocessor, cuOccupancyMaxActiveBlocksPerMultiprocessor);
SAME(launchKernel, cuLaunchKernel);
SAME(eventCreate, cuEventCreate);
SAME(eventDestroy, cuEventDestroy_v2);
SAME(eventRecord, cuEventRecord);
SAME(eventSynchronize, cuEventSynchronize);
SAME(eventElapsedTime, cuEventElapsedTime_v2);
SAME(eventElapsedTime, cuEventElapsedTime);  // the fallback where the driver has no _v2

static_assert(std::is_same_v<ours::CUdevice, ::CUdevice>);
static_assert(std::is_same_v<ours::CUdeviceptr, ::CUdeviceptr>);
static_assert(sizeof(ours::CUresult) == sizeof(::CUresult));
static_assert(sizeof(ours::CUjit_option) == sizeof(::CUjit_option));
static_assert(sizeof(ours::CUfunction_attribute) == sizeof(::CUfunction_attribute));
static_assert(sizeof(ours::CUdevice_attribute) == sizeof(::CUdevice_attribute));

#define VALUE(name) static_assert(int(ours::name) == int(::name), "cuda_driver.h: " #name " has the wrong value")
VALUE(CUDA_SUCCESS);
VALUE(CUDA_ERROR_INVALID_VALUE);
VALUE(CUDA_ERROR_OUT_OF_MEMORY);
VALUE(CUDA_ERROR_NOT_INITIALIZED);
VALUE(CUDA_ERROR_STUB_LIBRARY);
VALUE(CUDA_ERROR_NO_DEVICE);
VALUE(CUDA_ERROR_INVALID_DEVICE);
VALUE(CUDA_ERROR_INVALID_IMAGE);
VALUE(CUDA_ERROR_NO_BINARY_FOR_GPU);
VALUE(CUDA_ERROR_INVALID_PTX);
VALUE(CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
VALUE(CUDA_ERROR_NOT_FOUND);
VALUE(CUDA_ERROR_ILLEGAL_ADDRESS);
VALUE(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
VALUE(CUDA_ERROR_LAUNCH_TIMEOUT);
VALUE(CU_JIT_WALL_TIME);
VALUE(CU_JIT_INFO_LOG_BUFFER);
VALUE(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES);
VALUE(CU_JIT_ERROR_LOG_BUFFER);
VALUE(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
VALUE(CU_JIT_LOG_VERBOSE);
VALUE(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
VALUE(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
VALUE(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
VALUE(CU_FUNC_ATTRIBUTE_NUM_REGS);
VALUE(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
VALUE(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
VALUE(CU_EVENT_DEFAULT);

}  // namespace
