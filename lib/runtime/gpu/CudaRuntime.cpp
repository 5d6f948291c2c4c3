// The mgpu* functions that MLIR's GPU-to-LLVM lowering (and the gpu.binary
// embedding) call, on the CUDA driver API. MLIR's own CUDA runtime library is
// not packaged; this one follows its ABI (MLIR 22):
//   ptr  mgpuModuleLoadJIT(ptr data, i32 optLevel)      PTX (text) modules
//   ptr  mgpuModuleLoad(ptr data, i64 size)             cubin / fatbin modules
//   void mgpuModuleUnload(ptr module)
//   ptr  mgpuModuleGetFunction(ptr module, ptr name)
//   void mgpuLaunchKernel(ptr f, i64 gx, gy, gz, bx, by, bz, i32 smem, ptr stream,
//                         ptr params, ptr extra, i64 paramsCount)
//   ptr  mgpuStreamCreate() / void mgpuStreamDestroy(ptr) / mgpuStreamSynchronize(ptr)
//   void mgpuStreamWaitEvent(ptr stream, ptr event)
//   ptr  mgpuEventCreate() / void mgpuEventDestroy / mgpuEventSynchronize(ptr)
//   void mgpuEventRecord(ptr event, ptr stream)
//   ptr  mgpuMemAlloc(i64 bytes, ptr stream, i8 hostShared) / void mgpuMemFree(ptr, ptr stream)
//   void mgpuMemcpy(ptr dst, ptr src, i64 bytes, ptr stream)
//   void mgpuMemset32(ptr, i32, i64 count, ptr stream) / mgpuMemset16
//   void mgpuSetDefaultDevice(i32)
//
// Design:
//  - Module loading is lazy: the engine's global constructors call
//    mgpuModuleLoadJIT at initialization (no GPU needed then); the PTX is
//    compiled by the driver at the first mgpuModuleGetFunction, choosing from
//    the bundle (RuntimeAbi.h) the newest chip the device supports.
//  - One in-order stream per host thread: mgpuStreamCreate returns it and
//    mgpuStreamDestroy keeps it. A single in-order stream satisfies every
//    dependency the async tokens express.
//  - Plain device memory (the device's stream-ordered pool), explicit copies;
//    host-shared (managed) allocations are refused.
//  - TINYMLIR_GPU_PROFILE=1: device time per kernel (gpuKernelProfile), from
//    timing events around each launch.
//  - Never throws (this runs inside JIT-compiled frames): the first failure is
//    recorded for the thread and raised by checkGpuErrors after the call; later
//    steps of a failed call are skipped where their inputs are missing.
#include "runtime/Call.h"
#include "runtime/Settings.h"
#include "runtime/gpu/CudaDriver.h"
#include "runtime/gpu/GpuRuntime.h"
#include "runtime/gpu/RuntimeAbi.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string_view>
#include <unordered_map>

