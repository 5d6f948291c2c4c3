// The iota cache: 0..n-1 along an axis of a rank-`rank` array, one constant
// array per shape and dtype (detail::iotaAlong, Graph.h).
#include "frontend/Graph.h"

#include <map>
#include <mutex>
#include <tuple>

namespace tinymlir {

Tensor detail::iotaAlong(int64_t n, int64_t axis, int64_t rank, DType dtype) {
  static std::mutex mutex;
  static std::map<std::tuple<int64_t, int64_t, int64_t, DType>, Array> cache;
  std::lock_guard lock(mutex);
  auto key = std::make_tuple(n, axis, rank, dtype);
  auto it = cache.find(key);
  if (it == cache.end()) {
    if (cache.size() >= 256)
      cache.clear(); // the arrays live on in the graphs that use them
    Shape shape(static_cast<size_t>(rank), 1);
    shape[static_cast<size_t>(axis)] = n;
    it = cache.emplace(key, Array::arange(n, dtype).reshaped(shape)).first;
  }
  return Tensor(it->second);
}

} // namespace tinymlir
