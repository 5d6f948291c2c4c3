// The CUDA driver API, loaded at run time with dlopen("libcuda.so.1"). The few
// types, constants and entry points the runtime uses are declared here (same
// ABI as cuda.h), so building tinymlir needs no CUDA header or library, and a
// process that never asks for the GPU never loads the driver.
#pragma once

#include <atomic>
#include <cstddef>
#include <string>

namespace tinymlir::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUmemoryPool = struct CUmemPoolHandle_st *;

inline constexpr int kAttrComputeCapabilityMajor = 75; // CU_DEVICE_ATTRIBUTE_...
inline constexpr int kAttrComputeCapabilityMinor = 76;
inline constexpr int kAttrMemoryPoolsSupported = 115;
inline constexpr int kJitInfoLogBuffer = 3; // CUjit_option
inline constexpr int kJitInfoLogBufferSize = 4;
inline constexpr int kJitErrorLogBuffer = 5;
inline constexpr int kJitErrorLogBufferSize = 6;
inline constexpr int kJitOptimizationLevel = 7;
inline constexpr unsigned kStreamNonBlocking = 1;
inline constexpr unsigned kEventDisableTiming = 2;
inline constexpr int kMemPoolReleaseThreshold = 4; // CU_MEMPOOL_ATTR_RELEASE_THRESHOLD

/// Entry points, named as the cuda.h macros (versioned symbols such as
/// cuMemAlloc_v2 are resolved by the loader).
struct Api {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuMemGetInfo)(size_t *, size_t *);
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void **, void **);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
  CUresult (*cuMemsetD16Async)(CUdeviceptr, unsigned short, size_t, CUstream);
  // Optional (CUDA 11.2+): stream-ordered allocation from the device's pool.
  CUresult (*cuMemAllocAsync)(CUdeviceptr *, size_t, CUstream);
  CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream);
  CUresult (*cuDeviceGetDefaultMemPool)(CUmemoryPool *, CUdevice);
  CUresult (*cuMemPoolSetAttribute)(CUmemoryPool, int, void *);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent); // profiling
};

struct Device {
  Api api;
  CUdevice device = 0;
  CUcontext context = nullptr;
  int computeCapability = 0; ///< 90 for sm_90
  std::string name;
  bool memoryPools = false; ///< cuMemAllocAsync usable
  size_t freeMemory = 0, totalMemory = 0;
};

/// The driver and the device (TINYMLIR_GPU_DEVICE, default 0), set up once
/// (thread-safe); nullptr if unusable, with the reason in `why`.
const Device *device(std::string *why = nullptr);
/// device() with its context current on this thread; nullptr if unusable
/// (the reason is recorded as this thread's pending error).
const Device *current();
/// This thread's stream (created on first use), or nullptr.
CUstream threadStream();

/// Device memory in stream order on this thread's stream (the device's memory
/// pool where supported, else cuMemAlloc/cuMemFree); 0 on failure (recorded).
CUdeviceptr allocate(size_t bytes);
void release(CUdeviceptr pointer);

/// Runtime-wide counters (GpuTransferStats).
struct Counters {
  std::atomic<size_t> residentUploads{0}, residentHits{0}, transientUploads{0};
  std::atomic<size_t> bytesUploaded{0}, bytesDownloaded{0}, launches{0};
};
Counters &counters();

/// Adds this thread's timed launches (TINYMLIR_GPU_PROFILE) to the profile;
/// call after the stream is synchronized.
void collectKernelTimes();

/// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
std::string errorText(CUresult result);
/// Records "[gpu] <what> failed: <error>" as this thread's pending error if
/// none is pending; returns whether `result` is success.
bool check(CUresult result, const char *what);
/// Records a message as this thread's pending error if none is pending.
void recordError(const std::string &message);
/// The pending error of this thread ("" if none), cleared.
std::string takeError();

} // namespace tinymlir::cuda
