// GPU emulation on the host CPU (JitOptions::gpuEmulate): runs the kernels of
// the `gpu` stage, as they are, where there is no GPU (continuous integration).
//
// Every gpu.launch_func becomes a loop over the grid's blocks. In a kernel with
// barriers each block is an OpenMP parallel region with one OpenMP thread per
// GPU thread (gpu.barrier is omp.barrier, workgroup memory a buffer shared by
// the team); without barriers the block's threads run one after the other.
// Each runs a copy of the kernel body in which gpu.thread_id / block_id /
// block_dim / grid_dim are the emulated values. "Device" buffers are host allocations and
// the data movement functions of RuntimeAbi.h copy, as on a GPU, so that
// host/device mix-ups show. The module then takes the CPU lowering pipeline.
// What this checks: the matmul kernels, the loop tiling and mapping, the
// launches, the data movement. What it cannot: the NVVM back end and the CUDA
// runtime (the PTX is still checked by ptxas).
#include "passes/Passes.h"
#include "passes/Pipeline.h"
#include "runtime/gpu/RuntimeAbi.h"

#include <tinymlir/array.h>

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/GPU/IR/GPUDialect.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/Dialect/OpenMP/OpenMPDialect.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/IR/Builders.h>
#include <mlir/IR/IRMapping.h>
#include <mlir/Pass/Pass.h>

#include <vector>

