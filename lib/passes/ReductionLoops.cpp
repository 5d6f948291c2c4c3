// Reductions as loops with their accumulators in registers, for every target:
// an scf.parallel over the parallel dimensions holding an scf.for nest over
// the reductions that carries the outputs as iteration values (loaded before,
// stored after). convert-linalg-to-parallel-loops would load and store the
// output element in every iteration, which defeats vectorization on the CPU
// and costs a memory round trip per step on the GPU.
#include "passes/Passes.h"
#include "passes/Pipeline.h"

#include <mlir/Dialect/Affine/IR/AffineOps.h>
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Linalg/IR/Linalg.h>
#include <mlir/Dialect/Linalg/Transforms/Transforms.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/IR/Builders.h>
#include <mlir/IR/IRMapping.h>
#include <mlir/IR/PatternMatch.h>
#include <mlir/Pass/Pass.h>

#include <functional>

namespace tinymlir::detail {
#define GEN_PASS_DECL_LOWERREDUCTIONSPASS
#define GEN_PASS_DEF_LOWERREDUCTIONSPASS
#include "passes/Passes.h.inc"
namespace {

using namespace mlir;

/// The indices `map` gives for the loop induction variables.
SmallVector<Value> indices(OpBuilder &b, Location loc, AffineMap map, ValueRange ivs) {
  SmallVector<Value> out;
  for (AffineExpr e : map.getResults()) {
    if (auto d = dyn_cast<AffineDimExpr>(e))
      out.push_back(ivs[d.getPosition()]);
    else if (auto c = dyn_cast<AffineConstantExpr>(e))
      out.push_back(arith::ConstantIndexOp::create(b, loc, c.getValue()));
    else {
      // Dimensions without a value yet (reductions, for outputs) do not occur in e.
      SmallVector<Value> operands(ivs.begin(), ivs.end());
      while (operands.size() < map.getNumDims())
        operands.push_back(arith::ConstantIndexOp::create(b, loc, 0));
      out.push_back(
          affine::AffineApplyOp::create(b, loc, AffineMap::get(map.getNumDims(), 0, e), operands));
    }
  }
  return out;
}

} // namespace

bool reductionToLoops(linalg::GenericOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto iterators = op.getIteratorTypesArray();
  size_t parallel = 0;
  while (parallel < iterators.size() && iterators[parallel] == utils::IteratorType::parallel)
    ++parallel;
  if (parallel == iterators.size() || llvm::any_of(ranges, ShapedType::isDynamic))
    return false;
  for (OpOperand &init : op.getDpsInitsMutable())
    for (AffineExpr e : op.getMatchingIndexingMap(&init).getResults())
      for (unsigned d = parallel; d < iterators.size(); ++d)
        if (e.isFunctionOfDim(d))
          return false; // outputs must not move along a reduction
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto bound = [&](OpBuilder &ob, int64_t n) { return arith::ConstantIndexOp::create(ob, loc, n); };

  auto body = [&](OpBuilder &pb, ValueRange parallelIvs) {
    SmallVector<Value> ivs(parallelIvs.begin(), parallelIvs.end());
    SmallVector<Value> inits;
    for (OpOperand &init : op.getDpsInitsMutable())
      inits.push_back(memref::LoadOp::create(
          pb, loc, init.get(),
          indices(pb, loc, op.getMatchingIndexingMap(&init), ivs))); // maps ignore reductions
    // The reduction nest, innermost body built last.
    std::function<SmallVector<Value>(OpBuilder &, size_t, ValueRange)> nest =
        [&](OpBuilder &fb, size_t d, ValueRange acc) -> SmallVector<Value> {
      if (d == iterators.size()) {
        IRMapping map;
        Block &block = op.getRegion().front();
        for (OpOperand *in : op.getDpsInputOperands()) {
          Value v = in->get();
          if (isa<MemRefType>(v.getType()))
            v = memref::LoadOp::create(fb, loc, v,
                                       indices(fb, loc, op.getMatchingIndexingMap(in), ivs));
          map.map(block.getArgument(in->getOperandNumber()), v);
        }
        for (auto [k, a] : llvm::enumerate(acc))
          map.map(block.getArgument(op.getNumDpsInputs() + k), a);
        SmallVector<Value> results;
        for (Operation &inner : block) {
          if (auto index = dyn_cast<linalg::IndexOp>(inner))
            map.map(index.getResult(), ivs[index.getDim()]);
          else if (auto yield = dyn_cast<linalg::YieldOp>(inner))
            for (Value v : yield.getValues())
              results.push_back(map.lookupOrDefault(v));
          else
            fb.clone(inner, map);
        }
        return results;
      }
      auto loop = scf::ForOp::create(fb, loc, zero, bound(fb, ranges[d]), one, acc,
                                     [&](OpBuilder &lb, Location, Value iv, ValueRange carried) {
                                       ivs.push_back(iv);
                                       SmallVector<Value> r = nest(lb, d + 1, carried);
                                       ivs.pop_back();
                                       scf::YieldOp::create(lb, loc, r);
                                     });
      return SmallVector<Value>(loop.getResults());
    };
    SmallVector<Value> results = nest(pb, parallel, inits);
    for (auto [k, init] : llvm::enumerate(op.getDpsInitsMutable()))
      memref::StoreOp::create(pb, loc, results[k], init.get(),
                              indices(pb, loc, op.getMatchingIndexingMap(&init), ivs));
  };

  if (parallel == 0) {
    body(b, ValueRange{});
  } else {
    SmallVector<Value> lower(parallel, zero), steps(parallel, one), upper;
    for (size_t d = 0; d < parallel; ++d)
      upper.push_back(bound(b, ranges[d]));
    scf::ParallelOp::create(b, loc, lower, upper, steps,
                            [&](OpBuilder &pb, Location, ValueRange ivs) { body(pb, ivs); });
  }
  op->erase();
  return true;
}

namespace {

/// tinymlir-lower-reductions: every static linalg.reduce on memrefs, and every
/// generic with reduction iterators (a reduce fused with its producers), through
/// reductionToLoops (parallel dimensions first).
struct LowerReductionsPass : impl::LowerReductionsPassBase<LowerReductionsPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> reductions;
    auto staticMemRefs = [](linalg::LinalgOp op) {
      return op.hasPureBufferSemantics() && llvm::all_of(op->getOperands(), [](Value v) {
               auto type = dyn_cast<MemRefType>(v.getType());
               return !type || type.hasStaticShape();
             });
    };
    getOperation().walk([&](linalg::LinalgOp op) {
      if (auto reduce = dyn_cast<linalg::ReduceOp>(op.getOperation())) {
        if (reduce.getInputs().size() == 1 && staticMemRefs(op))
          reductions.push_back(op);
      } else if (isa<linalg::GenericOp>(op.getOperation()) && op.getNumReductionLoops() > 0 &&
                 op.getNumParallelLoops() + op.getNumReductionLoops() == op.getNumLoops() &&
                 staticMemRefs(op)) {
        reductions.push_back(op);
      }
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : reductions) {
      rewriter.setInsertionPoint(op);
      auto already = dyn_cast<linalg::GenericOp>(op.getOperation());
      FailureOr<linalg::GenericOp> generic =
          already ? FailureOr<linalg::GenericOp>(already) : linalg::generalizeNamedOp(rewriter, op);
      if (failed(generic))
        continue;
      // Parallel dimensions first, as reductionToLoops expects.
      SmallVector<unsigned> order;
      auto iterators = generic->getIteratorTypesArray();
      for (unsigned d = 0; d < iterators.size(); ++d)
        if (iterators[d] == utils::IteratorType::parallel)
          order.push_back(d);
      for (unsigned d = 0; d < iterators.size(); ++d)
        if (iterators[d] != utils::IteratorType::parallel)
          order.push_back(d);
      FailureOr<linalg::GenericOp> ordered =
          linalg::interchangeGenericOp(rewriter, *generic, order);
      if (succeeded(ordered) && reductionToLoops(*ordered))
        ++lowered;
    }
  }
};

} // namespace
} // namespace tinymlir::detail
