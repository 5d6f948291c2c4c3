// Tracing state: whether this thread is tracing, and its placeholders.
#include "frontend/Graph.h"

#include <tinymlir/tensor.h>

namespace tinymlir::detail {

namespace {
thread_local int traceDepth = 0;
} // namespace

bool tracing() { return traceDepth > 0; }

TraceScope::TraceScope() { ++traceDepth; }
TraceScope::~TraceScope() { --traceDepth; }

Tensor placeholder(int64_t index, const Shape &shape, DType dtype) {
  auto node = makeNode(Op::Argument, shape, dtype);
  node->index = index;
  return Tensor(node);
}

} // namespace tinymlir::detail
