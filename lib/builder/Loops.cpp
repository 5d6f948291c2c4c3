// Loops (ModuleBuilder.h): an Op::Loop node as one scf.for carrying tensors.
//
//   %n = max(0, ceildiv(stop - start, step))         (0 for a step of 0)
//   %r:2 = scf.for %k = 0 to %n step 1 iter_args(%a = %init0, %s = %init1) {
//     %i = start + k * step                          (the index parameter)
//     ... the body, on %a and %s ...
//     scf.yield %a2, %s2
//   }
//
// A slice update of a carried array in the body is an insert_slice into its
// iter_arg, which one-shot bufferization updates in place.
#include "builder/ModuleBuilder.h"

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Bufferization/IR/Bufferization.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/Dialect/Tensor/IR/Tensor.h>

#include <algorithm>
#include <unordered_set>

namespace tinymlir::detail {

using namespace mlir;

const std::vector<Value> &ModuleBuilder::emitLoop(const NodePtr &loopNode) {
  if (auto it = loopResults_.find(loopNode.get()); it != loopResults_.end())
    return it->second;
  const Node &loop = *loopNode;
  const Region &region = *loop.region;

  // The outer values the body reads (made before the body was traced), first
  // and here: inside the loop they would be computed again in each iteration,
  // and known only there.
  std::vector<NodePtr> outer;
  std::vector<const Node *> body;
  {
    std::vector<const Node *> stack;
    std::unordered_set<const Node *> seen;
    auto visit = [&](const NodePtr &a) {
      if (!seen.insert(a.get()).second)
        return;
      if (region.inBody(*a)) {
        stack.push_back(a.get());
        body.push_back(a.get());
      } else {
        outer.push_back(a);
      }
    };
    for (const NodePtr &y : region.yields)
      visit(y);
    while (!stack.empty()) {
      const Node *n = stack.back();
      stack.pop_back();
      forEachOperand(*n, visit); // a loop inside: its bounds, inits and body
    }
  }
  std::sort(outer.begin(), outer.end(),
            [](const NodePtr &a, const NodePtr &b) { return a->seq < b->seq; });
  for (const NodePtr &n : outer)
    emit(n);

  // The trip count, in int64: max(0, ceildiv(stop - start, step)), none for a
  // step of 0 (Python's ValueError where it is known while tracing).
  Type i64 = b_.getI64Type();
  Value start = scalarOf(loop.args[0]), stop = scalarOf(loop.args[1]),
        step = scalarOf(loop.args[2]);
  Value zero = arith::ConstantIntOp::create(b_, loc_, i64, 0);
  Value one = arith::ConstantIntOp::create(b_, loc_, i64, 1);
  Value zeroStep = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::eq, step, zero);
  Value divisor = arith::SelectOp::create(b_, loc_, zeroStep, one, step);
  Value span = arith::SubIOp::create(b_, loc_, stop, start);
  Value trips = arith::CeilDivSIOp::create(b_, loc_, span, divisor);
  trips = arith::MaxSIOp::create(b_, loc_, trips, zero);
  trips = arith::SelectOp::create(b_, loc_, zeroStep, zero, trips);
  Value upper = arith::IndexCastOp::create(b_, loc_, b_.getIndexType(), trips);

  SmallVector<Value> inits;
  for (size_t k = 3; k < loop.args.size(); ++k)
    inits.push_back(emit(loop.args[k]));

  // Strip-mined for Ctrl-C: chunks of kPollInterval iterations, a poll before
  // each (tinymlir_poll, lib/runtime/Call.cpp), so that the loop of the body
  // itself holds no call (which would keep values out of registers and the
  // loop from being vectorized).
  Value lower = arith::ConstantIndexOp::create(b_, loc_, 0);
  Value unit = arith::ConstantIndexOp::create(b_, loc_, 1);
  Value chunk = arith::ConstantIndexOp::create(b_, loc_, kPollInterval);
  scf::ForOp forOp;
  auto chunks =
      scf::ForOp::create(b_, loc_, lower, upper, chunk, inits,
                         [&](OpBuilder &b, Location loc, Value first, ValueRange carried) {
                           func::CallOp::create(b, loc, "tinymlir_poll", TypeRange{}, ValueRange{});
                           Value end = arith::MinSIOp::create(
                               b, loc, arith::AddIOp::create(b, loc, first, chunk), upper);
                           forOp = scf::ForOp::create(b, loc, first, end, unit, carried);
                           scf::YieldOp::create(b, loc, forOp.getResults());
                         });

