// Symbolic extents (Graph.h): the spans of slices with traced bounds, one
// extent for equal bounds within a trace.
#include "frontend/Graph.h"

#include <optional>
#include <tuple>
#include <vector>

namespace tinymlir::detail {

namespace {

/// A bound as a node plus a constant (i + 1 and i + 1 traced twice are one
/// bound; a number is a bound with no node).
struct Bound {
  const Node *base = nullptr;
  int64_t offset = 0;
  bool operator==(const Bound &) const = default;
};

/// The value of an integral weak or integer Scalar node.
std::optional<int64_t> integerOf(const Node &n) {
  if (n.op == Op::Scalar && !n.wide && !n.weakComplex && (n.weak ? n.integral : isInteger(n.dtype)))
    return n.integer;
  return std::nullopt;
}

Bound boundOf(const NodePtr &n) {
  if (auto c = integerOf(*n))
    return {nullptr, *c};
  if ((n->op == Op::Add || n->op == Op::Sub) && n->args.size() == 2 && n->dtype == DType::i64)
    if (auto c = integerOf(*n->args[1])) {
      Bound b = boundOf(n->args[0]);
      b.offset += n->op == Op::Add ? *c : -*c;
      return b;
    }
  if (n->op == Op::Add && n->args.size() == 2 && n->dtype == DType::i64)
    if (auto c = integerOf(*n->args[0])) {
      Bound b = boundOf(n->args[1]);
      b.offset += *c;
      return b;
    }
  return {n.get(), 0};
}

struct Entry {
  std::optional<Bound> start, stop;
  int64_t length;
  DynamicBox::Span span;     // its axis is the first use's
  std::vector<NodePtr> held; // the bounds' nodes, kept while the entry is
};

/// The trace's extents, in order: extent k is kFirstExtent - k.
thread_local std::vector<Entry> extents;

/// NumPy's slice bound: negative counts from the end, then clamped to [0, n].
Tensor clamped(const Tensor &b, const Tensor &n) {
  return where(less(b, 0), maximum(b + n, 0), minimum(b, n));
}

} // namespace

DynamicBox::Span tracedSpan(int64_t axis, const std::optional<Tensor> &start,
                            const std::optional<Tensor> &stop, int64_t length) {
  auto bound = [](const std::optional<Tensor> &t, const char *which) -> std::optional<Bound> {
    if (!t)
      return std::nullopt;
    const NodePtr &n = nodeOf(*t, "slice");
    const bool integral = n->weak ? n->integral && !n->weakComplex && !n->wide
                                  : isInteger(n->dtype) || n->dtype == DType::b8;
    if (!n->shape.empty() || !integral)
      fail("slice",
           std::string("slice indices must be integers or None or have an __index__ "
                       "method; the ") +
               which + " is " + describe(n),
           ErrorKind::Type);
    return boundOf(n);
  };
  const std::optional<Bound> s = bound(start, "start"), e = bound(stop, "stop");
  for (const Entry &entry : extents)
    if (entry.start == s && entry.stop == e && entry.length == length) {
      DynamicBox::Span span = entry.span;
      span.axis = axis;
      return span;
    }
  const Tensor n = cast(weakInteger(length), DType::i64);
  const Tensor first =
      start ? clamped(cast(*start, DType::i64), n) : cast(weakInteger(0), DType::i64);
  const Tensor last = stop ? clamped(cast(*stop, DType::i64), n) : n;
  Entry entry{s, e, length, {axis, first, maximum(last - first, 0), 0}, {}};
  entry.span.extent = kFirstExtent - static_cast<int64_t>(extents.size());
  if (start)
    entry.held.push_back(start->node());
  if (stop)
    entry.held.push_back(stop->node());
  extents.push_back(std::move(entry));
  return extents.back().span;
}

Tensor symbolicSize(int64_t d) {
  const int64_t k = kFirstExtent - d;
  if (!isSymbolic(d) || k >= static_cast<int64_t>(extents.size()))
    fail("shape", "internal: no extent " + std::to_string(d) + " in this trace");
  return extents[static_cast<size_t>(k)].span.size;
}

void forgetSymbolicExtents() { extents.clear(); }

void checkSymbolicOperands(Op op, const std::vector<NodePtr> &args) {
  size_t symbolic = args.size();
  for (size_t k = 0; k < args.size() && symbolic == args.size(); ++k)
    for (int64_t d : args[k]->shape)
      if (isSymbolic(d)) {
        symbolic = k;
        break;
      }
  if (symbolic == args.size())
    return;
  switch (opInfo(op).kind) {
  case OpKind::Unary:
  case OpKind::Binary:
  case OpKind::Compare:
  case OpKind::Select:
  case OpKind::Convert:
  case OpKind::Reduction:
    return;
  default:
    break;
  }
  // A slice of (or an update into) an array of a known shape, with spans of
  // symbolic extents or a value of one: the operands past the array.
  const bool sliceOfKnown = (op == Op::Slice || op == Op::SliceUpdate) && symbolic > 0;
  if (sliceOfKnown || op == Op::MatMul || op == Op::Reshape || op == Op::Transpose ||
      op == Op::Flip)
    return;
  throw Error(std::string("[") + opName(op) +
                  "] has no rule yet for an array whose size is known only when the kernel "
                  "runs (a slice with traced bounds, x[i:]): " +
                  describe(args[symbolic]),
              ErrorKind::Trace);
}

} // namespace tinymlir::detail
