// Which parallel loops get threads. linalg lowers to scf.parallel; OpenMP
// pays a fork/join per loop, which small loops (decoding's rows of 768) do not
// repay. Loops with little work, and loops nested in another parallel loop,
// become plain scf.for nests; the rest become OpenMP loops.
#include "pipeline/Pipeline.h"

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Linalg/IR/Linalg.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/IR/Builders.h>
#include <mlir/IR/IRMapping.h>

namespace tinymlir::detail {
namespace {

using namespace mlir;

std::optional<int64_t> constantIndex(Value v) {
  if (auto c = v.getDefiningOp<arith::ConstantIndexOp>())
    return c.value();
  return std::nullopt;
}

std::optional<int64_t> tripCount(Value lower, Value upper, Value step) {
  auto l = constantIndex(lower), u = constantIndex(upper), s = constantIndex(step);
  if (!l || !u || !s || *s <= 0)
    return std::nullopt;
  return std::max<int64_t>(0, (*u - *l + *s - 1) / *s);
}

/// Iterations of the loop times those of every loop inside it (an upper
/// bound of its work; unknown trip counts count as large).
int64_t work(scf::ParallelOp op) {
  constexpr int64_t kLarge = int64_t{1} << 20, kCap = int64_t{1} << 40;
  int64_t total = 1;
  for (auto [l, u, s] : llvm::zip(op.getLowerBound(), op.getUpperBound(), op.getStep()))
    total = std::min(total * tripCount(l, u, s).value_or(kLarge), kCap);
  op.getBody()->walk([&](scf::ForOp f) {
    total = std::min(
        total * tripCount(f.getLowerBound(), f.getUpperBound(), f.getStep()).value_or(kLarge),
        kCap);
  });
  return total;
}

/// Rewrites `op` as a loop nest in the same order, where dimension `parallel`
/// (or none, if -1) stays an scf.parallel and every other one is an scf.for.
/// One parallel dimension keeps the threads' ranges contiguous and the inner
/// loops plain (OpenMP's collapsed multi-dimensional loops would recompute
/// the indices with divisions and defeat vectorization).
void rewriteNest(scf::ParallelOp op, int64_t parallel) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  IRMapping mapping;
  std::function<void(OpBuilder &, size_t)> nest = [&](OpBuilder &b, size_t dim) {
    if (dim == op.getNumLoops()) {
      for (Operation &inner : op.getBody()->without_terminator())
        b.clone(inner, mapping);
      return;
    }
    Value l = op.getLowerBound()[dim], u = op.getUpperBound()[dim], s = op.getStep()[dim];
    if (static_cast<int64_t>(dim) == parallel) {
      scf::ParallelOp::create(b, loc, ValueRange{l}, ValueRange{u}, ValueRange{s},
                              [&](OpBuilder &b, Location, ValueRange ivs) {
                                mapping.map(op.getInductionVars()[dim], ivs[0]);
                                nest(b, dim + 1);
                              });
      return;
    }
    scf::ForOp::create(b, loc, l, u, s, ValueRange{},
                       [&](OpBuilder &b, Location, Value iv, ValueRange) {
                         mapping.map(op.getInductionVars()[dim], iv);
                         nest(b, dim + 1);
                         scf::YieldOp::create(b, loc);
                       });
  };
  nest(b, 0);
  op->erase();
}

/// linalg.reduce on memrefs -> scf.parallel over the kept dimensions, with an
/// scf.for per reduced dimension carrying the accumulator in a register (not
/// through memory), so that LLVM vectorizes the (reassociable) accumulation.
void lowerReduce(linalg::ReduceOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value input = op.getInputs()[0], init = op.getInits()[0];
  auto inputType = cast<MemRefType>(input.getType());
  ArrayRef<int64_t> reduced = op.getDimensions();
  SmallVector<int64_t> kept;
  for (int64_t d = 0; d < inputType.getRank(); ++d)
    if (!llvm::is_contained(reduced, d))
      kept.push_back(d);
  auto index = [&](OpBuilder &bb, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(bb, loc, v);
  };
  auto body = [&](OpBuilder &b, Location loc, ValueRange outer) {
    Value start = memref::LoadOp::create(b, loc, init, outer);
    SmallVector<Value> indices(inputType.getRank());
    for (auto [k, d] : llvm::enumerate(kept))
      indices[d] = outer[k];
    std::function<Value(OpBuilder &, size_t, Value)> nest = [&](OpBuilder &b, size_t r,
                                                                Value acc) -> Value {
      if (r == reduced.size()) {
        Value x = memref::LoadOp::create(b, loc, input, indices);
        IRMapping mapping;
        Block &combiner = op.getCombiner().front();
        mapping.map(combiner.getArgument(0), x);
        mapping.map(combiner.getArgument(1), acc);
        for (Operation &inner : combiner.without_terminator())
          b.clone(inner, mapping);
        return mapping.lookup(combiner.getTerminator()->getOperand(0));
      }
      int64_t d = reduced[r];
      auto loop = scf::ForOp::create(
          b, loc, index(b, 0), index(b, inputType.getDimSize(d)), index(b, 1), ValueRange{acc},
          [&](OpBuilder &b, Location loc, Value iv, ValueRange carried) {
            indices[d] = iv;
            scf::YieldOp::create(b, loc, nest(b, r + 1, carried[0]));
          });
      return loop.getResult(0);
    };
    memref::StoreOp::create(b, loc, nest(b, 0, start), init, outer);
  };
  if (kept.empty()) {
    body(b, loc, ValueRange{});
  } else {
    SmallVector<Value> lower, upper, step;
    for (int64_t d : kept) {
      lower.push_back(index(b, 0));
      upper.push_back(index(b, inputType.getDimSize(d)));
      step.push_back(index(b, 1));
    }
    scf::ParallelOp::create(b, loc, lower, upper, step, body);
  }
  op->erase();
}

} // namespace

int lowerReductions(ModuleOp module) {
  SmallVector<linalg::ReduceOp> reductions;
  module.walk([&](linalg::ReduceOp op) {
    if (op.hasPureBufferSemantics() && op.getInputs().size() == 1 &&
        cast<MemRefType>(op.getInputs()[0].getType()).hasStaticShape())
      reductions.push_back(op);
  });
  for (linalg::ReduceOp op : reductions)
    lowerReduce(op);
  return static_cast<int>(reductions.size());
}

int serializeSmallParallelLoops(ModuleOp module, int64_t minimumWork) {
  SmallVector<std::pair<scf::ParallelOp, int64_t>> rewrites;
  module.walk([&](scf::ParallelOp op) {
    if (op.getNumReductions() != 0)
      return;
    if (op->getParentOfType<scf::ParallelOp>() || work(op) < minimumWork) {
      rewrites.push_back({op, -1});
      return;
    }
    // Threads over the first dimension with more than one iteration.
    int64_t parallel = -1;
    for (size_t d = 0; d < op.getNumLoops() && parallel < 0; ++d)
      if (tripCount(op.getLowerBound()[d], op.getUpperBound()[d], op.getStep()[d]).value_or(2) > 1)
        parallel = static_cast<int64_t>(d);
    if (op.getNumLoops() > 1 || parallel < 0)
      rewrites.push_back({op, parallel});
  });
  // The walk is post-order: inner loops are rewritten before the loops that
  // contain them, whose bodies (already rewritten) are then cloned.
  int serialized = 0;
  for (auto [op, parallel] : rewrites) {
    rewriteNest(op, parallel);
    serialized += parallel < 0;
  }
  return serialized;
}

} // namespace tinymlir::detail
