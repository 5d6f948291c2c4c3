// tinymlir-loop-annotations: the llvm.loop_annotation that convert-scf-to-cf
// leaves on a loop's back edge, moved into the branch's own loop_annotation.
#include "passes/Passes.h"

#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Pass/Pass.h>

namespace tinymlir::detail {
#define GEN_PASS_DECL_LOOPANNOTATIONSPASS
#define GEN_PASS_DEF_LOOPANNOTATIONSPASS
#include "passes/Passes.h.inc"
namespace {

using namespace mlir;

/// tinymlir-loop-annotations: convert-scf-to-cf copies an scf.for's LLVM
/// attributes (llvm.loop_annotation: the builder's dot loops, never unrolled,
/// scalar in long kernels) onto its back edge, and convert-cf-to-llvm keeps
/// them as discardable attributes of llvm.br / llvm.cond_br; LLVM IR export
/// reads only the branches' own loop_annotation. Without this, no annotation
/// reached LLVM.
struct LoopAnnotationsPass : impl::LoopAnnotationsPassBase<LoopAnnotationsPass> {
  void runOnOperation() override {
    constexpr llvm::StringLiteral name = "llvm.loop_annotation";
    getOperation()->walk([&](Operation *op) {
      auto annotation = op->getDiscardableAttr(name);
      if (!annotation)
        return;
      if (auto loop = dyn_cast<LLVM::LoopAnnotationAttr>(annotation)) {
        if (auto br = dyn_cast<LLVM::BrOp>(op))
          br.setLoopAnnotationAttr(loop);
        else if (auto condBr = dyn_cast<LLVM::CondBrOp>(op))
          condBr.setLoopAnnotationAttr(loop);
        else
          return;
        op->removeDiscardableAttr(name);
      }
    });
  }
};

} // namespace
} // namespace tinymlir::detail
