// Host <-> device data movement in the host function, after kernel outlining.
//
// The function's memref arguments are host memory (inputs..., captured
// constants..., outputs...; the function's tinymlir.results attribute counts
// the outputs, one without it has one). At entry each input becomes a device
// buffer through tinymlirGpuInput (resident weights come from the device
// cache, everything else is uploaded), each output a device buffer from
// tinymlirGpuOutput; every use of the argument is replaced by the device
// memref. Before returning, the results are copied back (tinymlirGpuCopyOut) and the call's buffers
// are freed (tinymlirGpuCallEnd). Temporaries become gpu.alloc / gpu.dealloc; constant globals read
// by kernels are uploaded like inputs.
//
// The runtime returns a device address (int64). The device memref is built
// from it as an LLVM memref descriptor {allocated, aligned, offset, sizes,
// strides} and an unrealized_conversion_cast to the memref type: after the
// lowering to LLVM, the casts meet the lowering's own casts and fold away
// (reconcile-unrealized-casts). Arguments must be static, contiguous memrefs
// (the runtime passes contiguous arrays). Scalar loads the host function does
// itself (memref.load of an argument outside kernels, e.g. a start position
// used in index computations) keep reading the host argument.
#include "builder/MLIRGen.h"
#include "passes/Passes.h"
#include "passes/Pipeline.h"
#include "runtime/gpu/RuntimeAbi.h"

#include <tinymlir/array.h>

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/GPU/IR/GPUDialect.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Dialect/Linalg/IR/Linalg.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/IR/Builders.h>
#include <mlir/IR/BuiltinOps.h>
#include <mlir/Pass/Pass.h>

namespace tinymlir::detail {
#define GEN_PASS_DECL_GPUMOVEDATATODEVICEPASS
#define GEN_PASS_DEF_GPUMOVEDATATODEVICEPASS
#define GEN_PASS_DECL_GPUCHECKHOSTPASS
#define GEN_PASS_DEF_GPUCHECKHOSTPASS
#include "passes/Passes.h.inc"
namespace {

using namespace mlir;

int64_t byteSize(MemRefType type) {
  int64_t bits = type.getElementTypeBitWidth();
  return type.getNumElements() * ((bits + 7) / 8);
}

class DeviceMover {
public:
  explicit DeviceMover(func::FuncOp f) : f_(f), b_(f.getContext()), loc_(f.getLoc()) {}

  void run() {
    Block &entry = f_.getBody().front();
    b_.setInsertionPointToStart(&entry);
    unsigned n = f_.getNumArguments();
    unsigned results = 1;
    if (auto count = f_->getAttrOfType<IntegerAttr>(kResultsAttr))
      results = static_cast<unsigned>(count.getInt());
    SmallVector<std::pair<Value, Value>> outputs; // (host memref, device address)
    for (unsigned i = 0; i < n; ++i) {
      Value host = f_.getArgument(i);
      auto type = dyn_cast<MemRefType>(host.getType());
      if (!type)
        continue;
      if (!type.hasStaticShape() || !type.getLayout().isIdentity())
        throw Error("[gpu] function argument " + std::to_string(i) +
                    " is not a static contiguous memref");
      bool isOutput = i + results >= n;
      Value bytes = i64(byteSize(type));
      Value address =
          isOutput ? call(kGpuOutputFn, {bytes}) : call(kGpuInputFn, {hostAddress(host), bytes});
      Value device = deviceMemref(address, type);
      // Scalars the host function reads itself (a start position, say) keep
      // reading the host argument; everything else uses the device copy.
      host.replaceUsesWithIf(device, [&](OpOperand &use) {
        return !created_.contains(use.getOwner()) && !isa<memref::LoadOp>(use.getOwner());
      });
      if (isOutput)
        outputs.emplace_back(host, address);
    }
    uploadGlobals();
    allocationsToDevice();
    f_.walk([&](func::ReturnOp ret) {
      b_.setInsertionPoint(ret);
      for (auto [host, address] : outputs) {
        auto type = cast<MemRefType>(host.getType());
        call(kGpuCopyOutFn, {hostAddress(host), address, i64(byteSize(type))});
      }
      call(kGpuCallEndFn, {});
    });
  }

private:
  Value i64(int64_t v) { return track(arith::ConstantIntOp::create(b_, loc_, b_.getI64Type(), v)); }
  Value track(Operation *op) {
    created_.insert(op);
    return op->getNumResults() ? op->getResult(0) : Value();
  }

