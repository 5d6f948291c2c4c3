// tinymlir-kernel-noinline: the kernel's llvm.func, and its parts'
// (tinymlir.part), marked noinline (passthrough).
#include "passes/Passes.h"
#include "builder/MLIRGen.h"

#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/IR/Builders.h>
#include <mlir/Pass/Pass.h>

namespace tinymlir::detail {
#define GEN_PASS_DECL_KERNELNOINLINEPASS
#define GEN_PASS_DEF_KERNELNOINLINEPASS
#include "passes/Passes.h.inc"
namespace {

using namespace mlir;

/// tinymlir-kernel-noinline: the C interface wrapper and the engine's packed
/// wrappers each call the kernel: keep it out of line so that LLVM optimizes
/// and compiles its body once. A long kernel's parts (tinymlir-outline-parts)
/// stay out of line too, or LLVM would make one function of them again.
struct KernelNoInlinePass : impl::KernelNoInlinePassBase<KernelNoInlinePass> {
  using Base::Base;
  void runOnOperation() override {
    OpBuilder b(&getContext());
    for (auto fn : getOperation().getOps<LLVM::LLVMFuncOp>())
      if (fn.getSymName() == kKernelName)
        fn->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("noinline")}));
      else if (fn->hasAttr(kPartAttr))
        fn->setAttr("passthrough",
                    b.getArrayAttr({b.getStringAttr("noinline"), b.getStringAttr("optsize")}));
  }
};

} // namespace
} // namespace tinymlir::detail
