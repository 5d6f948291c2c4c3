// Which parallel loops get threads. linalg lowers to scf.parallel; OpenMP
// pays a fork/join per loop, which small loops (decoding's rows of 768) do not
// repay. Loops with little work, and loops nested in another parallel loop,
// become plain scf.for nests; the rest become OpenMP loops.
#include "passes/Passes.h"
#include "passes/Pipeline.h"

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Utils/StaticValueUtils.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/IR/Builders.h>
#include <mlir/IR/IRMapping.h>
#include <mlir/Pass/Pass.h>

namespace tinymlir::detail {
#define GEN_PASS_DECL_SERIALIZESMALLPARALLELLOOPSPASS
#define GEN_PASS_DEF_SERIALIZESMALLPARALLELLOOPSPASS
#include "passes/Passes.h.inc"
namespace {

using namespace mlir;

/// Iterations of the loop times those of every loop inside it (an upper
/// bound of its work; unknown trip counts count as large, but inside an
/// scf.for as one: a captured Python loop's slices sized by its index, A[i,
/// :j], whose fork and join each iteration would cost more than they spread).
int64_t work(scf::ParallelOp op) {
  constexpr int64_t kCap = int64_t{1} << 40;
  const int64_t kLarge = op->getParentOfType<scf::ForOp>() ? 1 : int64_t{1} << 20;
  int64_t total = 1;
  for (auto [l, u, s] : llvm::zip(op.getLowerBound(), op.getUpperBound(), op.getStep()))
    total = std::min(total * constantTripCount(l, u, s).value_or(kLarge), kCap);
  op.getBody()->walk([&](scf::ForOp f) {
    total = std::min(
        total *
            constantTripCount(f.getLowerBound(), f.getUpperBound(), f.getStep()).value_or(kLarge),
        kCap);
  });
  return total;
}

/// Rewrites `op` as a loop nest in the same order, where dimension `parallel`
/// (or none, if -1) stays an scf.parallel and every other one is an scf.for.
/// One parallel dimension keeps the threads' ranges contiguous and the inner
/// loops plain (OpenMP's collapsed multi-dimensional loops would recompute
/// the indices with divisions and defeat vectorization).
void rewriteNest(scf::ParallelOp op, int64_t parallel) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  IRMapping mapping;
  std::function<void(OpBuilder &, size_t)> nest = [&](OpBuilder &b, size_t dim) {
    if (dim == op.getNumLoops()) {
      for (Operation &inner : op.getBody()->without_terminator())
        b.clone(inner, mapping);
      return;
    }
    Value l = op.getLowerBound()[dim], u = op.getUpperBound()[dim], s = op.getStep()[dim];
    if (static_cast<int64_t>(dim) == parallel) {
      scf::ParallelOp::create(b, loc, ValueRange{l}, ValueRange{u}, ValueRange{s},
                              [&](OpBuilder &b, Location, ValueRange ivs) {
                                mapping.map(op.getInductionVars()[dim], ivs[0]);
                                nest(b, dim + 1);
                              });
      return;
    }
    scf::ForOp::create(b, loc, l, u, s, ValueRange{},
                       [&](OpBuilder &b, Location, Value iv, ValueRange) {
                         mapping.map(op.getInductionVars()[dim], iv);
                         nest(b, dim + 1);
                         scf::YieldOp::create(b, loc);
                       });
  };
  nest(b, 0);
  op->erase();
}

} // namespace

std::optional<int64_t> constantTripCount(Value lower, Value upper, Value step) {
  auto l = getConstantIntValue(lower), u = getConstantIntValue(upper),
       s = getConstantIntValue(step);
  if (!l || !u || !s || *s <= 0)
    return std::nullopt;
  return std::max<int64_t>(0, (*u - *l + *s - 1) / *s);
}

namespace {

/// tinymlir-serialize-small-parallel-loops: parallel loops with less work
/// than minimum-work iterations (and parallel loops nested in another) become
/// sequential loops; the rest keep one parallel dimension, which gets threads.
struct SerializeSmallParallelLoopsPass
    : impl::SerializeSmallParallelLoopsPassBase<SerializeSmallParallelLoopsPass> {
  using Base::Base;
  void runOnOperation() override;
};

void SerializeSmallParallelLoopsPass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<std::pair<scf::ParallelOp, int64_t>> rewrites;
  module.walk([&](scf::ParallelOp op) {
    if (op.getNumReductions() != 0)
      return;
    if (op->getParentOfType<scf::ParallelOp>() || work(op) < minimumWork) {
      rewrites.push_back({op, -1});
      return;
    }
    // Threads over the first dimension with more than one iteration.
    int64_t parallel = -1;
    for (size_t d = 0; d < op.getNumLoops() && parallel < 0; ++d)
      if (constantTripCount(op.getLowerBound()[d], op.getUpperBound()[d], op.getStep()[d])
              .value_or(2) > 1)
        parallel = static_cast<int64_t>(d);
    if (op.getNumLoops() > 1 || parallel < 0)
      rewrites.push_back({op, parallel});
  });
  // The walk is post-order: inner loops are rewritten before the loops that
  // contain them, whose bodies (already rewritten) are then cloned.
  for (auto [op, parallel] : rewrites) {
    rewriteNest(op, parallel);
    if (parallel < 0)
      ++serialized;
  }
}

} // namespace
} // namespace tinymlir::detail
