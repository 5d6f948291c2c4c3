// linalg.matmul / linalg.batch_matmul on memrefs -> a gpu.launch of a
// shared-memory tiled kernel, built op by op.
//
// A block of 16x16 threads computes a (16*TM) x (16*TN) tile of C; thread
// (ty, tx) owns the TM x TN outputs at rows ty + 16*i and columns tx + 16*j
// (so a warp's stores are contiguous). For each K tile of 16:
//   - A[rows, k0:k0+16] and B[k0:k0+16, cols] are staged in workgroup memory
//     (two gpu.launch workgroup attributions), every load bounds-checked with
//     scf.if (zero outside), so ragged M, N and K need no padding;
//   - gpu.barrier; TM*TN multiply-adds per k (unrolled) from workgroup memory
//     into accumulators carried by the scf.for; gpu.barrier.
// Finally each in-bounds output is C += acc (linalg.matmul accumulates into
// its zero-filled output). Operands narrower than C (float32 weights in a
// float64 product) are widened as they are loaded: tiles and sums are in C's
// type. Blocks: (N tiles, M tiles, batch). TM and TN (1, 2
// or 4) shrink until there are enough blocks to fill the device, so small-M
// products (token-by-token generation) keep many blocks.
// Operands are read with memref.load on the original memref values: any
// strided layout works. A transposed operand (a linalg.transpose into a buffer
// read only by the product, as x @ w.T gives) is read through a
// memref.transpose view of its source instead of being copied first, and its
// tile is loaded with the threads along its unit-stride dimension.
#include "passes/Passes.h"
#include "passes/Pipeline.h"

#include <tinymlir/array.h>

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/GPU/IR/GPUDialect.h>
#include <mlir/Dialect/Linalg/IR/Linalg.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/IR/Builders.h>
#include <mlir/Interfaces/SideEffectInterfaces.h>
#include <mlir/Interfaces/ViewLikeInterface.h>
#include <mlir/Pass/Pass.h>

#include <cstdio>
#include <cstdlib>

namespace tinymlir::detail {
#define GEN_PASS_DECL_GPUMATMULKERNELSPASS
#define GEN_PASS_DEF_GPUMATMULKERNELSPASS
#include "passes/Passes.h.inc"
namespace {

using namespace mlir;

constexpr int64_t kThreads = 16;    // threads per block along x and y
constexpr int64_t kTileK = 16;      // K slice staged per iteration
constexpr int64_t kMinBlocks = 264; // about two blocks per SM on an H200 (132 SMs)

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct Shape3 {
  int64_t batch, m, n, k;
};

/// Outputs per thread along rows (tm) and columns (tn); a `forced` "TMxTN"
/// (1, 2 or 4 each: the pass's tile option) overrides the choice (tests, tuning).
std::pair<int64_t, int64_t> chooseTiling(const Shape3 &s, const std::string &forced) {
  if (!forced.empty()) {
    int tm = 0, tn = 0;
    auto ok = [](int v) { return v == 1 || v == 2 || v == 4; };
    if (std::sscanf(forced.c_str(), "%dx%d", &tm, &tn) != 2 || !ok(tm) || !ok(tn))
      throw Error("[gpu] matmul tile '" + forced +
                  "': expected TMxTN with 1, 2 or 4 each, e.g. 4x4");
    return {tm, tn};
  }
  int64_t tm = 4, tn = 4;
  while (tm > 1 && kThreads * tm / 2 >= s.m)
    tm /= 2;
  while (tn > 1 && kThreads * tn / 2 >= s.n)
    tn /= 2;
  auto blocks = [&] { return s.batch * ceilDiv(s.m, kThreads * tm) * ceilDiv(s.n, kThreads * tn); };
  while (blocks() < kMinBlocks && (tm > 1 || tn > 1)) {
    if (tm >= tn && tm > 1)
      tm /= 2;
    else
      tn /= 2;
  }
  return {tm, tn};
}

bool supported(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics())
    return false;
  bool defaultMaps = false;
  if (auto mm = dyn_cast<linalg::MatmulOp>(op.getOperation()))
    defaultMaps = op.getIndexingMapsArray() == mm.getDefaultIndexingMaps(op->getContext());
  else if (auto bmm = dyn_cast<linalg::BatchMatmulOp>(op.getOperation()))
    defaultMaps = op.getIndexingMapsArray() == bmm.getDefaultIndexingMaps(op->getContext());
  if (!defaultMaps)
    return false;
  // Same element types, or float operands no wider than the float result
  // (the mixed-precision products: float64 rows against float32 weights).
  Type element = cast<MemRefType>(op.getDpsInits()[0].getType()).getElementType();
  if (!isa<FloatType, IntegerType>(element))
    return false;
  for (Value v : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || !type.hasStaticShape())
      return false;
    Type t = type.getElementType();
    bool widened = isa<FloatType>(t) && isa<FloatType>(element) &&
                   t.getIntOrFloatBitWidth() < element.getIntOrFloatBitWidth();
    if (t != element && !widened)
      return false;
  }
  // Grid y and z are limited to 65535 blocks.
  auto c = cast<MemRefType>(op.getDpsInits()[0].getType());
  if (c.getRank() == 3 && c.getDimSize(0) > 65535)
    return false;
  return true;
}

