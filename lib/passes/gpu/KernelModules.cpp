// The last steps of the GPU lowering that concern kernel modules:
// tinymlir-gpu-merge-kernel-modules (every outlined kernel in one gpu.module)
// and tinymlir-gpu-pack-ptx-bundle (the chips' PTX in one object).
#include "passes/Passes.h"
#include "passes/Pipeline.h"
#include "runtime/gpu/RuntimeAbi.h"

#include <tinymlir/array.h>

#include <mlir/Dialect/GPU/IR/GPUDialect.h>
#include <mlir/Dialect/LLVMIR/NVVMDialect.h>
#include <mlir/IR/Builders.h>
#include <mlir/Pass/Pass.h>

namespace tinymlir::detail {
#define GEN_PASS_DECL_GPUMERGEKERNELMODULESPASS
#define GEN_PASS_DEF_GPUMERGEKERNELMODULESPASS
#define GEN_PASS_DECL_GPUPACKPTXBUNDLEPASS
#define GEN_PASS_DEF_GPUPACKPTXBUNDLEPASS
#include "passes/Passes.h.inc"
namespace {

using namespace mlir;

/// tinymlir-gpu-merge-kernel-modules: every outlined kernel in one gpu.module
/// @kernels (one PTX module per compiled function); launches renamed.
struct GpuMergeKernelModulesPass : impl::GpuMergeKernelModulesPassBase<GpuMergeKernelModulesPass> {
  using Base::Base;
  void runOnOperation() override;
};

void GpuMergeKernelModulesPass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<gpu::GPUModuleOp> modules(module.getOps<gpu::GPUModuleOp>());
  if (modules.empty())
    return;
  std::string mergedName = "kernels";
  for (int i = 0; module.lookupSymbol(mergedName); ++i)
    mergedName = "kernels_" + std::to_string(i);
  OpBuilder b(modules.front());
  auto merged = gpu::GPUModuleOp::create(b, modules.front().getLoc(), mergedName);
  llvm::DenseMap<Attribute, SymbolRefAttr> renamed;
  for (gpu::GPUModuleOp m : modules) {
    SmallVector<gpu::GPUFuncOp> functions(m.getOps<gpu::GPUFuncOp>());
    for (gpu::GPUFuncOp f : functions) {
      std::string name =
          functions.size() == 1 ? m.getName().str() : m.getName().str() + "_" + f.getName().str();
      auto old = SymbolRefAttr::get(m.getNameAttr(), {FlatSymbolRefAttr::get(f.getNameAttr())});
      f.setName(name);
      f->moveBefore(merged.getBody(), merged.getBody()->end());
      renamed[old] = SymbolRefAttr::get(merged.getNameAttr(),
                                        {FlatSymbolRefAttr::get(module.getContext(), name)});
    }
  }
  WalkResult result = module.walk([&](gpu::LaunchFuncOp launch) {
    auto it = renamed.find(launch.getKernel());
    if (it == renamed.end()) {
      launch.emitError("a kernel launch refers to an unknown kernel");
      return WalkResult::interrupt();
    }
    launch.setKernelAttr(it->second);
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return signalPassFailure();
  for (gpu::GPUModuleOp m : modules)
    m->erase();
}

/// tinymlir-gpu-pack-ptx-bundle: each gpu.binary's per-chip PTX objects
/// become one object holding the bundle of RuntimeAbi.h, from which the
/// runtime loads the newest chip the device supports. Fails if the PTX calls
/// libdevice (__nv_*) and no libdevice was linked.
struct GpuPackPtxBundlePass : impl::GpuPackPtxBundlePassBase<GpuPackPtxBundlePass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(reportErrors(module, [&] { pack(module); })))
      signalPassFailure();
  }
  void pack(ModuleOp module) {
    for (auto binary : module.getOps<gpu::BinaryOp>()) {
      ArrayAttr objects = binary.getObjectsAttr();
      if (objects.empty())
        continue;
      std::string bundle = kPtxBundleMagic;
      bundle += "\n";
      for (Attribute a : objects) {
        auto object = cast<gpu::ObjectAttr>(a);
        auto target = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget());
        if (!target || object.getFormat() != gpu::CompilationTarget::Assembly)
          throw Error("[gpu] expected NVVM PTX objects in the kernel binary");
        std::string ptx = object.getObject().str();
        if (std::string(libdevice).empty() && ptx.find("__nv_") != std::string::npos)
          throw Error("[gpu] the kernels call libdevice math functions but libdevice.10.bc was "
                      "not found: set CUDA_HOME to the CUDA toolkit");
        bundle += std::string(kPtxBundleTarget) + " " + target.getChip().str() + " " +
                  std::to_string(ptx.size()) + "\n" + ptx;
      }
      auto first = cast<gpu::ObjectAttr>(objects[0]);
      MLIRContext *ctx = module.getContext();
      auto packed = gpu::ObjectAttr::get(ctx, first.getTarget(), gpu::CompilationTarget::Assembly,
                                         StringAttr::get(ctx, bundle), first.getProperties(),
                                         first.getKernels());
      binary.setObjectsAttr(ArrayAttr::get(ctx, {packed}));
    }
  }
};

} // namespace
} // namespace tinymlir::detail
