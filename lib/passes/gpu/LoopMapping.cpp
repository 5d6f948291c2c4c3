// Loops for the GPU: linalg ops shaped so that convert-linalg-to-parallel-loops
// yields one outermost scf.parallel per op, then each such loop tiled and
// mapped onto blocks and threads.
//
// Mapping: the innermost (last, contiguous) dimension goes to x so that a
// warp touches consecutive elements; the one before to y, the one before that
// to z; further outer dimensions run sequentially inside each thread. Tile
// sizes (threads per block, 256 in all) follow the static trip counts from
// the innermost dimension outwards. Tiling uses no min/max bounds: the inner
// loop always has the tile's trip count and its body is guarded by scf.if,
// which is what makes ragged shapes launch at all (with min/max bounds the
// thread count is not a constant and convert-parallel-loops-to-gpu gives up).
#include "passes/Passes.h"
#include "passes/Pipeline.h"

#include <tinymlir/array.h>

#include <mlir/Dialect/Affine/IR/AffineOps.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/GPU/IR/GPUDialect.h>
#include <mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h>
#include <mlir/Dialect/Linalg/IR/Linalg.h>
#include <mlir/Dialect/Linalg/Transforms/Transforms.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/Dialect/SCF/Transforms/Transforms.h>
#include <mlir/IR/Builders.h>
#include <mlir/IR/IRMapping.h>
#include <mlir/IR/PatternMatch.h>
#include <mlir/Pass/Pass.h>

#include <functional>

namespace tinymlir::detail {
#define GEN_PASS_DECL_GPUPREPARELOOPSPASS
#define GEN_PASS_DEF_GPUPREPARELOOPSPASS
#define GEN_PASS_DECL_GPUMAPPARALLELLOOPSPASS
#define GEN_PASS_DEF_GPUMAPPARALLELLOOPSPASS
#include "passes/Passes.h.inc"
namespace {

using namespace mlir;

constexpr int64_t kThreadsPerBlock = 256;
constexpr int64_t kMaxGridYZ = 65535;
constexpr int64_t kMaxBlockZ = 64;

/// Ops directly in a host function (not inside a kernel already).
template <class OpT> SmallVector<OpT> hostOps(ModuleOp module) {
  SmallVector<OpT> ops;
  module.walk([&](OpT op) {
    if (!op->template getParentOfType<gpu::LaunchOp>() &&
        !op->template getParentOfType<gpu::GPUModuleOp>())
      ops.push_back(op);
  });
  return ops;
}

/// memref.copy -> linalg.copy (a loop like any other, so it runs on the device).
void copiesToLinalg(ModuleOp module) {
  for (memref::CopyOp copy : hostOps<memref::CopyOp>(module)) {
    OpBuilder b(copy);
    linalg::CopyOp::create(b, copy.getLoc(), ValueRange{copy.getSource()},
                           ValueRange{copy.getTarget()});
    copy->erase();
  }
}

/// A memref.reshape to a static shape of an identity-layout source is a view:
/// memref.reinterpret_cast, which reads no host memory (the shape operand is a
/// host global), so the host code between launches stays free of memory reads.
void reshapesToViews(ModuleOp module) {
  for (memref::ReshapeOp reshape : hostOps<memref::ReshapeOp>(module)) {
    auto result = cast<MemRefType>(reshape.getType());
    auto source = cast<MemRefType>(reshape.getSource().getType());
    if (!result.hasStaticShape() || !result.getLayout().isIdentity() ||
        !source.getLayout().isIdentity())
      continue;
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(result.getStridesAndOffset(strides, offset)))
      continue;
    OpBuilder b(reshape);
    auto view = memref::ReinterpretCastOp::create(b, reshape.getLoc(), result, reshape.getSource(),
                                                  int64_t(0), result.getShape(), strides);
    Value shape = reshape.getShape();
    reshape.getResult().replaceAllUsesWith(view.getResult());
    reshape->erase();
    if (shape.use_empty())
      if (Operation *def = shape.getDefiningOp(); def && isa<memref::GetGlobalOp>(def))
        def->erase();
  }
}

/// Named ops -> linalg.generic with the parallel dimensions first, so that the
/// outermost loop nest is one scf.parallel (reductions become inner scf.for
/// with register accumulators: reductionToLoops, shared with the CPU). Ops
/// without a parallel dimension (rank 0, full reductions) are wrapped in a
/// one-trip scf.parallel: they run as a one-thread kernel instead of on the host.
void shapeLinalgOps(ModuleOp module) {
  IRRewriter rewriter(module.getContext());
  for (linalg::LinalgOp op : hostOps<linalg::LinalgOp>(module)) {
    if (!op.hasPureBufferSemantics())
      continue;
    linalg::GenericOp generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic) {
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::GenericOp> g = linalg::generalizeNamedOp(rewriter, op);
      if (failed(g))
        throw Error(std::string("[gpu] cannot generalize ") + op->getName().getStringRef().str() +
                    " for the GPU");
      generic = *g;
    }
    SmallVector<unsigned> order;
    auto iterators = generic.getIteratorTypesArray();
    for (unsigned d = 0; d < iterators.size(); ++d)
      if (iterators[d] == utils::IteratorType::parallel)
        order.push_back(d);
    size_t parallel = order.size();
    for (unsigned d = 0; d < iterators.size(); ++d)
      if (iterators[d] != utils::IteratorType::parallel)
        order.push_back(d);
    bool identity = true;
    for (unsigned d = 0; d < order.size(); ++d)
      identity = identity && order[d] == d;
    if (!identity) {
      rewriter.setInsertionPoint(generic);
      FailureOr<linalg::GenericOp> g = linalg::interchangeGenericOp(rewriter, generic, order);
      if (failed(g))
        throw Error("[gpu] cannot move the parallel loops of a linalg.generic outwards");
      generic = *g;
    }
    if (parallel == 0) {
      OpBuilder b(generic);
      Location loc = generic.getLoc();
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      auto wrapper =
          scf::ParallelOp::create(b, loc, ValueRange{zero}, ValueRange{one}, ValueRange{one});
      generic->moveBefore(wrapper.getBody()->getTerminator());
    }
    if (parallel < iterators.size())
      reductionToLoops(generic);
  }
}

