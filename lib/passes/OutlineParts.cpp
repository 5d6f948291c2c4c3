// tinymlir-outline-parts: a long straight-line kernel split into functions of
// bounded size, each called once in order.
//
// An unrolled Python loop is one block of tens of thousands of operations
// (a 100x100 Cholesky: 4,950 steps, each a dot loop, loads and stores).
// Lowering and LLVM do not scale linearly in the size of one function:
// convert-scf-to-cf splits the block after every loop (moving everything
// after it), and LLVM's memory analyses look back over a function's loads and
// stores. The kernel's top-level operations are cut into consecutive parts of
// about `part-ops` nested operations (1,000 by default: 500 or 2,000 made a
// 100x100 Cholesky 30% slower to compile); each part becomes a private function
// (tinymlir.part, kept out of line by tinymlir-kernel-noinline) taking the
// values it reads from before it and returning those read after it.
// Constants and views of the kernel's arguments stay in the kernel, and each
// part computes again those it reads (passed, a part's hundreds of constant
// indices and subviews made calls of hundreds of arguments). Kernels under
// `min-ops` are left alone. Linear: each operation is moved once and each use
// looked at once.
//
// tinymlir-move-out-parts then moves the parts, `per-module` at a time, into
// modules nested in the kernel's, which keeps a declaration of each. The CPU
// target takes them out (takeNestedModules), then lowers and compiles each on
// its own, on every core: each pass and LLVM then work on one part's memory
// at a time. Lowering the whole module at once took 6.5x the time for 4x the
// steps (a 56x56 to a 112x112 Cholesky), every pass alike: cache misses and
// malloc, not any one algorithm.
#include "builder/MLIRGen.h"
#include "passes/Passes.h"
#include "passes/Pipeline.h"

#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/IR/Builders.h>
#include <mlir/IR/IRMapping.h>
#include <mlir/IR/Matchers.h>
#include <mlir/IR/SymbolTable.h>
#include <mlir/Pass/Pass.h>

#include <functional>
#include <string>

namespace tinymlir::detail {
#define GEN_PASS_DECL_OUTLINEPARTSPASS
#define GEN_PASS_DEF_OUTLINEPARTSPASS
#define GEN_PASS_DECL_MOVEOUTPARTSPASS
#define GEN_PASS_DEF_MOVEOUTPARTSPASS
#include "passes/Passes.h.inc"
namespace {

using namespace mlir;

/// Whether `op` is computed again in each part that reads it instead of being
/// passed: a constant, a global's address, or a view (subview, cast,
/// reshape) of a kernel argument or of such a value, given those already
/// found (`remat`).
bool rematerializable(Operation *op, const DenseSet<Operation *> &remat, Block &block) {
  if (op->getNumResults() != 1 || op->getNumRegions() != 0)
    return false;
  if (op->getNumOperands() == 0)
    return op->hasTrait<OpTrait::ConstantLike>() || isa<memref::GetGlobalOp>(op);
  if (!isa<memref::SubViewOp, memref::CastOp, memref::ExpandShapeOp, memref::CollapseShapeOp,
           memref::ReinterpretCastOp>(op))
    return false;
  return llvm::all_of(op->getOperands(), [&](Value v) {
    return v.getParentBlock() == &block &&
           (isa<BlockArgument>(v) || remat.contains(v.getDefiningOp()));
  });
}

struct OutlinePartsPass : impl::OutlinePartsPassBase<OutlinePartsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto kernel = module.lookupSymbol<func::FuncOp>(kKernelName);
    if (!kernel || !kernel.getBody().hasOneBlock())
      return;
    Block &block = kernel.getBody().front();
    int64_t total = 0;
    block.walk([&](Operation *) { ++total; });
    if (total < minOps)
      return;
    // Constants and views of the arguments go first, and stay in the kernel:
    // each part computes again those it reads.
    Operation *firstOther = nullptr;
    for (Operation &op : llvm::make_early_inc_range(block.without_terminator())) {
      if (rematerializable(&op, remat_, block)) {
        remat_.insert(&op);
        if (firstOther)
          op.moveBefore(firstOther);
      } else if (!firstOther) {
        firstOther = &op;
      }
    }
    SmallVector<std::pair<Operation *, int64_t>> ops; // top-level op, nested ops in it
    for (Operation &op : block.without_terminator()) {
      if (remat_.contains(&op))
        continue;
      int64_t weight = 0;
      op.walk([&](Operation *) { ++weight; });
      ops.emplace_back(&op, weight);
    }
    // A part's weight also counts the constants and views it computes again,
    // once each: late steps of a loop read more distinct indices and views,
    // and parts of equal weight then stay of equal size after lowering (an
    // unrolled Cholesky's last parts were 40% larger than its first, and
    // lowering's cost per part grows faster than its size).
    size_t begin = 0;
    int64_t weight = 0;
    DenseSet<Operation *> cloned;
    std::function<void(Value)> count = [&](Value v) {
      Operation *def = v.getDefiningOp();
      if (!def || !remat_.contains(def) || !cloned.insert(def).second)
        return;
      ++weight;
      for (Value operand : def->getOperands())
        count(operand);
    };
    for (size_t i = 0; i < ops.size(); ++i) {
      weight += ops[i].second;
      ops[i].first->walk([&](Operation *o) {
        for (Value v : o->getOperands())
          count(v);
      });
      if (weight >= partOps || i + 1 == ops.size()) {
        outline(kernel, block, ArrayRef(ops).slice(begin, i + 1 - begin));
        begin = i + 1;
        weight = 0;
        cloned.clear();
      }
    }
  }

