// Loops traced once (include/tinymlir/tensor.h's LoopBuilder and forLoop): an
// Op::Loop node whose Region holds the body, its parameters and its yields
// (Graph.h); the builder emits it as one scf.for (lib/builder/Loops.cpp).
#include "frontend/Graph.h"
#include "frontend/Promotion.h"

#include <string>

namespace tinymlir {

using detail::fail;
using detail::makeNode;
using detail::Node;
using detail::NodePtr;

struct LoopBuilder::Impl {
  Tensor start, stop, step;
  std::vector<Tensor> inits;
  Tensor index;
  std::vector<Tensor> params;
  uint64_t firstSeq = 0;
  std::vector<std::optional<DType>> joined; // of the last finish() that failed on dtypes
  bool finished = false;
};

namespace {

/// A range() bound as an int64 tensor: Python's TypeError for anything but a
/// rank-0 integer (or bool).
Tensor bound(const Tensor &t, const char *which) {
  const NodePtr &n = detail::nodeOf(t, "loop");
  const bool integral = n->weak ? n->integral && !n->weakComplex : isInteger(n->dtype);
  if (!n->shape.empty())
    fail("loop",
         std::string("range() ") + which + " must be a 0-d integer, got " + detail::describe(n),
         ErrorKind::Type);
  if (!integral && n->dtype != DType::b8)
    fail("loop",
         std::string("range() ") + which + ": '" +
             (n->weak ? std::string(n->weakComplex ? "complex" : "float")
                      : std::string(dtypeName(n->dtype))) +
             "' object cannot be interpreted as an integer",
         ErrorKind::Type);
  return n->dtype == DType::i64 && !n->weak ? t : cast(t, DType::i64);
}

/// The value of an int64 bound known while tracing (a number, a concrete array).
std::optional<int64_t> knownValue(const Tensor &t) {
  const Node &n = *t.node();
  if (n.op == Op::Scalar)
    return n.integer;
  if (n.op == Op::Constant && n.constant.dtype() == DType::i64)
    return n.constant.data<int64_t>()[0];
  if (n.op == Op::Cast && n.args[0]->op == Op::Constant) {
    const Array &a = n.args[0]->constant;
    if (a.dtype() == DType::i32)
      return a.data<int32_t>()[0];
    if (a.dtype() == DType::i64)
      return a.data<int64_t>()[0];
  }
  return std::nullopt;
}

NodePtr param(int64_t index, const Shape &shape, DType dtype) {
  auto p = makeNode(Op::LoopParam, shape, dtype);
  p->index = index;
  return p;
}

} // namespace

LoopBuilder::LoopBuilder(const Tensor &start, const Tensor &stop, const Tensor &step,
                         std::vector<Tensor> inits)
    : impl_(std::make_unique<Impl>()) {
  Impl &l = *impl_;
  l.start = bound(start, "start");
  l.stop = bound(stop, "stop");
  l.step = bound(step, "step");
  if (knownValue(l.step) == 0)
    throw Error("range() arg 3 must not be zero", ErrorKind::Value);
  for (size_t k = 0; k < inits.size(); ++k) {
    const NodePtr &n = detail::nodeOf(inits[k], "loop");
    if (n->weak)
      inits[k] = cast(inits[k], detail::strongDType(*n));
  }
  l.inits = std::move(inits);
  // Every node of the body comes after this one.
  l.firstSeq = detail::nextSeq();
  l.index = Tensor(param(0, {}, DType::i64));
  for (size_t k = 0; k < l.inits.size(); ++k)
    l.params.emplace_back(
        param(static_cast<int64_t>(k + 1), l.inits[k].shape(), l.inits[k].dtype()));
}

LoopBuilder::~LoopBuilder() = default;
LoopBuilder::LoopBuilder(LoopBuilder &&) noexcept = default;
LoopBuilder &LoopBuilder::operator=(LoopBuilder &&) noexcept = default;

const Tensor &LoopBuilder::index() const { return impl_->index; }
const std::vector<Tensor> &LoopBuilder::params() const { return impl_->params; }
const std::vector<Tensor> &LoopBuilder::inits() const { return impl_->inits; }

std::vector<std::optional<DType>>
LoopBuilder::joinedDTypes(const std::vector<Tensor> &yields) const {
  const Impl &l = *impl_;
  if (yields.size() != l.inits.size())
    fail("loop", "the body yields " + std::to_string(yields.size()) + " values for " +
                     std::to_string(l.inits.size()) + " carried values");
  std::vector<std::optional<DType>> out(yields.size());
  for (size_t k = 0; k < yields.size(); ++k) {
    const NodePtr &init = l.inits[k].node(), &y = detail::nodeOf(yields[k], "loop");
    if (y->dtype != init->dtype || y->weak)
      out[k] = detail::operandDType(Op::Maximum, init, y);
    if (out[k] == init->dtype)
      out[k].reset();
  }
  return out;
}

std::optional<DType> LoopBuilder::joinedDType(size_t k) const {
  return k < impl_->joined.size() ? impl_->joined[k] : std::nullopt;
}

std::vector<Tensor> LoopBuilder::finish(const std::vector<Tensor> &yields) {
  Impl &l = *impl_;
  if (l.finished)
    fail("loop", "finish() was called already");
  const std::vector<std::optional<DType>> joined = joinedDTypes(yields);
  std::vector<NodePtr> yieldNodes;
  for (size_t k = 0; k < yields.size(); ++k) {
    NodePtr y = yields[k].node();
    const NodePtr &init = l.inits[k].node();
    if (y->shape != init->shape)
      fail("loop", "carried value " + std::to_string(k) + " changes shape from " +
                       shapeString(init->shape) + " to " + shapeString(y->shape));
    if (y->weak && !joined[k]) // a number of the carried dtype
      y = cast(yields[k], init->dtype).node();
    yieldNodes.push_back(std::move(y));
  }
  for (size_t k = 0; k < yields.size(); ++k)
    if (joined[k]) {
      l.joined = joined;
      fail("loop",
           "carried value " + std::to_string(k) + " changes dtype from " +
               dtypeName(l.inits[k].dtype()) + " to " + dtypeName(yields[k].dtype()) +
               " (trace the body again with it as " + dtypeName(*joined[k]) + ")",
           ErrorKind::Type);
    }
  auto region = std::make_shared<detail::Region>();
  region->params.push_back(l.index.node());
  for (const Tensor &p : l.params)
    region->params.push_back(p.node());
  region->yields = std::move(yieldNodes);
  region->firstSeq = l.firstSeq;
  region->lastSeq = detail::nextSeq();
  std::vector<NodePtr> args{l.start.node(), l.stop.node(), l.step.node()};
  for (const Tensor &t : l.inits)
    args.push_back(t.node());
  auto loop = makeNode(Op::Loop, {}, DType::i64, std::move(args));
  loop->region = std::move(region);
  std::vector<Tensor> results;
  for (size_t k = 0; k < l.inits.size(); ++k) {
    auto r = makeNode(Op::LoopResult, l.inits[k].shape(), l.inits[k].dtype(), {loop});
    r->index = static_cast<int64_t>(k);
    results.emplace_back(std::move(r));
  }
  l.finished = true;
  return results;
}

std::vector<Tensor> forLoop(
    const Tensor &start, const Tensor &stop, const Tensor &step, std::vector<Tensor> inits,
    const std::function<std::vector<Tensor>(const Tensor &i, const std::vector<Tensor> &carried)>
        &body) {
  for (int attempt = 0;; ++attempt) {
    LoopBuilder loop(start, stop, step, inits);
    std::vector<Tensor> yields = body(loop.index(), loop.params());
    const std::vector<std::optional<DType>> joined = loop.joinedDTypes(yields);
    bool retrace = false;
    for (size_t k = 0; k < joined.size(); ++k)
      if (joined[k]) {
        inits[k] = cast(loop.inits()[k], *joined[k]);
        retrace = true;
      }
    if (!retrace || attempt == 2)
      return loop.finish(yields); // the dtype error, after two retraces
  }
}

} // namespace tinymlir
