// Argument trees and the specialization cache (no MLIR here).
#include "frontend/Graph.h"
#include "runtime/Call.h"

#include <tinymlir/jit.h>

#include <cstdio>

namespace tinymlir {

void setThreads(int threads) { detail::setRuntimeThreads(threads); }

namespace detail {
std::string staticKey(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%a", value);
  return text;
}

void Flattener::tensor(Tensor &t) {
  if (!t.valid())
    throw Error("[jit] argument " + std::to_string(leaves.size()) +
                " is an invalid (default-constructed) Tensor");
  if (!t.isConcrete())
    throw Error("[jit] argument " + std::to_string(leaves.size()) +
                " is a traced Tensor outside of tracing; pass Arrays");
  const Array &a = t.array();
  key += std::string("T") + dtypeName(a.dtype()) + shapeString(a.shape()) + ";";
  leaves.push_back(a);
}

void Placer::tensor(Tensor &t) {
  t = placeholder(static_cast<int64_t>(args.size()), t.shape(), t.dtype());
  args.push_back(t);
}

void Cache::insert(const std::string &key, const Compiled &compiled, size_t limit) {
  std::lock_guard lock(mutex_);
  if (compiled.fromDiskCache())
    ++stats_.diskHits;
  else
    ++stats_.compilations;
  stats_.compileSeconds += compiled.compileSeconds();
  entries_.insert_or_assign(key, Entry{compiled, ++clock_});
  while (limit > 0 && entries_.size() > limit) {
    auto oldest = entries_.begin();
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->second.lastUse < oldest->second.lastUse)
        oldest = it;
    entries_.erase(oldest);
    ++stats_.evictions;
  }
}

Compiled Cache::findOrCompile(const std::string &key, size_t limit,
                              const std::function<Compiled()> &compile) {
  std::unique_lock lock(mutex_);
  if (auto it = entries_.find(key); it != entries_.end()) {
    it->second.lastUse = ++clock_;
    ++stats_.hits;
    return it->second.compiled;
  }
  if (auto it = inFlight_.find(key); it != inFlight_.end()) {
    std::shared_future<Compiled> pending = it->second;
    ++stats_.hits; // served by the compilation under way
    lock.unlock();
    return pending.get(); // rethrows the compiler's error
  }
  std::promise<Compiled> promise;
  inFlight_.emplace(key, promise.get_future().share());
  lock.unlock();
  try {
    Compiled compiled = compile();
    insert(key, compiled, limit);
    promise.set_value(compiled);
    std::lock_guard done(mutex_);
    inFlight_.erase(key);
    return compiled;
  } catch (...) {
    promise.set_exception(std::current_exception());
    std::lock_guard failed(mutex_);
    inFlight_.erase(key);
    throw;
  }
}

bool Cache::contains(const std::string &key) const {
  std::lock_guard lock(mutex_);
  return entries_.contains(key);
}

CacheStats Cache::stats() const {
  std::lock_guard lock(mutex_);
  CacheStats s = stats_;
  s.size = entries_.size();
  return s;
}

void Cache::clear() {
  std::lock_guard lock(mutex_);
  entries_.clear();
}

} // namespace detail
} // namespace tinymlir