/// The value whose memory `v` views (through view-like ops).
Value viewRoot(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

/// Whether `op` may write memory that `root` holds (conservative).
bool mayWrite(Operation *op, Value root) {
  if (isMemoryEffectFree(op) || isa<memref::AllocOp, memref::AllocaOp>(op))
    return false;
  if (auto effects = dyn_cast<MemoryEffectOpInterface>(op);
      effects && !effects.hasEffect<MemoryEffects::Write>() &&
      !op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
    return false; // reads only (memref.reshape reads its shape operand)
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op)) {
    for (Value init : dps.getDpsInits())
      if (viewRoot(init) == root)
        return true;
    return false;
  }
  if (auto copy = dyn_cast<memref::CopyOp>(op))
    return viewRoot(copy.getTarget()) == root;
  if (auto launch = dyn_cast<gpu::LaunchOp>(op)) { // an earlier product's kernel
    bool writes = false;
    launch.getBody().walk(
        [&](memref::StoreOp store) { writes = writes || viewRoot(store.getMemRef()) == root; });
    return writes;
  }
  if (auto dealloc = dyn_cast<memref::DeallocOp>(op))
    return viewRoot(dealloc.getMemref()) == root;
  return true;
}

/// An operand that a linalg.transpose wrote into a buffer used by nothing
/// else: read the transpose's input through a memref.transpose view instead
/// (the kernel loads any strided layout), and drop the transpose and its
/// buffer. Done only when nothing between the two ops may write the input.
Value foldTranspose(linalg::LinalgOp product, Value operand) {
  auto alloc = operand.getDefiningOp<memref::AllocOp>();
  if (!alloc)
    return operand;
  linalg::TransposeOp transpose;
  for (Operation *user : alloc->getUsers()) {
    if (auto t = dyn_cast<linalg::TransposeOp>(user); t && t.getInit() == operand && !transpose)
      transpose = t;
    else if (user != product.getOperation() && !isa<memref::DeallocOp>(user))
      return operand;
  }
  if (!transpose || transpose->getBlock() != product->getBlock() ||
      !transpose->isBeforeInBlock(product))
    return operand;
  Value input = transpose.getInput();
  Value root = viewRoot(input);
  for (Operation *op = transpose->getNextNode(); op != product.getOperation();
       op = op->getNextNode())
    if (mayWrite(op, root))
      return operand;
  OpBuilder b(product);
  auto map = AffineMap::getPermutationMap(transpose.getPermutation(), b.getContext());
  Value view = memref::TransposeOp::create(b, transpose.getLoc(), input, AffineMapAttr::get(map));
  transpose->erase();
  for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
    if (isa<memref::DeallocOp>(user))
      user->erase();
  if (alloc->use_empty())
    alloc->erase();
  return view;
}

