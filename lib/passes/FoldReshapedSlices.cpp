// tinymlir-fold-reshaped-slices: a rank-reduced slice given its unit axes back
// (expand_shape of a rank-reducing extract_slice) is the slice itself, before
// bufferization; and the same for inserts (MLIR's reassociative reshape
// folding patterns).
//
// A loop body's augmented update of a row (C[i, :i + 1] += a * b) reads the
// row squeezed, as its elementwise readers take it, and writes it back in the
// box's shape:
//
//   %r = tensor.extract_slice %C[i, 0] [1, %n] [1, 1] : ... to tensor<?xf64>
//   %x = tensor.expand_shape %r [[0, 1]] ...                 : tensor<1x?xf64>
//   %v = linalg.generic ins(%x, ...) outs(%e)                 (elementwise)
//   tensor.insert_slice %v into %C[i, 0] [1, %n] [1, 1]
//
// eliminate-empty-tensors makes %e the box (an extract_slice of %C); with %x
// folded into an extract_slice of the same box, CSE makes the two one value,
// and one-shot bufferization computes the update in the row itself (an
// elementwise op may read and write one buffer). Before, the reshaped view
// was only an alias of the box: the op wrote a new buffer and it was copied
// into the row each iteration.
#include "passes/Passes.h"

#include <mlir/Dialect/Tensor/IR/Tensor.h>
#include <mlir/Dialect/Tensor/Transforms/Transforms.h>
#include <mlir/Pass/Pass.h>
#include <mlir/Transforms/GreedyPatternRewriteDriver.h>

namespace tinymlir::detail {
#define GEN_PASS_DECL_FOLDRESHAPEDSLICESPASS
#define GEN_PASS_DEF_FOLDRESHAPEDSLICESPASS
#include "passes/Passes.h.inc"
namespace {

using namespace mlir;

struct FoldReshapedSlicesPass : impl::FoldReshapedSlicesPassBase<FoldReshapedSlicesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    tensor::populateReassociativeReshapeFoldingPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace tinymlir::detail