  /// The address of element 0 as i64 (aligned pointer + offset * element size).
  Value hostAddress(Value memref) {
    auto type = cast<MemRefType>(memref.getType());
    Value base = track(memref::ExtractAlignedPointerAsIndexOp::create(b_, loc_, memref));
    auto meta = memref::ExtractStridedMetadataOp::create(b_, loc_, memref);
    track(meta);
    Value bytes = track(arith::MulIOp::create(
        b_, loc_, meta.getOffset(),
        track(arith::ConstantIndexOp::create(b_, loc_, type.getElementTypeBitWidth() / 8))));
    Value address = track(arith::AddIOp::create(b_, loc_, base, bytes));
    return track(arith::IndexCastOp::create(b_, loc_, b_.getI64Type(), address));
  }

  Value call(const char *name, ArrayRef<Value> args) {
    func::FuncOp callee = declare(name, args.size());
    return track(func::CallOp::create(b_, loc_, callee, args));
  }

  func::FuncOp declare(const char *name, size_t arity) {
    auto module = f_->getParentOfType<ModuleOp>();
    if (auto f = module.lookupSymbol<func::FuncOp>(name))
      return f;
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(module.getBody());
    Type i64 = b_.getI64Type();
    bool returnsAddress = std::string(name) == kGpuInputFn || std::string(name) == kGpuOutputFn;
    auto type = b_.getFunctionType(SmallVector<Type>(arity, i64),
                                   returnsAddress ? TypeRange{i64} : TypeRange{});
    auto f = func::FuncOp::create(b_, loc_, name, type);
    f.setPrivate();
    return f;
  }

  /// A memref of `type` (contiguous, offset 0) over device memory at `address`.
  Value deviceMemref(Value address, MemRefType type) {
    MLIRContext *ctx = b_.getContext();
    Type i64 = b_.getI64Type(), ptr = LLVM::LLVMPointerType::get(ctx);
    int64_t rank = type.getRank();
    SmallVector<Type> fields{ptr, ptr, i64};
    if (rank > 0) {
      fields.push_back(LLVM::LLVMArrayType::get(i64, rank));
      fields.push_back(LLVM::LLVMArrayType::get(i64, rank));
    }
    auto descriptorType = LLVM::LLVMStructType::getLiteral(ctx, fields);
    Value p = track(LLVM::IntToPtrOp::create(b_, loc_, ptr, address));
    Value d = track(LLVM::PoisonOp::create(b_, loc_, descriptorType));
    auto insert = [&](Value v, ArrayRef<int64_t> position) {
      d = track(LLVM::InsertValueOp::create(b_, loc_, d, v, position));
    };
    auto constant = [&](int64_t v) {
      return track(LLVM::ConstantOp::create(b_, loc_, i64, b_.getI64IntegerAttr(v)));
    };
    insert(p, {0});
    insert(p, {1});
    insert(constant(0), {2});
    SmallVector<int64_t> strides;
    int64_t offset;
    (void)type.getStridesAndOffset(strides, offset);
    for (int64_t k = 0; k < rank; ++k) {
      insert(constant(type.getDimSize(k)), {3, k});
      insert(constant(strides[k]), {4, k});
    }
    auto cast = UnrealizedConversionCastOp::create(b_, loc_, TypeRange{type}, ValueRange{d});
    track(cast);
    return cast.getResult(0);
  }

  /// Constant globals read by kernels: uploaded per call like inputs (they are
  /// small; shape operands of reshapes were removed with the reshapes).
  void uploadGlobals() {
    SmallVector<memref::GetGlobalOp> globals;
    f_.walk([&](memref::GetGlobalOp g) { globals.push_back(g); });
    for (memref::GetGlobalOp g : globals) {
      if (g.getResult().use_empty()) {
        g->erase();
        continue;
      }
      auto type = cast<MemRefType>(g.getType());
      if (!type.hasStaticShape() || !type.getLayout().isIdentity())
        throw Error("[gpu] a global that is not a static contiguous memref is read by a kernel");
      b_.setInsertionPointAfter(g);
      Value address = call(kGpuInputFn, {hostAddress(g.getResult()), i64(byteSize(type))});
      Value device = deviceMemref(address, type);
      g.getResult().replaceUsesWithIf(
          device, [&](OpOperand &use) { return !created_.contains(use.getOwner()); });
    }
  }

