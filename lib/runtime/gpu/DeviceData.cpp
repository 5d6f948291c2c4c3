// The data side of a GPU call (RuntimeAbi.h): inputs to the device, the result
// back, the per-call buffers, and the device-resident cache of constant inputs
// (GpuRuntime.h states the contract).
//
// Cache: registered host ranges (kept alive by holding their Array's storage)
// map to device copies keyed by (host address, bytes), uploaded at first use
// with a synchronous copy (so every thread's stream sees them) and reused
// until released or evicted. Eviction is least recently used, only of copies
// not used by the current call of this thread, after a device-wide
// synchronization (another thread's kernels might still read them). When
// nothing can be evicted the input is uploaded for this call only.
#include "runtime/Settings.h"
#include "runtime/gpu/CudaDriver.h"
#include "runtime/gpu/GpuRuntime.h"
#include "runtime/gpu/RuntimeAbi.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

namespace tinymlir {
namespace {

using namespace cuda;

struct ResidentRange {
  uintptr_t end;
  std::shared_ptr<void> owner;
};

struct DeviceCopy {
  CUdeviceptr device;
  uint64_t lastUse;
};

struct Cache {
  std::mutex mutex;
  std::map<uintptr_t, ResidentRange> ranges; // by first byte
  std::map<std::pair<uintptr_t, size_t>, DeviceCopy> copies;
  size_t bytes = 0;
  size_t limit = 0; // 0: not yet known
  uint64_t clock = 0;
};

Cache &cache() {
  static Cache c;
  return c;
}

/// This thread's call in progress: its transient buffers, and the clock when
/// it started (copies used since are not evicted by it).
struct Call {
  bool active = false;
  uint64_t start = 0;
  std::vector<CUdeviceptr> buffers;
};
thread_local Call call;

void beginCall(Cache &c) {
  if (!call.active) {
    call.active = true;
    call.start = c.clock;
  }
}

bool isResident(const Cache &c, uintptr_t host, size_t bytes) {
  auto it = c.ranges.upper_bound(host);
  if (it == c.ranges.begin())
    return false;
  --it;
  return host >= it->first && host + bytes <= it->second.end;
}

size_t cacheLimit(const Device &d) {
  return settings::gpuCacheBytes().value_or(d.freeMemory / 4 * 3);
}

/// Frees device copies (caller holds the lock).
void freeCopies(Cache &c, const std::vector<std::pair<uintptr_t, size_t>> &keys) {
  if (keys.empty())
    return;
  const Device *d = current();
  if (!d)
    return;
  check(d->api.cuCtxSynchronize(), "cuCtxSynchronize");
  for (const auto &key : keys) {
    auto it = c.copies.find(key);
    if (it == c.copies.end())
      continue;
    check(d->api.cuMemFree(it->second.device), "cuMemFree");
    c.bytes -= key.second;
    c.copies.erase(it);
  }
}

/// Makes room for `bytes` by evicting copies unused by this call; false if it cannot.
bool makeRoom(Cache &c, size_t bytes) {
  if (c.bytes + bytes <= c.limit)
    return true;
  std::vector<std::pair<uint64_t, std::pair<uintptr_t, size_t>>> candidates;
  for (const auto &[key, copy] : c.copies)
    if (copy.lastUse <= call.start)
      candidates.push_back({copy.lastUse, key});
  std::sort(candidates.begin(), candidates.end());
  std::vector<std::pair<uintptr_t, size_t>> evict;
  size_t freed = 0;
  for (const auto &[lastUse, key] : candidates) {
    if (c.bytes - freed + bytes <= c.limit)
      break;
    evict.push_back(key);
    freed += key.second;
  }
  if (c.bytes - freed + bytes > c.limit)
    return false;
  freeCopies(c, evict);
  return true;
}

/// The cached device copy of a resident input, or 0 to upload it per call.
CUdeviceptr residentCopy(Cache &c, const Device &d, uintptr_t host, size_t bytes) {
  auto key = std::make_pair(host, bytes);
  if (auto it = c.copies.find(key); it != c.copies.end()) {
    it->second.lastUse = ++c.clock;
    ++counters().residentHits;
    return it->second.device;
  }
  if (c.limit == 0)
    c.limit = cacheLimit(d);
  if (!makeRoom(c, bytes))
    return 0;
  CUdeviceptr p = 0;
  CUstream s = threadStream();
  if (!check(d.api.cuMemAlloc(&p, bytes), "cuMemAlloc"))
    return 0;
  if (!check(d.api.cuMemcpyHtoDAsync(p, reinterpret_cast<const void *>(host), bytes, s),
             "cuMemcpyHtoDAsync") ||
      !check(d.api.cuStreamSynchronize(s), "cuStreamSynchronize")) {
    d.api.cuMemFree(p);
    return 0;
  }
  c.copies[key] = {p, ++c.clock};
  c.bytes += bytes;
  ++counters().residentUploads;
  counters().bytesUploaded += bytes;
  return p;
}

} // namespace

void gpuKeepResident(const Array &a) {
  if (a.nbytes() == 0 || !a.isContiguous())
    return; // non-contiguous inputs are copied by every call anyway
  Cache &c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto begin = reinterpret_cast<uintptr_t>(a.data());
  auto &range = c.ranges[begin];
  range.end = std::max(range.end, begin + a.nbytes());
  range.owner = a.owner();
}

namespace {
void releaseRanges(bool all, uintptr_t begin) {
  Cache &c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  uintptr_t end = 0;
  if (all) {
    end = UINTPTR_MAX;
  } else {
    auto it = c.ranges.find(begin);
    if (it == c.ranges.end())
      return;
    end = it->second.end;
  }
  std::vector<std::pair<uintptr_t, size_t>> keys;
  for (const auto &[key, copy] : c.copies)
    if (key.first >= begin && key.first + key.second <= end)
      keys.push_back(key);
  if (device())
    freeCopies(c, keys);
  if (all)
    c.ranges.clear();
  else
    c.ranges.erase(begin);
}
} // namespace

void gpuReleaseResident(const Array &a) {
  releaseRanges(false, reinterpret_cast<uintptr_t>(a.data()));
}

void gpuReleaseAllResident() { releaseRanges(true, 0); }

GpuTransferStats gpuTransferStats() {
  Counters &n = counters();
  GpuTransferStats s;
  s.residentUploads = n.residentUploads;
  s.residentHits = n.residentHits;
  s.transientUploads = n.transientUploads;
  s.bytesUploaded = n.bytesUploaded;
  s.bytesDownloaded = n.bytesDownloaded;
  s.launches = n.launches;
  Cache &c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  s.residentBytes = c.bytes;
  return s;
}

} // namespace tinymlir