namespace tinymlir::detail {
#define GEN_PASS_DECL_GPUEMULATEONHOSTPASS
#define GEN_PASS_DEF_GPUEMULATEONHOSTPASS
#include "passes/Passes.h.inc"
namespace {

using namespace mlir;

func::FuncOp declareThreadFn(ModuleOp module) {
  if (auto f = module.lookupSymbol<func::FuncOp>(kEmuThreadFn))
    return f;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto f = func::FuncOp::create(b, module.getLoc(), kEmuThreadFn,
                                b.getFunctionType({b.getI64Type()}, {b.getI64Type()}));
  f.setPrivate();
  return f;
}

Value pick(gpu::Dimension d, Value x, Value y, Value z) {
  return d == gpu::Dimension::x ? x : d == gpu::Dimension::y ? y : z;
}

void emulateLaunch(ModuleOp module, gpu::LaunchFuncOp launch) {
  auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(launch, launch.getKernel());
  if (!kernel || !kernel.getBody().hasOneBlock())
    throw Error("[gpu] emulation: cannot find a single-block kernel for a launch");
  Location loc = launch.getLoc();
  OpBuilder b(launch);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  Value threads = arith::MulIOp::create(
      b, loc, arith::MulIOp::create(b, loc, block.x, block.y).getResult(), block.z);
  func::FuncOp threadFn = declareThreadFn(module);
  bool barriers = false;
  kernel.walk([&](gpu::BarrierOp) { barriers = true; });

  auto forEach = [&](OpBuilder &ob, Value upper, auto &&body) {
    scf::ForOp::create(ob, loc, zero, upper, one, ValueRange{},
                       [&](OpBuilder &ib, Location, Value iv, ValueRange) {
                         body(ib, iv);
                         scf::YieldOp::create(ib, loc);
                       });
  };
  forEach(b, grid.z, [&](OpBuilder &bz, Value blockZ) {
    forEach(bz, grid.y, [&](OpBuilder &by, Value blockY) {
      forEach(by, grid.x, [&](OpBuilder &bb, Value blockX) {
        // Workgroup memory: one buffer per block, shared by its threads.
        SmallVector<Value> shared;
        for (BlockArgument a : kernel.getWorkgroupAttributions()) {
          auto t = cast<MemRefType>(a.getType());
          shared.push_back(
              memref::AllocOp::create(bb, loc, MemRefType::get(t.getShape(), t.getElementType())));
        }
        // Threads that meet at barriers run as an OpenMP team; the others one
        // after the other (much cheaper on a CPU).
        OpBuilder tb(bb.getContext());
        Region *threadRegion = nullptr;
        Value tid;
        if (barriers) {
          omp::ParallelOperands clauses;
          clauses.numThreads = arith::IndexCastOp::create(bb, loc, bb.getI32Type(), threads);
          auto team = omp::ParallelOp::create(bb, loc, clauses);
          threadRegion = &team.getRegion();
          tb.setInsertionPointToStart(tb.createBlock(threadRegion));
          Value expected = arith::IndexCastOp::create(tb, loc, tb.getI64Type(), threads);
          Value id = func::CallOp::create(tb, loc, threadFn, ValueRange{expected}).getResult(0);
          tid = arith::IndexCastOp::create(tb, loc, tb.getIndexType(), id);
        } else {
          auto loop = scf::ForOp::create(bb, loc, zero, threads, one);
          threadRegion = &loop.getRegion();
          tid = loop.getInductionVar();
          tb.setInsertionPoint(loop.getBody()->getTerminator());
        }
        Value tx = arith::RemUIOp::create(tb, loc, tid, block.x);
        Value rest = arith::DivUIOp::create(tb, loc, tid, block.x);
        Value ty = arith::RemUIOp::create(tb, loc, rest, block.y);
        Value tz = arith::DivUIOp::create(tb, loc, rest, block.y);

        IRMapping map;
        for (auto [arg, operand] : llvm::zip(kernel.getArguments(), launch.getKernelOperands()))
          map.map(arg, operand);
        for (auto [arg, buffer] : llvm::zip(kernel.getWorkgroupAttributions(), shared))
          map.map(arg, buffer);
        for (Operation &op : kernel.getBody().front().without_terminator())
          tb.clone(op, map);
        if (barriers)
          omp::TerminatorOp::create(tb, loc);

        SmallVector<Operation *> replaced;
        threadRegion->walk([&](Operation *op) {
          Value v;
          if (auto o = dyn_cast<gpu::ThreadIdOp>(op))
            v = pick(o.getDimension(), tx, ty, tz);
          else if (auto o = dyn_cast<gpu::BlockIdOp>(op))
            v = pick(o.getDimension(), blockX, blockY, blockZ);
          else if (auto o = dyn_cast<gpu::BlockDimOp>(op))
            v = pick(o.getDimension(), block.x, block.y, block.z);
          else if (auto o = dyn_cast<gpu::GridDimOp>(op))
            v = pick(o.getDimension(), grid.x, grid.y, grid.z);
          else if (isa<gpu::BarrierOp>(op)) {
            OpBuilder ob(op);
            omp::BarrierOp::create(ob, op->getLoc());
          } else if (op->getDialect() && op->getDialect()->getNamespace() == "gpu")
            throw Error("[gpu] emulation: unsupported op " + op->getName().getStringRef().str());
          else
            return;
          if (v)
            op->getResult(0).replaceAllUsesWith(v);
          replaced.push_back(op);
        });
        for (Operation *op : replaced)
          op->erase();
        for (Value s : shared)
          memref::DeallocOp::create(bb, loc, s);
      });
    });
  });
  launch->erase();
}

/// tinymlir-gpu-emulate-on-host: every launch becomes host code (blocks in
/// turn; the threads of a block with barriers as an OpenMP team), device
/// allocations host ones. The CPU's lowering pipeline follows.
struct GpuEmulateOnHostPass : impl::GpuEmulateOnHostPassBase<GpuEmulateOnHostPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(reportErrors(module, [&] { emulateKernelsOnHost(module); })))
      signalPassFailure();
  }
  static void emulateKernelsOnHost(ModuleOp module) {
    SmallVector<gpu::LaunchFuncOp> launches;
    module.walk([&](gpu::LaunchFuncOp l) { launches.push_back(l); });
    for (gpu::LaunchFuncOp l : launches)
      emulateLaunch(module, l);
    for (auto m : llvm::make_early_inc_range(module.getOps<gpu::GPUModuleOp>()))
      m->erase();
    module->removeAttr("gpu.container_module");
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<gpu::AllocOp, gpu::DeallocOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      OpBuilder b(op);
      if (auto alloc = dyn_cast<gpu::AllocOp>(op)) {
        auto a = memref::AllocOp::create(b, op->getLoc(), alloc.getMemref().getType());
        alloc.getMemref().replaceAllUsesWith(a);
      } else {
        memref::DeallocOp::create(b, op->getLoc(), cast<gpu::DeallocOp>(op).getMemref());
      }
      op->erase();
    }
  }
};

} // namespace

} // namespace tinymlir::detail
