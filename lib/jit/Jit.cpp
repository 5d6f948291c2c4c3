// Argument trees and the specialization cache (no MLIR here).
#include "frontend/Graph.h"
#include "runtime/Call.h"

#include <tinymlir/jit.h>

namespace tinymlir {

void setThreads(int threads) { detail::setRuntimeThreads(threads); }
std::string blasLibrary() { return detail::blasLibrary(); }
uint64_t numpyBlasProducts() { return detail::numpyBlasProducts(); }

namespace detail {
void Flattener::tensor(Tensor &t) {
  if (!t.valid())
    throw Error("[jit] argument " + std::to_string(leaves.size()) +
                " is an invalid (default-constructed) Tensor");
  if (!t.isConcrete())
    throw Error("[jit] argument " + std::to_string(leaves.size()) +
                " is a traced Tensor outside of tracing; pass Arrays");
  const Array &a = t.array();
  key.array(dtypeDescr(a.dtype()), a.shape().data(), a.shape().size());
  leaves.push_back(a);
}

void Placer::tensor(Tensor &t) {
  t = placeholder(static_cast<int64_t>(args.size()), t.shape(), t.dtype());
  args.push_back(t);
}

} // namespace detail
} // namespace tinymlir
