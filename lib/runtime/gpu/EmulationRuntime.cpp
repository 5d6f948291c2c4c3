// The "device" side of GPU emulation (passes/gpu/EmulateOnHost.cpp rewrites
// the launches): "device" buffers are host allocations that the data
// movement functions of RuntimeAbi.h copy, as on a GPU, so that host/device
// mix-ups show; counters as for a real device.
#include "runtime/Call.h"
#include "runtime/gpu/CudaDriver.h"
#include "runtime/gpu/RuntimeAbi.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" int omp_get_thread_num();
extern "C" int omp_get_num_threads();

namespace tinymlir::detail {
namespace {

// The "device" side of the emulation: host buffers, copied like device ones.
thread_local std::vector<void *> callBuffers;

int64_t emuInput(int64_t host, int64_t bytes) {
  if (bytes <= 0)
    return 0;
  void *p = std::malloc(static_cast<size_t>(bytes));
  std::memcpy(p, reinterpret_cast<const void *>(host), static_cast<size_t>(bytes));
  callBuffers.push_back(p);
  ++cuda::counters().transientUploads;
  cuda::counters().bytesUploaded += static_cast<size_t>(bytes);
  return reinterpret_cast<int64_t>(p);
}

int64_t emuOutput(int64_t bytes) {
  if (bytes <= 0)
    return 0;
  void *p = std::malloc(static_cast<size_t>(bytes));
  std::memset(p, 0xff, static_cast<size_t>(bytes)); // NaN: an unwritten output shows
  callBuffers.push_back(p);
  return reinterpret_cast<int64_t>(p);
}

void emuCopyOut(int64_t host, int64_t device, int64_t bytes) {
  if (bytes > 0 && device)
    std::memcpy(reinterpret_cast<void *>(host), reinterpret_cast<const void *>(device),
                static_cast<size_t>(bytes));
  cuda::counters().bytesDownloaded += static_cast<size_t>(std::max<int64_t>(bytes, 0));
}

void emuCallEnd() {
  for (void *p : callBuffers)
    std::free(p);
  callBuffers.clear();
}

int64_t emuThread(int64_t expected) {
  if (omp_get_num_threads() != expected && omp_get_thread_num() == 0)
    cuda::recordError("[gpu] emulation: the OpenMP team has " +
                      std::to_string(omp_get_num_threads()) + " threads, the block " +
                      std::to_string(expected));
  return omp_get_thread_num();
}

} // namespace

RuntimeSymbols gpuEmulationSymbols() {
  return {symbol(kGpuInputFn, &emuInput), symbol(kGpuOutputFn, &emuOutput),
          symbol(kGpuCopyOutFn, &emuCopyOut), symbol(kGpuCallEndFn, &emuCallEnd),
          symbol(kEmuThreadFn, &emuThread)};
}

} // namespace tinymlir::detail