/// Whether a tile of `operand` is best loaded with threads along its
/// second-to-last dimension (unit stride there, not in the last one).
bool unitStrideOuter(Value operand) {
  auto type = cast<MemRefType>(operand.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  size_t r = strides.size();
  return strides[r - 1] != 1 && strides[r - 2] == 1;
}

class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, Type element) : b_(b), loc_(loc), element_(element) {}

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b_, loc_, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b_, loc_, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b_, loc_, x, y); }
  Value lessThan(Value x, int64_t bound) {
    return arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::ult, x, index(bound));
  }
  Value both(Value x, Value y) { return arith::AndIOp::create(b_, loc_, x, y); }
  Value zero() {
    if (isa<FloatType>(element_))
      return arith::ConstantOp::create(b_, loc_, b_.getFloatAttr(element_, 0.0));
    return arith::ConstantOp::create(b_, loc_, b_.getIntegerAttr(element_, 0));
  }
  Value multiplyAdd(Value acc, Value x, Value y) {
    if (isa<FloatType>(element_))
      return arith::AddFOp::create(b_, loc_, acc,
                                   arith::MulFOp::create(b_, loc_, x, y).getResult());
    return arith::AddIOp::create(b_, loc_, acc, arith::MulIOp::create(b_, loc_, x, y).getResult());
  }

  /// memref[indices] (widened to the result type) if `inBounds`, else zero
  /// (scf.if: no out-of-bounds access).
  Value guardedLoad(Value inBounds, Value memref, ValueRange indices) {
    Value z = zero();
    auto ifOp = scf::IfOp::create(
        b_, loc_, inBounds,
        [&](OpBuilder &b, Location loc) {
          Value v = memref::LoadOp::create(b, loc, memref, indices);
          if (v.getType() != element_)
            v = arith::ExtFOp::create(b, loc, element_, v);
          scf::YieldOp::create(b, loc, v);
        },
        [&](OpBuilder &b, Location loc) { scf::YieldOp::create(b, loc, z); });
    return ifOp.getResult(0);
  }

private:
  OpBuilder &b_;
  Location loc_;
  Type element_;
};

