// An index_put's loop (lib/builder/MLIRGen.cpp) copies row r of the values
// into the target's slot at row r's indices, one row after another. When the
// slot's innermost stride is not 1, as for a key cache (S, H, D, P) written at
// positions P, every element lands on its own cache line: a 256-token
// prompt's keys cost GPT-2 124M 1 ms a layer, single-threaded. Interchanged,
// a parallel loop over the row's elements runs over the rows in order inside:
// consecutive rows write consecutive places, and a later row still overwrites
// an earlier one at the same place, as NumPy's a[idx] = v does.
#include "passes/Passes.h"
#include "passes/Pipeline.h"

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Linalg/IR/Linalg.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/IR/Builders.h>
#include <mlir/IR/IRMapping.h>
#include <mlir/Interfaces/SideEffectInterfaces.h>
#include <mlir/Pass/Pass.h>

namespace tinymlir::detail {
#define GEN_PASS_DECL_INTERCHANGESCATTEREDCOPIESPASS
#define GEN_PASS_DEF_INTERCHANGESCATTEREDCOPIESPASS
#include "passes/Passes.h.inc"
namespace {

using namespace mlir;

std::optional<int64_t> innerStride(Value memref) {
  SmallVector<int64_t> strides;
  int64_t offset;
  auto type = cast<MemRefType>(memref.getType());
  if (type.getRank() == 0 || failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(strides.back()))
    return std::nullopt;
  return strides.back();
}

/// The loop's one linalg.copy, if the loop is a row-by-row scatter that gains
/// from the interchange: besides the copy only pure ops and loads, none of
/// them of the copy's destination; the destination's innermost stride is
/// not 1 and the source's is.
linalg::CopyOp scatteredCopy(scf::ForOp loop) {
  if (loop.getNumRegionIterArgs() != 0)
    return {};
  linalg::CopyOp copy;
  SmallVector<Value> loaded;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (auto c = dyn_cast<linalg::CopyOp>(op)) {
      if (copy)
        return {};
      copy = c;
    } else if (auto load = dyn_cast<memref::LoadOp>(op)) {
      loaded.push_back(load.getMemRef());
    } else if (!isPure(&op)) {
      return {};
    }
  }
  if (!copy || !copy.hasPureBufferSemantics())
    return {};
  Value from = copy.getInputs()[0], to = copy.getOutputs()[0];
  if (!cast<MemRefType>(from.getType()).hasStaticShape() || innerStride(to).value_or(1) == 1 ||
      innerStride(from) != 1)
    return {};
  loaded.push_back(from);
  for (Value v : loaded)
    if (viewRoot(v) == viewRoot(to))
      return {};
  return copy;
}

/// for r { ...; copy(from(r), to(r)) }  ->
/// parallel i { for r { ...; to(r)[i] = from(r)[i] } }
void interchange(scf::ForOp loop, linalg::CopyOp copy) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  auto shape = cast<MemRefType>(copy.getInputs()[0].getType()).getShape();
  SmallVector<Value> lower(shape.size(), arith::ConstantIndexOp::create(b, loc, 0)), upper,
      step(shape.size(), arith::ConstantIndexOp::create(b, loc, 1));
  for (int64_t size : shape)
    upper.push_back(arith::ConstantIndexOp::create(b, loc, size));
  scf::ParallelOp::create(
      b, loc, lower, upper, step, [&](OpBuilder &b, Location loc, ValueRange element) {
        scf::ForOp::create(b, loc, loop.getLowerBound(), loop.getUpperBound(), loop.getStep(),
                           ValueRange{}, [&](OpBuilder &b, Location loc, Value row, ValueRange) {
                             IRMapping mapping;
                             mapping.map(loop.getInductionVar(), row);
                             for (Operation &op : loop.getBody()->without_terminator()) {
                               if (&op != copy.getOperation()) {
                                 b.clone(op, mapping);
                                 continue;
                               }
                               Value value = memref::LoadOp::create(
                                   b, loc, mapping.lookupOrDefault(copy.getInputs()[0]), element);
                               memref::StoreOp::create(
                                   b, loc, value, mapping.lookupOrDefault(copy.getOutputs()[0]),
                                   element);
                             }
                             scf::YieldOp::create(b, loc);
                           });
      });
  loop->erase();
}

/// tinymlir-interchange-scattered-copies: see the top of this file.
struct InterchangeScatteredCopiesPass
    : impl::InterchangeScatteredCopiesPassBase<InterchangeScatteredCopiesPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<std::pair<scf::ForOp, linalg::CopyOp>> scatters;
    getOperation().walk([&](scf::ForOp loop) {
      if (linalg::CopyOp copy = scatteredCopy(loop))
        scatters.push_back({loop, copy});
    });
    for (auto [loop, copy] : scatters)
      interchange(loop, copy);
    interchanged += scatters.size();
  }
};

} // namespace
} // namespace tinymlir::detail