using namespace tinymlir;
using namespace tinymlir::cuda;

extern "C" int64_t tinymlirGpuInput(int64_t host, int64_t bytes) {
  const Device *d = current();
  if (!d || bytes <= 0)
    return 0;
  auto address = static_cast<uintptr_t>(host);
  auto size = static_cast<size_t>(bytes);
  Cache &c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    beginCall(c);
    if (isResident(c, address, size))
      if (CUdeviceptr p = residentCopy(c, *d, address, size))
        return static_cast<int64_t>(p);
  }
  CUdeviceptr p = allocate(size);
  if (!p)
    return 0;
  call.buffers.push_back(p);
  check(d->api.cuMemcpyHtoDAsync(p, reinterpret_cast<const void *>(address), size, threadStream()),
        "cuMemcpyHtoDAsync");
  ++counters().transientUploads;
  counters().bytesUploaded += size;
  return static_cast<int64_t>(p);
}

extern "C" int64_t tinymlirGpuOutput(int64_t bytes) {
  if (bytes <= 0)
    return 0;
  {
    Cache &c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    beginCall(c);
  }
  CUdeviceptr p = allocate(static_cast<size_t>(bytes));
  if (p)
    call.buffers.push_back(p);
  return static_cast<int64_t>(p);
}

extern "C" void tinymlirGpuCopyOut(int64_t host, int64_t device, int64_t bytes) {
  const Device *d = current();
  CUstream s = threadStream();
  if (!d || !s || !device || bytes <= 0)
    return;
  check(d->api.cuMemcpyDtoHAsync(reinterpret_cast<void *>(host), static_cast<CUdeviceptr>(device),
                                 static_cast<size_t>(bytes), s),
        "cuMemcpyDtoHAsync");
  check(d->api.cuStreamSynchronize(s), "cuStreamSynchronize");
  counters().bytesDownloaded += static_cast<size_t>(bytes);
  collectKernelTimes();
}

extern "C" void tinymlirGpuCallEnd() {
  for (CUdeviceptr p : call.buffers)
    release(p);
  call.buffers.clear();
  call.active = false;
}