void buildKernel(linalg::LinalgOp op, const std::string &tile) {
  Value a = foldTranspose(op, op.getDpsInputs()[0]);
  Value bm = foldTranspose(op, op.getDpsInputs()[1]);
  Value c = op.getDpsInits()[0];
  OpBuilder b(op);
  Location loc = op.getLoc();
  // Coalesced loads: threads along the unit-stride dimension of each operand
  // (x along K for a row-major A, along M for a transposed one; x along N for
  // a row-major B, along K for a transposed one). Tiles written across their
  // rows get a padding column against shared-memory bank conflicts.
  bool aByColumns = unitStrideOuter(a), bByRows = unitStrideOuter(bm);
  auto ta = cast<MemRefType>(a.getType()), tb = cast<MemRefType>(bm.getType());
  Type element = cast<MemRefType>(c.getType()).getElementType(); // tiles and sums
  bool batched = ta.getRank() == 3;
  Shape3 s{batched ? ta.getDimSize(0) : 1, ta.getDimSize(ta.getRank() - 2),
           tb.getDimSize(tb.getRank() - 1), ta.getDimSize(ta.getRank() - 1)};
  auto [tm, tn] = chooseTiling(s, tile);
  int64_t tileM = kThreads * tm, tileN = kThreads * tn;

  auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto sharedA = MemRefType::get({tileM, kTileK + (aByColumns ? 1 : 0)}, element,
                                 MemRefLayoutAttrInterface(), workgroup);
  auto sharedB = MemRefType::get({kTileK, tileN + (bByRows ? 1 : 0)}, element,
                                 MemRefLayoutAttrInterface(), workgroup);

  KernelBuilder host(b, loc, element);
  Value gridX = host.index(ceilDiv(s.n, tileN)), gridY = host.index(ceilDiv(s.m, tileM));
  Value gridZ = host.index(s.batch), block = host.index(kThreads), one = host.index(1);
  // Named after the product, e.g. matmul_33x19x70 (M x N x K), for profiles.
  std::string name = (batched ? "batch_matmul_" + std::to_string(s.batch) + "x" : "matmul_") +
                     std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
  auto symbol = FlatSymbolRefAttr::get(b.getContext(), name);
  auto launch = gpu::LaunchOp::create(b, loc, gridX, gridY, gridZ, block, block, one,
                                      /*dynamicSharedMemorySize=*/nullptr,
                                      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{},
                                      TypeRange{sharedA, sharedB}, /*privateAttributions=*/{},
                                      nullptr, nullptr, nullptr, symbol, symbol);

  OpBuilder kb = OpBuilder::atBlockBegin(&launch.getBody().front());
  KernelBuilder k(kb, loc, element);
  Value tileA = launch.getWorkgroupAttributions()[0];
  Value tileB = launch.getWorkgroupAttributions()[1];
  Value tx = launch.getThreadIds().x, ty = launch.getThreadIds().y;
  Value rowBase = k.mul(launch.getBlockIds().y, k.index(tileM));
  Value colBase = k.mul(launch.getBlockIds().x, k.index(tileN));
  Value batch = launch.getBlockIds().z;
  auto at = [&](Value row, Value col) -> SmallVector<Value> {
    if (batched)
      return {batch, row, col};
    return {row, col};
  };

  SmallVector<Value> init(tm * tn, k.zero());
  auto kLoop = scf::ForOp::create(
      kb, loc, k.index(0), k.index(ceilDiv(s.k, kTileK) * kTileK), k.index(kTileK), init,
      [&](OpBuilder &lb, Location, Value k0, ValueRange acc) {
        KernelBuilder l(lb, loc, element);
        // Stage A[rowBase + r, k0 + kk] and B[k0 + kk, colBase + cl]: (r, kk) =
        // (ty + 16 i, tx), or (tx + 16 i, ty) by columns; (kk, cl) = (ty, tx + 16 j),
        // or (tx, ty + 16 j) by rows.
        Value along = aByColumns ? tx : ty, across = aByColumns ? ty : tx;
        Value ka = l.add(k0, across);
        for (int64_t i = 0; i < tm; ++i) {
          Value r = l.add(along, l.index(kThreads * i));
          Value row = l.add(rowBase, r);
          Value v =
              l.guardedLoad(l.both(l.lessThan(row, s.m), l.lessThan(ka, s.k)), a, at(row, ka));
          memref::StoreOp::create(lb, loc, v, tileA, ValueRange{r, across});
        }
        along = bByRows ? ty : tx;
        across = bByRows ? tx : ty;
        Value kbRow = l.add(k0, across);
        for (int64_t j = 0; j < tn; ++j) {
          Value cl = l.add(along, l.index(kThreads * j));
          Value col = l.add(colBase, cl);
          Value v = l.guardedLoad(l.both(l.lessThan(kbRow, s.k), l.lessThan(col, s.n)), bm,
                                  at(kbRow, col));
          memref::StoreOp::create(lb, loc, v, tileB, ValueRange{across, cl});
        }
        gpu::BarrierOp::create(lb, loc);
        SmallVector<Value> sums(acc.begin(), acc.end());
        for (int64_t kk = 0; kk < kTileK; ++kk) {
          Value kkv = l.index(kk);
          SmallVector<Value> av, bv;
          for (int64_t i = 0; i < tm; ++i)
            av.push_back(memref::LoadOp::create(lb, loc, tileA,
                                                ValueRange{l.add(ty, l.index(kThreads * i)), kkv}));
          for (int64_t j = 0; j < tn; ++j)
            bv.push_back(memref::LoadOp::create(lb, loc, tileB,
                                                ValueRange{kkv, l.add(tx, l.index(kThreads * j))}));
          for (int64_t i = 0; i < tm; ++i)
            for (int64_t j = 0; j < tn; ++j)
              sums[i * tn + j] = l.multiplyAdd(sums[i * tn + j], av[i], bv[j]);
        }
        gpu::BarrierOp::create(lb, loc);
        scf::YieldOp::create(lb, loc, sums);
      });

  // C[row, col] += acc for the outputs inside C.
  for (int64_t i = 0; i < tm; ++i)
    for (int64_t j = 0; j < tn; ++j) {
      Value row = k.add(rowBase, k.add(ty, k.index(kThreads * i)));
      Value col = k.add(colBase, k.add(tx, k.index(kThreads * j)));
      Value acc = kLoop.getResult(i * tn + j);
      scf::IfOp::create(kb, loc, k.both(k.lessThan(row, s.m), k.lessThan(col, s.n)),
                        [&](OpBuilder &ib, Location) {
                          Value old = memref::LoadOp::create(ib, loc, c, at(row, col));
                          Value sum = isa<FloatType>(element)
                                          ? Value(arith::AddFOp::create(ib, loc, old, acc))
                                          : Value(arith::AddIOp::create(ib, loc, old, acc));
                          memref::StoreOp::create(ib, loc, sum, c, at(row, col));
                          scf::YieldOp::create(ib, loc);
                        });
    }
  gpu::TerminatorOp::create(kb, loc);
}

/// tinymlir-gpu-matmul-kernels: memref linalg.matmul / linalg.batch_matmul ->
/// a gpu.launch of a shared-memory tiled kernel each.
struct GpuMatmulKernelsPass : impl::GpuMatmulKernelsPassBase<GpuMatmulKernelsPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> products;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op.getOperation()) && supported(op))
        products.push_back(op);
    });
    if (failed(reportErrors(getOperation(), [&] {
          for (linalg::LinalgOp op : products) {
            buildKernel(op, tile);
            op->erase();
          }
        })))
      return signalPassFailure();
    kernels += products.size();
  }
};

} // namespace
} // namespace tinymlir::detail