  // The body, in scopes of its own: nothing emitted inside is seen outside.
  {
    auto values = values_;
    auto scalars = scalars_;
    auto offsets = tracedOffsets_;
    auto loops = loopResults_;
    auto consumers = consumers_;
    const bool scalarMode = scalarMode_;
    // One-element values of the body as SSA scalars (an element read, the
    // index's arithmetic: i - 1), and the readers of its values known, so
    // that a row read squeezed (A[i - 1, 1:-1]) is a rank-reducing
    // extract_slice, a view, and a row's new value is computed in its box's
    // shape (readByElementwiseOps).
    scalarMode_ = true;
    for (const Node *n : body)
      for (const NodePtr &a : n->args)
        consumers_[a.get()].push_back(n);
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(forOp.getBody());
    Value k = arith::IndexCastOp::create(b_, loc_, i64, forOp.getInductionVar());
    Value i = arith::AddIOp::create(b_, loc_, start, arith::MulIOp::create(b_, loc_, k, step));
    const Node *index = region.params[0].get();
    scalars_[index] = i;
    values_[index] = tensor::FromElementsOp::create(b_, loc_, tensorType(*index), ValueRange{i});
    for (size_t c = 1; c < region.params.size(); ++c)
      values_[region.params[c].get()] = forOp.getRegionIterArgs()[c - 1];
    // The positions checked while the kernel runs (traced offsets), in program
    // order: the first out of range is the one NumPy reports.
    // (Not those of a loop inside: its own body checks them, in its scope.)
    std::vector<const Region *> inner;
    for (const Node *n : body)
      if (n->op == Op::Loop)
        inner.push_back(n->region.get());
    std::vector<const Node *> checked;
    for (const Node *n : body)
      if ((n->op == Op::Slice || n->op == Op::SliceUpdate) && tracedPositions(*n) > 0 &&
          std::none_of(inner.begin(), inner.end(), [&](const Region *r) { return r->inBody(*n); }))
        checked.push_back(n);
    std::sort(checked.begin(), checked.end(),
              [](const Node *a, const Node *b) { return a->seq < b->seq; });
    for (const Node *n : checked)
      tracedOffsets(*n);
    // Every yield's value first, then their writes into the iter_args: a value
    // that reads an iter_arg (a fused reader of a carried value's old version)
    // is computed before any carried value is written over.
    SmallVector<Value> yields;
    for (size_t c = 0; c < region.yields.size(); ++c)
      yields.push_back(emit(region.yields[c]));
    for (size_t c = 0; c < region.yields.size(); ++c) {
      Value y = yields[c];
      if (y.getType() != inits[c].getType())
        throw Error("[build] internal: loop's carried value " + std::to_string(c) +
                    " is yielded with another type");
      // One-shot bufferization wants each yield in its iter_arg's buffer: an
      // update of the parameter (slice updates, index_puts) is; any other
      // value is written there.
      const Node *base = region.yields[c].get();
      // (an inner loop's result is in its init's buffer).
      while (base->op == Op::SliceUpdate || base->op == Op::IndexPut || base->op == Op::LoopResult)
        base = base->op == Op::LoopResult
                   ? base->args[0]->args[3 + static_cast<size_t>(base->index)].get()
                   : base->args[0].get();
      if (base != region.params[c + 1].get())
        y = bufferization::MaterializeInDestinationOp::create(b_, loc_, y,
                                                              forOp.getRegionIterArgs()[c])
                .getResult();
      yields[c] = y;
    }
    scf::YieldOp::create(b_, loc_, yields);
    values_ = std::move(values);
    scalars_ = std::move(scalars);
    tracedOffsets_ = std::move(offsets);
    loopResults_ = std::move(loops);
    consumers_ = std::move(consumers);
    scalarMode_ = scalarMode;
  }
  std::vector<Value> results(chunks.getResults().begin(), chunks.getResults().end());
  return loopResults_[loopNode.get()] = std::move(results);
}

} // namespace tinymlir::detail
