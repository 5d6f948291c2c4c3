// tinymlir-fuse-elementwise: MLIR's linalg-fuse-elementwise-ops (its
// patterns, in its order, with its cost rule: a producer with one use fuses
// into its consumer), with the fused operation's inputs bounded. Traces of
// unrolled scalar loops are chains of thousands of rank-0 generics; unbounded,
// they fuse into one generic with an input per step, each fusion copying the
// whole operand list of the last (2,000 steps: fusion and bufferization ~10 s).
// Reductions whose operand is an elementwise result are generalized first, so
// that the producer fuses into them (lowered by tinymlir-lower-reductions).
#include "passes/Passes.h"
#include "passes/Pipeline.h"

#include <mlir/Dialect/Affine/IR/AffineOps.h>
#include <mlir/Dialect/Linalg/IR/Linalg.h>
#include <mlir/Dialect/Linalg/Transforms/Transforms.h>
#include <mlir/Dialect/Tensor/IR/Tensor.h>
#include <mlir/Dialect/Tensor/Transforms/Transforms.h>
#include <mlir/IR/PatternMatch.h>
#include <mlir/Pass/Pass.h>
#include <mlir/Transforms/GreedyPatternRewriteDriver.h>

namespace tinymlir::detail {
#define GEN_PASS_DECL_FUSEELEMENTWISEPASS
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "passes/Passes.h.inc"
namespace {

using namespace mlir;

struct FuseElementwisePass : impl::FuseElementwisePassBase<FuseElementwisePass> {
  using Base::Base;
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    const int64_t limit = maxInputs;
    linalg::ControlFusionFn control = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && producer->hasOneUse();
    };
    linalg::ControlFusionFn bounded = [limit](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      if (!producer || !producer->hasOneUse())
        return false;
      auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
      auto made = dyn_cast<linalg::LinalgOp>(producer);
      if (!consumer || !made)
        return true;
      return static_cast<int64_t>(consumer.getNumDpsInputs() + made.getNumDpsInputs()) - 1 <= limit;
    };
    linalg::populateElementwiseOpsFusionPatterns(patterns, bounded);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, control);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, control);
    // A reduction of an elementwise result ((x * y).sum(), a cast then a
    // sum) fuses with it as a generic: generalized, the reduce reads its
    // producer's operands directly instead of a materialized temporary.
    SmallVector<linalg::ReduceOp> reductions;
    getOperation().walk([&](linalg::ReduceOp op) {
      if (op.hasPureTensorSemantics() && op.getInputs().size() == 1)
        if (auto producer = op.getInputs()[0].getDefiningOp<linalg::GenericOp>();
            producer && producer->hasOneUse() &&
            producer.getNumParallelLoops() == producer.getNumLoops())
          reductions.push_back(op);
    });
    IRRewriter rewriter(context);
    for (linalg::ReduceOp op : reductions) {
      rewriter.setInsertionPoint(op);
      (void)linalg::generalizeNamedOp(rewriter, op);
    }
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    (void)applyPatternsGreedily(getOperation(), std::move(patterns), config);
  }
};

} // namespace
} // namespace tinymlir::detail
