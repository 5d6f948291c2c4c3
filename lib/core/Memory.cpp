// Host memory for arrays and for generated code's temporaries (array.h).
//
// A compiled function allocates its temporaries on every call, and glibc
// serves large blocks with mmap and returns them with munmap: each call
// faulted in every page of every temporary again. Measured on a 256-token
// GPT-2 124M prefill (2 threads, Xeon with AVX-512): 12% of the time in page
// faults; blocks kept for reuse took the float32 prefill 280 -> 235 ms.
//
// Blocks of kPooled bytes or more are kept when freed, up to kKeep bytes in
// all, and handed out again for a request of the same size or up to a quarter
// smaller. Each block has a header (the block's capacity, 0 for a small
// block) kHeader bytes before the address handed out.
#include "tinymlir/array.h"

#include "MemoryTracking.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <new>

namespace tinymlir {
namespace {

constexpr size_t kHeader = 64; // keeps the data 64-byte aligned
constexpr size_t kPooled = size_t{64} << 10;
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kKeep = 0; // AddressSanitizer sees every use after free
#else
constexpr size_t kKeep = size_t{256} << 20;
#endif

struct Pool {
  std::mutex mutex;
  std::multimap<size_t, void *> kept; // capacity -> block (its header)
  size_t keptBytes = 0;
};

thread_local std::unordered_set<void *> *tracked = nullptr; // trackAllocations

Pool &pool() {
  static Pool *p = new Pool; // never destroyed: arrays may be freed during exit
  return *p;
}

void *withHeader(void *block, size_t capacity) {
  *static_cast<size_t *>(block) = capacity;
  return static_cast<char *>(block) + kHeader;
}

} // namespace

void *allocateMemory(size_t bytes) {
  size_t capacity = (std::max<size_t>(bytes, 1) + kHeader - 1) / kHeader * kHeader;
  if (capacity >= kPooled) {
    capacity = (capacity + 4095) / 4096 * 4096;
    Pool &p = pool();
    std::lock_guard lock(p.mutex);
    auto it = p.kept.lower_bound(capacity);
    if (it != p.kept.end() && it->first <= capacity + capacity / 4) {
      void *block = it->second;
      p.keptBytes -= it->first;
      p.kept.erase(it);
      void *data = static_cast<char *>(block) + kHeader;
      if (tracked)
        tracked->insert(data);
      return data;
    }
  }
  void *block = std::aligned_alloc(kHeader, capacity + kHeader);
  if (!block)
    throw std::bad_alloc();
  void *data = withHeader(block, capacity >= kPooled ? capacity : 0);
  if (tracked)
    tracked->insert(data);
  return data;
}

void detail::trackAllocations(std::unordered_set<void *> *live) { tracked = live; }

void freeMemory(void *data) {
  if (!data)
    return;
  if (tracked)
    tracked->erase(data);
  void *block = static_cast<char *>(data) - kHeader;
  const size_t capacity = *static_cast<size_t *>(block);
  if (capacity >= kPooled) {
    Pool &p = pool();
    std::lock_guard lock(p.mutex);
    if (p.keptBytes + capacity <= kKeep) {
      p.kept.emplace(capacity, block);
      p.keptBytes += capacity;
      return;
    }
  }
  std::free(block);
}

size_t releaseMemory() {
  Pool &p = pool();
  std::lock_guard lock(p.mutex);
  const size_t released = p.keptBytes;
  for (auto &[capacity, block] : p.kept)
    std::free(block);
  p.kept.clear();
  p.keptBytes = 0;
  return released;
}

} // namespace tinymlir