namespace tinymlir {
namespace {

using namespace cuda;

struct KernelModule {
  const char *data = nullptr;
  size_t size = 0; // 0: NUL-terminated PTX (or bundle) text
  int optLevel = 3;
  std::mutex mutex;
  bool tried = false;
  CUmodule module = nullptr;
  std::string error;
  std::unordered_map<std::string, CUfunction> functions;
};

struct PtxChoice {
  std::string ptx;
  std::string error;
};

/// The PTX to load from a bundle: the newest chip not newer than the device.
PtxChoice choosePtx(const char *text, int computeCapability) {
  std::string_view all(text);
  std::string_view magic(detail::kPtxBundleMagic);
  if (all.substr(0, magic.size()) != magic)
    return {std::string(all), ""};
  size_t pos = all.find('\n');
  int best = -1;
  std::string_view bestPtx;
  std::string available;
  std::string_view tag(detail::kPtxBundleTarget);
  while (pos != std::string_view::npos && pos + 1 < all.size()) {
    size_t lineEnd = all.find('\n', pos + 1);
    if (lineEnd == std::string_view::npos)
      break;
    std::string line(all.substr(pos + 1, lineEnd - pos - 1));
    if (line.compare(0, tag.size(), tag) != 0)
      return {"", "[gpu] malformed PTX bundle"};
    char chip[32] = {};
    unsigned long long bytes = 0;
    if (std::sscanf(line.c_str() + tag.size(), " %31s %llu", chip, &bytes) != 2 ||
        lineEnd + 1 + bytes > all.size())
      return {"", "[gpu] malformed PTX bundle"};
    int sm = std::atoi(chip + 3);
    available += std::string(available.empty() ? "" : ", ") + chip;
    if (sm <= computeCapability && sm > best) {
      best = sm;
      bestPtx = all.substr(lineEnd + 1, bytes);
    }
    pos = lineEnd + bytes;
  }
  if (best < 0)
    return {"", "[gpu] the kernels were compiled for " + available + " but the device is sm_" +
                    std::to_string(computeCapability) + " (set TINYMLIR_GPU_CHIPS to include it)"};
  return {std::string(bestPtx), ""};
}

void load(KernelModule &m) {
  m.tried = true;
  const Device *d = current();
  if (!d) {
    m.error = takeError();
    return;
  }
  std::string image;
  const void *data = m.data;
  if (m.size == 0) {
    PtxChoice choice = choosePtx(m.data, d->computeCapability);
    if (!choice.error.empty()) {
      m.error = choice.error;
      return;
    }
    image = std::move(choice.ptx);
    data = image.c_str();
  }
  char errorLog[8192] = {};
  int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSize, kJitOptimizationLevel};
  void *values[] = {errorLog, reinterpret_cast<void *>(uintptr_t(sizeof errorLog - 1)),
                    reinterpret_cast<void *>(uintptr_t(std::clamp(m.optLevel, 0, 4)))};
  CUresult r = d->api.cuModuleLoadDataEx(&m.module, data, 3, options, values);
  if (r) {
    m.module = nullptr;
    m.error = "[gpu] cannot load the kernels (" + errorText(r) + ")" +
              (errorLog[0] ? std::string(": ") + errorLog : std::string());
  }
}

// --- kernel profiling (TINYMLIR_GPU_PROFILE=1) ----------------------------------
// Timing events around each launch, read when the call synchronizes.

struct TimedLaunch {
  CUfunction function;
  CUevent start, end;
};
thread_local std::vector<TimedLaunch> timedLaunches;

struct Profile {
  std::mutex mutex;
  std::unordered_map<CUfunction, std::string> names;
  std::map<std::string, std::pair<size_t, double>> kernels; // name -> (launches, seconds)
};
Profile &profile() {
  static Profile p;
  return p;
}

bool profiling() {
  static const bool on = settings::gpuProfile();
  return on;
}

// --- modules and kernels ----------------------------------------------------

void *mgpuModuleLoadJIT(void *data, int optLevel) {
  auto *m = new KernelModule;
  m->data = static_cast<const char *>(data);
  m->optLevel = optLevel;
  return m;
}

void *mgpuModuleLoad(void *data, size_t size) {
  auto *m = new KernelModule;
  m->data = static_cast<const char *>(data);
  m->size = size ? size : 1;
  return m;
}

void mgpuModuleUnload(void *module) {
  auto *m = static_cast<KernelModule *>(module);
  if (!m)
    return;
  if (m->module)
    if (const Device *d = device())
      d->api.cuModuleUnload(m->module);
  delete m;
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  auto *m = static_cast<KernelModule *>(module);
  if (!m) {
    cuda::recordError("[gpu] kernel module not registered: the execution engine was not "
                      "initialize()d");
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(m->mutex);
  if (!m->tried)
    load(*m);
  if (!m->module) {
    cuda::recordError(m->error);
    return nullptr;
  }
  auto it = m->functions.find(name);
  if (it != m->functions.end())
    return it->second;
  CUfunction f = nullptr;
  if (!check(current()->api.cuModuleGetFunction(&f, m->module, name), "cuModuleGetFunction"))
    return nullptr;
  m->functions.emplace(name, f);
  if (profiling()) {
    std::lock_guard<std::mutex> names(profile().mutex);
    profile().names[f] = name;
  }
  return f;
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY, intptr_t gridZ,
                      intptr_t blockX, intptr_t blockY, intptr_t blockZ, int32_t sharedBytes,
                      void *stream, void **params, void **extra, size_t /*paramsCount*/) {
  const Device *d = current();
  if (!function || !d || gridX <= 0 || gridY <= 0 || gridZ <= 0)
    return; // failed earlier (recorded), or nothing to do
  CUstream s = stream ? static_cast<CUstream>(stream) : threadStream();
  TimedLaunch timed{static_cast<CUfunction>(function), nullptr, nullptr};
  if (profiling() && d->api.cuEventElapsedTime &&
      check(d->api.cuEventCreate(&timed.start, 0), "cuEventCreate") &&
      check(d->api.cuEventCreate(&timed.end, 0), "cuEventCreate"))
    check(d->api.cuEventRecord(timed.start, s), "cuEventRecord");
  check(d->api.cuLaunchKernel(static_cast<CUfunction>(function), unsigned(gridX), unsigned(gridY),
                              unsigned(gridZ), unsigned(blockX), unsigned(blockY), unsigned(blockZ),
                              unsigned(sharedBytes), s, params, extra),
        "cuLaunchKernel");
  ++counters().launches;
  if (timed.end) {
    check(d->api.cuEventRecord(timed.end, s), "cuEventRecord");
    timedLaunches.push_back(timed);
  }
}

// --- streams and events -----------------------------------------------------

void *mgpuStreamCreate() { return threadStream(); }

void mgpuStreamDestroy(void *) {}

void mgpuStreamSynchronize(void *stream) {
  if (const Device *d = current(); d && stream)
    check(d->api.cuStreamSynchronize(static_cast<CUstream>(stream)), "cuStreamSynchronize");
}

void mgpuStreamWaitEvent(void *stream, void *event) {
  if (const Device *d = current(); d && stream && event)
    check(d->api.cuStreamWaitEvent(static_cast<CUstream>(stream), static_cast<CUevent>(event), 0),
          "cuStreamWaitEvent");
}

void *mgpuEventCreate() {
  const Device *d = current();
  CUevent e = nullptr;
  if (d)
    check(d->api.cuEventCreate(&e, kEventDisableTiming), "cuEventCreate");
  return e;
}

void mgpuEventDestroy(void *event) {
  if (const Device *d = current(); d && event)
    check(d->api.cuEventDestroy(static_cast<CUevent>(event)), "cuEventDestroy");
}

void mgpuEventSynchronize(void *event) {
  if (const Device *d = current(); d && event)
    check(d->api.cuEventSynchronize(static_cast<CUevent>(event)), "cuEventSynchronize");
}

void mgpuEventRecord(void *event, void *stream) {
  if (const Device *d = current(); d && event && stream)
    check(d->api.cuEventRecord(static_cast<CUevent>(event), static_cast<CUstream>(stream)),
          "cuEventRecord");
}

// --- memory -----------------------------------------------------------------

void *mgpuMemAlloc(uint64_t bytes, void * /*stream*/, bool hostShared) {
  if (hostShared) {
    cuda::recordError("[gpu] host-shared (managed) allocations are not supported");
    return nullptr;
  }
  return reinterpret_cast<void *>(allocate(bytes));
}

void mgpuMemFree(void *pointer, void * /*stream*/) {
  release(reinterpret_cast<CUdeviceptr>(pointer));
}

void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream) {
  if (const Device *d = current(); d && bytes)
    check(d->api.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                               reinterpret_cast<CUdeviceptr>(src), bytes,
                               stream ? static_cast<CUstream>(stream) : threadStream()),
          "cuMemcpyAsync");
}

