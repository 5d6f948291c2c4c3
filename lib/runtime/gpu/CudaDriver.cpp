// Loading the CUDA driver with dlopen, the device and its primary context,
// per-thread streams and the per-thread pending error.
#include "runtime/Settings.h"
#include "runtime/gpu/CudaDriver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

namespace tinymlir::cuda {
namespace {

thread_local std::string pendingError;

template <class F> bool resolve(void *lib, F *&slot, const char *name, std::string &missing) {
  slot = reinterpret_cast<F *>(dlsym(lib, name));
  if (!slot)
    missing += std::string(missing.empty() ? "" : ", ") + name;
  return slot != nullptr;
}

/// Fills the entry points; returns the names of missing required ones.
std::string loadApi(void *lib, Api &a) {
  std::string missing;
  resolve(lib, a.cuInit, "cuInit", missing);
  resolve(lib, a.cuGetErrorName, "cuGetErrorName", missing);
  resolve(lib, a.cuGetErrorString, "cuGetErrorString", missing);
  resolve(lib, a.cuDeviceGetCount, "cuDeviceGetCount", missing);
  resolve(lib, a.cuDeviceGet, "cuDeviceGet", missing);
  resolve(lib, a.cuDeviceGetAttribute, "cuDeviceGetAttribute", missing);
  resolve(lib, a.cuDeviceGetName, "cuDeviceGetName", missing);
  resolve(lib, a.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", missing);
  resolve(lib, a.cuCtxSetCurrent, "cuCtxSetCurrent", missing);
  resolve(lib, a.cuCtxSynchronize, "cuCtxSynchronize", missing);
  resolve(lib, a.cuMemGetInfo, "cuMemGetInfo_v2", missing);
  resolve(lib, a.cuModuleLoadDataEx, "cuModuleLoadDataEx", missing);
  resolve(lib, a.cuModuleUnload, "cuModuleUnload", missing);
  resolve(lib, a.cuModuleGetFunction, "cuModuleGetFunction", missing);
  resolve(lib, a.cuLaunchKernel, "cuLaunchKernel", missing);
  resolve(lib, a.cuStreamCreate, "cuStreamCreate", missing);
  resolve(lib, a.cuStreamSynchronize, "cuStreamSynchronize", missing);
  resolve(lib, a.cuStreamWaitEvent, "cuStreamWaitEvent", missing);
  resolve(lib, a.cuEventCreate, "cuEventCreate", missing);
  resolve(lib, a.cuEventRecord, "cuEventRecord", missing);
  resolve(lib, a.cuEventSynchronize, "cuEventSynchronize", missing);
  resolve(lib, a.cuEventDestroy, "cuEventDestroy_v2", missing);
  resolve(lib, a.cuMemAlloc, "cuMemAlloc_v2", missing);
  resolve(lib, a.cuMemFree, "cuMemFree_v2", missing);
  resolve(lib, a.cuMemcpyHtoD, "cuMemcpyHtoD_v2", missing);
  resolve(lib, a.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", missing);
  resolve(lib, a.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", missing);
  resolve(lib, a.cuMemcpyAsync, "cuMemcpyAsync", missing);
  resolve(lib, a.cuMemsetD32Async, "cuMemsetD32Async", missing);
  resolve(lib, a.cuMemsetD16Async, "cuMemsetD16Async", missing);
  std::string optional;
  resolve(lib, a.cuMemAllocAsync, "cuMemAllocAsync", optional);
  resolve(lib, a.cuMemFreeAsync, "cuMemFreeAsync", optional);
  resolve(lib, a.cuDeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool", optional);
  resolve(lib, a.cuMemPoolSetAttribute, "cuMemPoolSetAttribute", optional);
  if (!resolve(lib, a.cuEventElapsedTime, "cuEventElapsedTime_v2", optional)) // for profiling
    resolve(lib, a.cuEventElapsedTime, "cuEventElapsedTime", optional);
  return missing;
}

struct State {
  Device device;
  std::string error; // why the GPU is unusable
  bool ok = false;
};

std::string describe(const Api &a, CUresult r) {
  const char *name = nullptr, *text = nullptr;
  if (a.cuGetErrorName)
    a.cuGetErrorName(r, &name);
  if (a.cuGetErrorString)
    a.cuGetErrorString(r, &text);
  std::string s = name ? name : "CUDA error " + std::to_string(r);
  if (text)
    s += std::string(" (") + text + ")";
  return s;
}

void initialize(State &s) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    s.error = std::string("[gpu] no CUDA driver: libcuda.so.1 could not be loaded (") +
              (why ? why : "unknown reason") + ")";
    return;
  }
  Api &a = s.device.api;
  if (std::string missing = loadApi(lib, a); !missing.empty()) {
    s.error = "[gpu] the CUDA driver is too old: libcuda.so.1 lacks " + missing;
    return;
  }
  if (CUresult r = a.cuInit(0)) {
    s.error = "[gpu] no CUDA device: cuInit failed with " + describe(a, r);
    return;
  }
  int count = 0;
  if (CUresult r = a.cuDeviceGetCount(&count); r || count == 0) {
    s.error = "[gpu] no CUDA device (cuDeviceGetCount: " +
              (r ? describe(a, r) : std::string("0 devices")) + ")";
    return;
  }
  const int ordinal = settings::gpuDevice();
  if (ordinal < 0 || ordinal >= count) {
    s.error = "[gpu] TINYMLIR_GPU_DEVICE=" + std::to_string(ordinal) + " but there are " +
              std::to_string(count) + " CUDA devices";
    return;
  }
  Device &d = s.device;
  int major = 0, minor = 0, pools = 0;
  char name[256] = {};
  CUresult r = a.cuDeviceGet(&d.device, ordinal);
  if (!r)
    r = a.cuDeviceGetAttribute(&major, kAttrComputeCapabilityMajor, d.device);
  if (!r)
    r = a.cuDeviceGetAttribute(&minor, kAttrComputeCapabilityMinor, d.device);
  if (!r)
    r = a.cuDeviceGetName(name, sizeof name - 1, d.device);
  if (!r)
    r = a.cuDevicePrimaryCtxRetain(&d.context, d.device);
  if (!r)
    r = a.cuCtxSetCurrent(d.context);
  if (!r)
    r = a.cuMemGetInfo(&d.freeMemory, &d.totalMemory);
  if (r) {
    s.error = "[gpu] cannot use CUDA device " + std::to_string(ordinal) + ": " + describe(a, r);
    return;
  }
  d.computeCapability = major * 10 + minor;
  d.name = name;
  bool poolApi = a.cuMemAllocAsync && a.cuMemFreeAsync && a.cuDeviceGetDefaultMemPool &&
                 a.cuMemPoolSetAttribute;
  if (poolApi && !a.cuDeviceGetAttribute(&pools, kAttrMemoryPoolsSupported, d.device) && pools) {
    // Keep freed memory in the pool between calls instead of returning it
    // to the system at every synchronization.
    CUmemoryPool pool = nullptr;
    unsigned long long keepAll = ~0ull;
    if (!a.cuDeviceGetDefaultMemPool(&pool, d.device) &&
        !a.cuMemPoolSetAttribute(pool, kMemPoolReleaseThreshold, &keepAll))
      d.memoryPools = true;
  }
  s.ok = true;
}

State &state() {
  static State s;
  static std::once_flag once;
  std::call_once(once, [] { initialize(s); });
  return s;
}

} // namespace

const Device *device(std::string *why) {
  State &s = state();
  if (!s.ok) {
    if (why)
      *why = s.error;
    return nullptr;
  }
  return &s.device;
}

const Device *current() {
  thread_local const Device *made = nullptr;
  if (made)
    return made;
  std::string why;
  const Device *d = device(&why);
  if (!d) {
    recordError(why);
    return nullptr;
  }
  if (!check(d->api.cuCtxSetCurrent(d->context), "cuCtxSetCurrent"))
    return nullptr;
  made = d;
  return d;
}

CUstream threadStream() {
  thread_local CUstream stream = nullptr;
  if (stream)
    return stream;
  const Device *d = current();
  if (!d)
    return nullptr;
  check(d->api.cuStreamCreate(&stream, kStreamNonBlocking), "cuStreamCreate");
  return stream;
}

CUdeviceptr allocate(size_t bytes) {
  const Device *d = current();
  CUstream s = threadStream();
  if (!d || !s || bytes == 0)
    return 0;
  CUdeviceptr p = 0;
  if (d->memoryPools)
    check(d->api.cuMemAllocAsync(&p, bytes, s), "cuMemAllocAsync");
  else
    check(d->api.cuMemAlloc(&p, bytes), "cuMemAlloc");
  return p;
}

void release(CUdeviceptr pointer) {
  const Device *d = current();
  CUstream s = threadStream();
  if (!d || !s || !pointer)
    return;
  if (d->memoryPools) {
    check(d->api.cuMemFreeAsync(pointer, s), "cuMemFreeAsync");
  } else {
    // cuMemFree does not wait for this stream's kernels that may still use it.
    check(d->api.cuStreamSynchronize(s), "cuStreamSynchronize");
    check(d->api.cuMemFree(pointer), "cuMemFree");
  }
}

Counters &counters() {
  static Counters c;
  return c;
}

std::string errorText(CUresult result) {
  const Device *d = device();
  if (!d) {
    Api none{};
    return describe(none, result);
  }
  return describe(d->api, result);
}

void recordError(const std::string &message) {
  if (pendingError.empty())
    pendingError = message;
}

bool check(CUresult result, const char *what) {
  if (result == 0)
    return true;
  recordError(std::string("[gpu] ") + what + " failed: " + errorText(result));
  return false;
}

std::string takeError() {
  std::string e;
  e.swap(pendingError);
  return e;
}

} // namespace tinymlir::cuda