  void allocationsToDevice() {
    SmallVector<Operation *> allocs, deallocs;
    f_.walk([&](Operation *op) {
      if (op->getParentOfType<gpu::LaunchOp>())
        return;
      if (isa<memref::AllocOp, memref::AllocaOp>(op))
        allocs.push_back(op);
      else if (isa<memref::DeallocOp>(op))
        deallocs.push_back(op);
    });
    for (Operation *op : allocs) {
      auto type = cast<MemRefType>(op->getResult(0).getType());
      if (!type.hasStaticShape())
        throw Error("[gpu] dynamic allocations are not supported");
      b_.setInsertionPoint(op);
      auto alloc = gpu::AllocOp::create(b_, op->getLoc(), type, /*asyncToken=*/Type(), ValueRange{},
                                        ValueRange{}, ValueRange{});
      op->getResult(0).replaceAllUsesWith(alloc.getMemref());
      bool stack = isa<memref::AllocaOp>(op);
      op->erase();
      if (stack) // an alloca has no dealloc: free before each return
        f_.walk([&](func::ReturnOp ret) {
          b_.setInsertionPoint(ret);
          gpu::DeallocOp::create(b_, ret.getLoc(), Type(), ValueRange{}, alloc.getMemref());
        });
    }
    for (Operation *op : deallocs) {
      b_.setInsertionPoint(op);
      gpu::DeallocOp::create(b_, op->getLoc(), Type(), ValueRange{}, op->getOperand(0));
      op->erase();
    }
  }

  func::FuncOp f_;
  OpBuilder b_;
  Location loc_;
  llvm::SmallPtrSet<Operation *, 32> created_;
};

bool isHostFunction(func::FuncOp f) {
  return !f.isDeclaration() && !f->getParentOfType<gpu::GPUModuleOp>();
}

/// tinymlir-gpu-move-data-to-device: in every host function, arguments ->
/// device buffers through the runtime, memref.alloc -> gpu.alloc, copy-out of
/// the result.
struct GpuMoveDataToDevicePass : impl::GpuMoveDataToDevicePassBase<GpuMoveDataToDevicePass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<func::FuncOp> functions;
    for (auto f : getOperation().getOps<func::FuncOp>())
      if (isHostFunction(f))
        functions.push_back(f);
    if (failed(reportErrors(getOperation(), [&] {
          for (func::FuncOp f : functions)
            DeviceMover(f).run();
        })))
      signalPassFailure();
  }
};

/// tinymlir-gpu-check-host: fails if a host function still holds loops,
/// linalg ops, host allocations or direct loads/stores: all data work must be
/// in kernels, all data in device memory.
struct GpuCheckHostPass : impl::GpuCheckHostPassBase<GpuCheckHostPass> {
  using Base::Base;
  void runOnOperation() override {
    for (auto f : getOperation().getOps<func::FuncOp>()) {
      if (!isHostFunction(f))
        continue;
      WalkResult result = f.walk([&](Operation *op) {
        if (op->getParentOfType<gpu::LaunchOp>())
          return WalkResult::advance();
        StringRef dialect = op->getDialect() ? op->getDialect()->getNamespace() : "";
        // A load on the host is fine from a function argument: host memory.
        auto load = dyn_cast<memref::LoadOp>(op);
        bool hostLoad = load && isa<BlockArgument>(load.getMemRef()) &&
                        cast<BlockArgument>(load.getMemRef()).getOwner()->getParentOp() == f;
        bool bad = dialect == "scf" || dialect == "linalg" || dialect == "affine" ||
                   isa<memref::AllocOp, memref::AllocaOp, memref::StoreOp, memref::CopyOp>(op) ||
                   (load && !hostLoad);
        if (!bad)
          return WalkResult::advance();
        op->emitError() << "'" << op->getName()
                        << "' is left in the host function (every loop and every buffer must "
                           "be on the GPU)";
        return WalkResult::interrupt();
      });
      if (result.wasInterrupted())
        return signalPassFailure();
    }
  }
};

} // namespace
} // namespace tinymlir::detail