void mgpuMemset32(void *dst, unsigned value, size_t count, void *stream) {
  if (const Device *d = current(); d && count)
    check(d->api.cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                                  stream ? static_cast<CUstream>(stream) : threadStream()),
          "cuMemsetD32Async");
}

void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream) {
  if (const Device *d = current(); d && count)
    check(d->api.cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                                  stream ? static_cast<CUstream>(stream) : threadStream()),
          "cuMemsetD16Async");
}

/// The device is chosen once per process (TINYMLIR_GPU_DEVICE).
void mgpuSetDefaultDevice(int32_t) {}

} // namespace

namespace cuda {

void collectKernelTimes() {
  const Device *d = device();
  if (timedLaunches.empty() || !d)
    return;
  Profile &p = profile();
  std::lock_guard<std::mutex> lock(p.mutex);
  for (const TimedLaunch &t : timedLaunches) {
    float ms = 0;
    check(d->api.cuEventElapsedTime(&ms, t.start, t.end), "cuEventElapsedTime");
    auto &entry = p.kernels[p.names[t.function]];
    entry.first += 1;
    entry.second += ms * 1e-3;
    d->api.cuEventDestroy(t.start);
    d->api.cuEventDestroy(t.end);
  }
  timedLaunches.clear();
}

} // namespace cuda