  void outline(func::FuncOp kernel, Block &block, ArrayRef<std::pair<Operation *, int64_t>> range) {
    DenseSet<Operation *> inside;
    for (auto &[op, w] : range)
      inside.insert(op);
    // Values read from before the part: passed (kernel arguments and
    // results of earlier parts, in first-use order), or computed again
    // (rematerializable ops, operands first).
    SmallVector<Value> liveIns;
    SmallVector<Operation *> clones;
    DenseSet<Value> seen;
    std::function<void(Value)> read = [&](Value v) {
      if (v.getParentBlock() != &block || inside.contains(v.getDefiningOp()) ||
          !seen.insert(v).second)
        return;
      Operation *def = v.getDefiningOp();
      if (def && remat_.contains(def)) {
        for (Value operand : def->getOperands())
          read(operand);
        clones.push_back(def);
      } else {
        liveIns.push_back(v);
      }
    };
    for (auto &[op, w] : range)
      op->walk([&](Operation *o) {
        for (Value v : o->getOperands())
          read(v);
      });
    // Values read after the part.
    SmallVector<Value> liveOuts;
    for (auto &[op, w] : range)
      for (Value r : op->getResults())
        if (llvm::any_of(r.getUses(), [&](OpOperand &use) {
              return !inside.contains(block.findAncestorOpInBlock(*use.getOwner()));
            }))
          liveOuts.push_back(r);

    Location loc = range.front().first->getLoc();
    OpBuilder b(kernel);
    auto fn = func::FuncOp::create(
        b, loc, std::string(kKernelName) + "_part" + std::to_string(parts_++),
        b.getFunctionType(ValueRange(liveIns).getTypes(), ValueRange(liveOuts).getTypes()));
    fn.setPrivate();
    fn->setAttr(kPartAttr, b.getUnitAttr());
    Block *body = fn.addEntryBlock();
    b.setInsertionPoint(range.front().first);
    auto call = func::CallOp::create(b, loc, fn, liveIns);
    body->getOperations().splice(body->end(), block.getOperations(),
                                 Block::iterator(range.front().first),
                                 std::next(Block::iterator(range.back().first)));
    IRMapping map;
    for (auto [v, arg] : llvm::zip(liveIns, body->getArguments()))
      map.map(v, arg);
    b.setInsertionPointToStart(body);
    for (Operation *def : clones)
      b.clone(*def, map); // maps its result
    for (auto &[op, w] : range)
      op->walk([&](Operation *o) {
        for (OpOperand &operand : o->getOpOperands())
          if (Value m = map.lookupOrNull(operand.get()))
            operand.set(m);
      });
    b.setInsertionPointToEnd(body);
    func::ReturnOp::create(b, loc, liveOuts);
    for (auto [v, result] : llvm::zip(liveOuts, call.getResults()))
      v.replaceUsesWithIf(result, [&](OpOperand &use) { return !fn->isAncestor(use.getOwner()); });
    ++outlined;
  }

  DenseSet<Operation *> remat_;
  int parts_ = 0;
};

/// tinymlir-move-out-parts: see the top of this file.
struct MoveOutPartsPass : impl::MoveOutPartsPassBase<MoveOutPartsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> parts;
    for (auto fn : module.getOps<func::FuncOp>())
      if (fn->hasAttr(kPartAttr))
        parts.push_back(fn);
    SymbolTable symbols(module);
    OpBuilder b(module.getContext());
    const size_t each = static_cast<size_t>(std::max<int64_t>(perModule, 1));
    for (size_t first = 0; first < parts.size(); first += each) {
      b.setInsertionPointToEnd(module.getBody());
      auto nested = ModuleOp::create(b, module.getLoc(),
                                     std::string(kKernelName) + "_parts" + std::to_string(first));
      DenseSet<StringAttr> copied;
      for (size_t k = first; k < std::min(parts.size(), first + each); ++k)
        if (failed(moveOut(parts[k], nested, symbols, copied)))
          return signalPassFailure();
    }
  }

  LogicalResult moveOut(func::FuncOp fn, ModuleOp nested, SymbolTable &symbols,
                        DenseSet<StringAttr> &copied) {
    OpBuilder b(fn);
    // What the part refers to: private functions (declarations, helpers)
    // copied; globals (constants) made public in the kernel's module and
    // declared beside the part.
    if (auto uses = SymbolTable::getSymbolUses(fn))
      for (const SymbolTable::SymbolUse &use : *uses) {
        StringAttr name = use.getSymbolRef().getRootReference();
        Operation *def = symbols.lookup(name);
        if (!def || !copied.insert(name).second)
          continue;
        b.setInsertionPointToEnd(nested.getBody());
        if (auto global = dyn_cast<memref::GlobalOp>(def)) {
          global.setPublic();
          cast<memref::GlobalOp>(b.clone(*def)).removeInitialValueAttr();
        } else if (auto callee = dyn_cast<func::FuncOp>(def); callee && callee.isPrivate()) {
          b.clone(*def);
        } else {
          return fn.emitError() << "part " << fn.getSymName() << " refers to " << name
                                << ", which cannot be moved with it";
        }
      }
    // The kernel's module keeps a declaration of the part.
    b.setInsertionPoint(fn);
    func::FuncOp::create(b, fn.getLoc(), fn.getSymName(), fn.getFunctionType()).setPrivate();
    symbols.remove(fn);
    fn->remove();
    nested.getBody()->push_back(fn);
    fn.setPublic();
    ++moved;
    return success();
  }
};

} // namespace
} // namespace tinymlir::detail