int64_t pow2Ceil(int64_t n) {
  int64_t p = 1;
  while (p < n)
    p *= 2;
  return p;
}

std::optional<int64_t> tripCount(scf::ParallelOp loop, unsigned d) {
  return constantTripCount(loop.getLowerBound()[d], loop.getUpperBound()[d], loop.getStep()[d]);
}

/// Which hardware dimension loop dimension d of a rank-r loop maps to: the
/// last to x, then y, then z; -1 for sequential.
int hardwareDim(unsigned d, unsigned r) {
  unsigned fromInner = r - 1 - d;
  return fromInner < 3 ? static_cast<int>(fromInner) : -1;
}

SmallVector<int64_t> tileSizes(scf::ParallelOp loop) {
  unsigned r = loop.getNumLoops();
  SmallVector<int64_t> tiles(r, 1);
  int64_t budget = kThreadsPerBlock;
  for (int d = static_cast<int>(r) - 1; d >= 0; --d) {
    int hw = hardwareDim(d, r);
    if (hw < 0)
      break;
    int64_t n = tripCount(loop, d).value_or(16);
    int64_t t = std::min(pow2Ceil(std::max<int64_t>(n, 1)), budget);
    if (hw == 2)
      t = std::min(t, kMaxBlockZ);
    tiles[d] = t;
    budget /= t;
  }
  return tiles;
}

void setMapping(scf::ParallelOp loop, bool threads, ArrayRef<int64_t> gridCounts = {}) {
  MLIRContext *ctx = loop.getContext();
  unsigned r = loop.getNumLoops();
  AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
  SmallVector<gpu::ParallelLoopDimMappingAttr> mapping;
  for (unsigned d = 0; d < r; ++d) {
    int hw = hardwareDim(d, r);
    // Grid y and z have at most 65535 blocks: beyond that, loop in the kernel.
    if (!threads && hw > 0 && !gridCounts.empty() && gridCounts[d] > kMaxGridYZ)
      hw = -1;
    gpu::Processor p = gpu::Processor::Sequential;
    if (hw >= 0)
      p = static_cast<gpu::Processor>((threads ? 3 : 0) + hw);
    mapping.push_back(gpu::ParallelLoopDimMappingAttr::get(ctx, p, id, id));
  }
  if (failed(gpu::setMappingAttr(loop, mapping)))
    throw Error("[gpu] cannot map a parallel loop onto the GPU");
}

void setSequential(scf::ParallelOp loop) {
  MLIRContext *ctx = loop.getContext();
  AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
  SmallVector<gpu::ParallelLoopDimMappingAttr> mapping(
      loop.getNumLoops(),
      gpu::ParallelLoopDimMappingAttr::get(ctx, gpu::Processor::Sequential, id, id));
  if (failed(gpu::setMappingAttr(loop, mapping)))
    throw Error("[gpu] cannot map a parallel loop onto the GPU");
}

/// tinymlir-gpu-prepare-loops: linalg ops shaped so that
/// convert-linalg-to-parallel-loops yields one outermost scf.parallel per op
/// (copies and reshapes as linalg.copy and views, parallel dimensions first,
/// nests without one wrapped in a one-trip scf.parallel).
struct GpuPrepareLoopsPass : impl::GpuPrepareLoopsPassBase<GpuPrepareLoopsPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(reportErrors(module, [&] {
          copiesToLinalg(module);
          reshapesToViews(module);
          shapeLinalgOps(module);
        })))
      signalPassFailure();
  }
};

/// tinymlir-gpu-map-parallel-loops: every outermost host scf.parallel tiled
/// (no min/max bounds) and mapped onto blocks and threads.
struct GpuMapParallelLoopsPass : impl::GpuMapParallelLoopsPassBase<GpuMapParallelLoopsPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> outermost;
    for (scf::ParallelOp loop : hostOps<scf::ParallelOp>(getOperation()))
      if (!loop->getParentOfType<scf::ParallelOp>())
        outermost.push_back(loop);
    if (failed(reportErrors(getOperation(), [&] {
          for (scf::ParallelOp loop : outermost) {
            SmallVector<int64_t> tiles = tileSizes(loop);
            SmallVector<int64_t> gridCounts;
            for (unsigned d = 0; d < loop.getNumLoops(); ++d) {
              int64_t n = tripCount(loop, d).value_or(0);
              gridCounts.push_back((n + tiles[d] - 1) / tiles[d]);
            }
            auto [outer, inner] = scf::tileParallelLoop(loop, tiles, /*noMinMaxBounds=*/true);
            setMapping(outer, /*threads=*/false, gridCounts);
            setMapping(inner, /*threads=*/true);
            inner.getBody()->walk([&](scf::ParallelOp nested) { setSequential(nested); });
          }
        })))
      signalPassFailure();
  }
};

} // namespace
} // namespace tinymlir::detail
