// tinymlir-private-fill-inits: each destination (DPS init) use of a filled
// tensor gets a linalg.fill of its own, before eliminate-empty-tensors.
//
// CSE merges equal fills, so reductions and products of one shape share one
// zero-filled init. Empty-tensor elimination can then make that shared fill
// write into the output of whichever result's chain reaches it first while
// the other users still read it; with several outputs written as they were
// computed, that gave a wrong sum, or a conflict bufferization cannot avoid
// (an output's buffer must be written in place). A fill of its own per
// destination removes the sharing. It costs nothing: each destination is
// written over anyway, so bufferization would otherwise copy the shared fill
// for all but one of them. Uses that only read the fill (an elementwise
// operand) keep sharing it.
#include "passes/Passes.h"

#include <mlir/Dialect/Linalg/IR/Linalg.h>
#include <mlir/Dialect/Tensor/IR/Tensor.h>
#include <mlir/IR/Builders.h>
#include <mlir/Interfaces/DestinationStyleOpInterface.h>
#include <mlir/Pass/Pass.h>

namespace tinymlir::detail {
#define GEN_PASS_DECL_PRIVATEFILLINITSPASS
#define GEN_PASS_DEF_PRIVATEFILLINITSPASS
#include "passes/Passes.h.inc"
namespace {

using namespace mlir;

struct PrivateFillInitsPass : impl::PrivateFillInitsPassBase<PrivateFillInitsPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<linalg::FillOp> fills;
    getOperation().walk([&](linalg::FillOp fill) {
      if (fill.hasPureTensorSemantics())
        fills.push_back(fill);
    });
    for (linalg::FillOp fill : fills) {
      // The destination uses after the first: each gets its own fill (of its
      // own tensor.empty where the fill's init is one), just before its user.
      SmallVector<OpOperand *> inits;
      for (OpOperand &use : fill.getResult(0).getUses())
        if (auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner()))
          if (dps.isDpsInit(&use))
            inits.push_back(&use);
      for (size_t k = 1; k < inits.size(); ++k) {
        OpOperand *use = inits[k];
        OpBuilder b(use->getOwner());
        Value init = fill.getOutputs()[0];
        if (auto empty = init.getDefiningOp<tensor::EmptyOp>())
          init = b.clone(*empty)->getResult(0);
        IRMapping map;
        map.map(fill.getOutputs()[0], init);
        use->set(b.clone(*fill, map)->getResult(0));
        ++privatized;
      }
    }
  }
};

} // namespace
} // namespace tinymlir::detail
