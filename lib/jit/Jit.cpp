// Argument trees and the specialization cache (no MLIR here).
#include "frontend/Graph.h"
#include "runtime/Call.h"

#include <tinymlir/jit.h>

#include <cstdio>

namespace tinymlir {

void setThreads(int threads) { detail::setRuntimeThreads(threads); }
std::string blasLibrary() { return detail::blasLibrary(); }
uint64_t numpyBlasProducts() { return detail::numpyBlasProducts(); }

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

} // namespace detail
} // namespace tinymlir
