// tinymlir-write-into-destination: in a bufferized straight-line module (an
// array updated in place, kBufferizeStraightLinePipeline), an update's value
// is computed into a temporary and copied into its box:
//
//   %t = memref.alloc()                    // one use as the op's init
//   linalg.generic ins(...) outs(%t)       // the init is never read
//   memref.copy %t, %box
//
// The op is moved to the copy and writes into %box directly: one pass over
// the box instead of three. Only when it is safe: the op reads nothing of
// %box's buffer (its inputs are views of other buffers), and nothing between
// the op and the copy writes or frees a buffer the op reads.
//
// An augmented assignment (a[box] += f(...)) reads the box it writes, through
// a snapshot the builder copied (%s = memref.alloc; memref.copy %box, %s).
// An elementwise op that reads the snapshot at the point it writes reads
// each element just before writing it, so it reads %box itself instead.
#include "passes/Passes.h"
#include "passes/Pipeline.h"

#include <mlir/Dialect/Linalg/IR/Linalg.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/Interfaces/SideEffectInterfaces.h>
#include <mlir/Interfaces/ViewLikeInterface.h>
#include <mlir/Pass/Pass.h>

#include <llvm/ADT/SmallPtrSet.h>

namespace tinymlir::detail {
#define GEN_PASS_DECL_WRITEINTODESTINATIONPASS
#define GEN_PASS_DEF_WRITEINTODESTINATIONPASS
#include "passes/Passes.h.inc"
namespace {

using namespace mlir;

/// How far apart (in operations) the op and its copy may be: keeps the pass
/// linear in the module's size.
constexpr int kMaxDistance = 64;

/// Whether `op` writes or frees a buffer in `roots`, or might (unknown effects).
bool mayClobber(Operation *op, const llvm::SmallPtrSetImpl<Value> &roots) {
  if (isMemoryEffectFree(op))
    return false;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return true;
  SmallVector<MemoryEffects::EffectInstance> list;
  effects.getEffects(list);
  for (const MemoryEffects::EffectInstance &e : list) {
    if (!isa<MemoryEffects::Write, MemoryEffects::Free>(e.getEffect()))
      continue;
    Value target = e.getValue();
    if (!target || roots.contains(viewRoot(target)))
      return true;
  }
  return false;
}

/// Whether an operation strictly between `from` and `to` (later in the same
/// block, at most kMaxDistance apart) may write or free a buffer in `roots`;
/// true also if `to` is not found in reach.
bool clobberedBetween(Operation *from, Operation *to, const llvm::SmallPtrSetImpl<Value> &roots) {
  int distance = 0;
  for (Operation *op = from->getNextNode(); op != to; op = op->getNextNode())
    if (!op || ++distance > kMaxDistance || mayClobber(op, roots))
      return true;
  return false;
}

/// The linalg op that fills `copy`'s source, if it can write into the
/// copy's destination instead.
linalg::LinalgOp forwardable(memref::CopyOp copy) {
  auto alloc = copy.getSource().getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != copy->getBlock() || !alloc.getResult().hasNUses(2))
    return {};
  linalg::LinalgOp producer;
  for (OpOperand &use : alloc.getResult().getUses())
    if (use.getOwner() != copy.getOperation())
      producer = dyn_cast<linalg::LinalgOp>(use.getOwner());
  if (!producer || producer->getBlock() != copy->getBlock() || !producer.hasPureBufferSemantics() ||
      producer.getNumDpsInits() != 1 || producer.getDpsInitOperand(0)->get() != alloc.getResult() ||
      producer.payloadUsesValueFromOperand(producer.getDpsInitOperand(0)))
    return {};
  llvm::SmallPtrSet<Value, 8> read;
  for (OpOperand *in : producer.getDpsInputOperands())
    if (isa<BaseMemRefType>(in->get().getType()))
      read.insert(viewRoot(in->get()));
  Value destination = copy.getTarget();
  if (read.contains(viewRoot(destination)))
    return {};
  // The destination (and its views) must exist where the op now runs: it
  // does, at the copy; nothing in between may change what the op reads.
  return clobberedBetween(producer, copy, read) ? linalg::LinalgOp() : producer;
}

/// Whether views `a` and `b` are the same box of the same buffer.
bool sameBox(Value a, Value b) {
  if (a == b)
    return true;
  auto x = a.getDefiningOp<memref::SubViewOp>(), y = b.getDefiningOp<memref::SubViewOp>();
  return x && y && x.getSource() == y.getSource() && x.getType() == y.getType() &&
         x.getMixedOffsets() == y.getMixedOffsets() && x.getMixedSizes() == y.getMixedSizes() &&
         x.getMixedStrides() == y.getMixedStrides();
}

/// Inputs of `producer` (now writing into `destination`) that are snapshots
/// of the destination's box, read at the point the box is written: they
/// read the box itself, and the snapshots go.
int readBoxInPlace(linalg::LinalgOp producer, Value destination) {
  if (producer.getNumParallelLoops() != producer.getNumLoops())
    return 0;
  AffineMap written = producer.getMatchingIndexingMap(producer.getDpsInitOperand(0));
  llvm::SmallPtrSet<Value, 1> box{viewRoot(destination)};
  int replaced = 0;
  for (OpOperand *in : producer.getDpsInputOperands()) {
    auto snapshot = in->get().getDefiningOp<memref::AllocOp>();
    if (!snapshot || !snapshot.getResult().hasNUses(2) ||
        producer.getMatchingIndexingMap(in) != written)
      continue;
    memref::CopyOp copy;
    for (Operation *user : snapshot.getResult().getUsers())
      if (auto c = dyn_cast<memref::CopyOp>(user); c && c.getTarget() == snapshot.getResult())
        copy = c;
    if (!copy || copy->getBlock() != producer->getBlock() ||
        !sameBox(copy.getSource(), destination))
      continue;
    // Nothing between the snapshot and the op may change the box.
    if (clobberedBetween(copy, producer, box))
      continue;
    in->set(destination);
    copy->erase();
    snapshot->erase();
    ++replaced;
  }
  return replaced;
}

struct WriteIntoDestinationPass : impl::WriteIntoDestinationPassBase<WriteIntoDestinationPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      linalg::LinalgOp producer = forwardable(copy);
      if (!producer)
        continue;
      auto alloc = copy.getSource().getDefiningOp<memref::AllocOp>();
      Value destination = copy.getTarget();
      producer->moveBefore(copy);
      producer.getDpsInitOperand(0)->set(destination);
      copy->erase();
      alloc->erase();
      ++forwarded;
      snapshots += readBoxInPlace(producer, destination);
    }
  }
};

} // namespace
} // namespace tinymlir::detail
