// tinymlir-straight-line-dealloc: the deallocations of a bufferized module
// whose arrays are updated in place (kBufferizeUpdatesPipeline). Its buffers
// are allocated in straight-line code and never leave their block, so each
// one is freed right after the last operation of its block that uses it or a
// view of it (any memref result of a user counts as a view). One pass over
// the uses: linear, where buffer-deallocation-pipeline's simplification grows
// quadratically with the number of buffers (a 40x40 Cholesky's 6,000 small
// temporaries: 8.8 s) and frees everything at the end of the function.
#include "passes/Passes.h"
#include "passes/Pipeline.h"

#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/IR/Builders.h>
#include <mlir/Pass/Pass.h>

namespace tinymlir::detail {
#define GEN_PASS_DECL_STRAIGHTLINEDEALLOCPASS
#define GEN_PASS_DEF_STRAIGHTLINEDEALLOCPASS
#include "passes/Passes.h.inc"
namespace {

using namespace mlir;

/// The operation of `block` after which `alloc` is freed, or null if a view
/// of it leaves the block (reaches its terminator).
Operation *lastUse(memref::AllocOp alloc) {
  Block *block = alloc->getBlock();
  Operation *last = alloc;
  SmallVector<Value> views{alloc.getResult()};
  while (!views.empty()) {
    Value v = views.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = block->findAncestorOpInBlock(*use.getOwner());
      if (!user || user == block->getTerminator())
        return nullptr;
      if (last->isBeforeInBlock(user))
        last = user;
      for (Value r : use.getOwner()->getResults())
        if (isa<BaseMemRefType>(r.getType()))
          views.push_back(r);
    }
  }
  return last;
}

struct StraightLineDeallocPass : impl::StraightLineDeallocPassBase<StraightLineDeallocPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<memref::AllocOp> allocs;
    getOperation().walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
    // isBeforeInBlock numbers each block once (then it is cached): linear.
    for (memref::AllocOp alloc : allocs) {
      Operation *last = lastUse(alloc);
      if (!last) {
        alloc.emitError("tinymlir-straight-line-dealloc: a view of this buffer leaves its block");
        return signalPassFailure();
      }
      OpBuilder b(last->getContext());
      b.setInsertionPointAfter(last);
      memref::DeallocOp::create(b, alloc.getLoc(), alloc.getResult());
      ++placed;
    }
  }
};

} // namespace
} // namespace tinymlir::detail
