// tinymlir-reuse-dead-operands: an elementwise linalg.generic whose init is a
// tensor.empty writes into one of its inputs instead, where that input dies
// there, before bufferization:
//
//   %t = linalg.generic ins(%x, %m) outs(%e) { exp(x - m) }   // %e: tensor.empty
//   ... nothing reads %x (or what aliases it) after this ...
//   ->
//   %t = linalg.generic ins(%x, %m) outs(%x) { exp(x - m) }
//
// One-shot bufferization then computes %t in %x's buffer: no new buffer (a
// large one is fresh memory from the system each call, each page faulted and
// zeroed) and one stream of memory instead of two. NumPy programs do this by
// hand (np.exp(x, out=x)); a function whose argument is updated this way has
// its argument donated, and the whole chain then runs in the caller's array.
//
// Only where bufferization keeps it in place without a copy:
// - the op is elementwise (parallel loops), the input and the init both read
//   and write through the identity map, with the same type, and the payload
//   never reads the init;
// - the input's buffer is one bufferization may write: the result of an op
//   (a new buffer, or one such op wrote in place), or a to_tensor marked
//   writable (a donated argument), through views and destinations;
// - every other use of anything aliasing it comes earlier in the op's block
//   (or overwrites it: the donated argument's final value written back);
// - the op's result is not written into an output or a box
//   (materialize_in_destination, insert_slice): there eliminate-empty-tensors
//   makes the op write into its destination directly, which saves more.
#include "passes/Passes.h"

#include <mlir/Dialect/Bufferization/IR/Bufferization.h>
#include <mlir/Dialect/Linalg/IR/Linalg.h>
#include <mlir/Dialect/Tensor/IR/Tensor.h>
#include <mlir/Interfaces/DestinationStyleOpInterface.h>
#include <mlir/Pass/Pass.h>

#include <llvm/ADT/SetVector.h>

namespace tinymlir::detail {
#define GEN_PASS_DECL_REUSEDEADOPERANDSPASS
#define GEN_PASS_DEF_REUSEDEADOPERANDSPASS
#include "passes/Passes.h.inc"
namespace {

using namespace mlir;

/// Whether `use` only overwrites what it uses: the destination of a
/// materialize_in_destination (a donated argument's final value).
bool overwrites(OpOperand &use) {
  auto m = dyn_cast<bufferization::MaterializeInDestinationOp>(use.getOwner());
  return m && &use == &m.getDestMutable();
}

bool isView(Operation *op) {
  return isa<tensor::ReshapeOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp,
             tensor::ExtractSliceOp, tensor::CastOp>(op);
}

/// The value a DPS result or a view's result may share a buffer with.
Value aliasSource(Operation *op, Value result) {
  if (isView(op))
    return op->getOperand(0);
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
    return dps.getTiedOpOperand(cast<OpResult>(result))->get();
  return {};
}

/// The values that may share `v`'s buffer (v included), or failure where
/// that buffer may not be written (a constant, a read-only argument, a value
/// made by an op this pass does not know).
FailureOr<llvm::SetVector<Value>> aliasesOf(Value v) {
  llvm::SetVector<Value> set;
  SmallVector<Value> work{v};
  while (!work.empty()) {
    Value x = work.pop_back_val();
    Operation *def = x.getDefiningOp();
    if (!def)
      return failure(); // a block argument: a loop's iteration value
    if (isa<tensor::EmptyOp>(def))
      continue; // no contents: each use is a buffer of its own
    if (!set.insert(x))
      continue;
    if (auto toTensor = dyn_cast<bufferization::ToTensorOp>(def)) {
      if (!toTensor.getWritable())
        return failure();
    } else if (Value source = aliasSource(def, x)) {
      work.push_back(source);
    } else {
      return failure();
    }
    // Down: what views it, or writes into it in place.
    for (OpOperand &use : x.getUses()) {
      Operation *user = use.getOwner();
      if (isView(user))
        work.push_back(user->getResult(0));
      else if (overwrites(use))
        continue; // its result is the new contents
      else if (auto dps = dyn_cast<DestinationStyleOpInterface>(user); dps && dps.isDpsInit(&use))
        work.push_back(dps.getTiedOpResult(&use));
    }
  }
  return set;
}

/// Whether `v`, or a value that shares or receives its buffer, is written
/// into an output or a box.
bool reachesDestination(Value v) {
  SmallVector<Value> work{v};
  llvm::SmallPtrSet<Value, 8> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    for (OpOperand &use : x.getUses()) {
      Operation *user = use.getOwner();
      if (isa<bufferization::MaterializeInDestinationOp, tensor::InsertSliceOp,
              tensor::ParallelInsertSliceOp>(user))
        return true;
      if (isView(user))
        work.push_back(user->getResult(0));
    }
  }
  return false;
}

/// The input of `op` whose buffer `init` (a tensor.empty operand) can be
/// replaced by, or nullptr.
OpOperand *deadInput(linalg::GenericOp op, OpOperand &init) {
  if (!init.get().getDefiningOp<tensor::EmptyOp>() || op.payloadUsesValueFromOperand(&init) ||
      !op.getMatchingIndexingMap(&init).isIdentity())
    return nullptr;
  Block *block = op->getBlock();
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (input->get().getType() != init.get().getType() ||
        !op.getMatchingIndexingMap(input).isIdentity())
      continue;
    FailureOr<llvm::SetVector<Value>> aliases = aliasesOf(input->get());
    if (failed(aliases))
      continue;
    auto earlier = [&](OpOperand &use) {
      if (&use == input || overwrites(use))
        return true;
      Operation *user = block->findAncestorOpInBlock(*use.getOwner());
      return user && user != op.getOperation() && user->isBeforeInBlock(op);
    };
    if (llvm::all_of(*aliases, [&](Value a) { return llvm::all_of(a.getUses(), earlier); }))
      return input;
  }
  return nullptr;
}

struct ReuseDeadOperandsPass : impl::ReuseDeadOperandsPassBase<ReuseDeadOperandsPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation().walk([&](linalg::GenericOp op) {
      if (!op.hasPureTensorSemantics() || op.getNumLoops() != op.getNumParallelLoops())
        return;
      for (OpOperand &init : op.getDpsInitsMutable()) {
        if (reachesDestination(op.getTiedOpResult(&init)))
          continue;
        if (OpOperand *input = deadInput(op, init)) {
          init.set(input->get());
          ++reused;
        }
      }
    });
  }
};

} // namespace
} // namespace tinymlir::detail