std::vector<GpuKernelTime> gpuKernelProfile(bool reset) {
  Profile &p = profile();
  std::lock_guard<std::mutex> lock(p.mutex);
  std::vector<GpuKernelTime> out;
  for (const auto &[name, entry] : p.kernels)
    out.push_back({name, entry.first, entry.second});
  if (reset)
    p.kernels.clear();
  return out;
}

namespace detail {

RuntimeSymbols cudaRuntimeSymbols() {
  return {symbol("mgpuModuleLoadJIT", &mgpuModuleLoadJIT),
          symbol("mgpuModuleLoad", &mgpuModuleLoad),
          symbol("mgpuModuleUnload", &mgpuModuleUnload),
          symbol("mgpuModuleGetFunction", &mgpuModuleGetFunction),
          symbol("mgpuLaunchKernel", &mgpuLaunchKernel),
          symbol("mgpuStreamCreate", &mgpuStreamCreate),
          symbol("mgpuStreamDestroy", &mgpuStreamDestroy),
          symbol("mgpuStreamSynchronize", &mgpuStreamSynchronize),
          symbol("mgpuStreamWaitEvent", &mgpuStreamWaitEvent),
          symbol("mgpuEventCreate", &mgpuEventCreate),
          symbol("mgpuEventDestroy", &mgpuEventDestroy),
          symbol("mgpuEventSynchronize", &mgpuEventSynchronize),
          symbol("mgpuEventRecord", &mgpuEventRecord),
          symbol("mgpuMemAlloc", &mgpuMemAlloc),
          symbol("mgpuMemFree", &mgpuMemFree),
          symbol("mgpuMemcpy", &mgpuMemcpy),
          symbol("mgpuMemset32", &mgpuMemset32),
          symbol("mgpuMemset16", &mgpuMemset16),
          symbol("mgpuSetDefaultDevice", &mgpuSetDefaultDevice),
          symbol(kGpuInputFn, &tinymlirGpuInput),
          symbol(kGpuOutputFn, &tinymlirGpuOutput),
          symbol(kGpuCopyOutFn, &tinymlirGpuCopyOut),
          symbol(kGpuCallEndFn, &tinymlirGpuCallEnd)};
}

void checkGpuErrors() {
  if (std::string e = cuda::takeError(); !e.empty())
    throw Error(e);
}

} // namespace detail

void requireGpu() {
  std::string why;
  if (!cuda::device(&why))
    throw Error(why);
  if (!cuda::current() || !cuda::threadStream())
    throw Error(cuda::takeError());
  detail::checkGpuErrors();
}

std::string gpuDescription() {
  std::string why;
  const Device *d = cuda::device(&why);
  if (!d)
    return why;
  return d->name + " (sm_" + std::to_string(d->computeCapability) + ", " +
         std::to_string(d->totalMemory >> 20) + " MiB)";
}

} // namespace tinymlir
