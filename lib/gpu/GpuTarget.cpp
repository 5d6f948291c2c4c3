// lowerForGpu: the bufferized module -> host module (LLVM dialect) that
// launches PTX kernels. The C++ steps are passes (GpuPasses.h); this file runs
// their pipeline and the lowering to NVVM and PTX, merges the outlined kernels
// into one GPU module (a pass), and packs the PTX of every target chip into
// one binary.
//
// Targets: TINYMLIR_GPU_CHIPS (comma-separated, default "sm_90,sm_75": the
// H200's Hopper and the older Turing of a T4). The first chip's PTX is the
// `ptx` stage. libdevice (math functions) comes from CUDA_HOME, CUDA_PATH or
// /usr/local/cuda (nvvm/libdevice/libdevice.10.bc).
//
// The kernels are serialized as PTX (format=isa: no CUDA tool at compile
// time); the driver compiles it for the device when the module is loaded. All
// chips' PTX travel in one bundle (RuntimeAbi.h: kPtxBundleMagic) from which
// the runtime picks the newest chip the device supports.
#include "gpu/Emulation.h"
#include "gpu/GpuPasses.h"
#include "gpu/GpuTarget.h"
#include "pipeline/Passes.h"
#include "gpu/RuntimeAbi.h"
#include "pipeline/Pipeline.h"

#include <tinymlir/array.h>

#include <mlir/Dialect/GPU/IR/GPUDialect.h>
#include <mlir/Dialect/LLVMIR/NVVMDialect.h>
#include <mlir/IR/Builders.h>
#include <mlir/Pass/Pass.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <sstream>

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace tinymlir::detail {
namespace {

using namespace mlir;

struct Chip {
  std::string name;     // sm_90
  std::string features; // +ptx80
};

/// The lowest PTX ISA version LLVM accepts for the chip that CUDA 11+ drivers load.
std::string ptxFeatures(const std::string &chip) {
  int sm = std::atoi(chip.c_str() + 3);
  if (sm >= 120)
    return "+ptx87";
  if (sm >= 100)
    return "+ptx86";
  if (sm >= 90)
    return "+ptx80";
  if (sm == 89)
    return "+ptx78";
  if (sm == 87)
    return "+ptx74";
  if (sm == 86)
    return "+ptx71";
  return "+ptx70";
}

std::vector<Chip> targetChips() {
  const char *env = std::getenv("TINYMLIR_GPU_CHIPS");
  std::string list = env && *env ? env : "sm_90,sm_75";
  std::vector<Chip> chips;
  std::stringstream in(list);
  std::string name;
  while (std::getline(in, name, ',')) {
    if (name.empty())
      continue;
    if (name.rfind("sm_", 0) != 0 || name.size() < 5 || !std::isdigit(name[3]))
      throw Error("[gpu] TINYMLIR_GPU_CHIPS: '" + name + "' is not a chip like sm_90");
    chips.push_back({name, ptxFeatures(name)});
  }
  if (chips.empty())
    throw Error("[gpu] TINYMLIR_GPU_CHIPS names no chip");
  return chips;
}

std::string findLibdevice() {
  std::vector<std::string> roots;
  for (const char *var : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"})
    if (const char *v = std::getenv(var); v && *v)
      roots.emplace_back(v);
  roots.emplace_back("/usr/local/cuda");
  roots.emplace_back("/usr/lib/cuda");
  for (const std::string &root : roots) {
    std::string path = root + "/nvvm/libdevice/libdevice.10.bc";
    if (std::filesystem::exists(path))
      return path;
  }
  const char *debian = "/usr/lib/nvidia-cuda-toolkit/libdevice/libdevice.10.bc";
  return std::filesystem::exists(debian) ? debian : "";
}

void initializeNvptx() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

std::string loweringPipeline(const std::vector<Chip> &chips, const std::string &libdevice) {
  std::string p = "builtin.module(func.func(gpu-async-region),"
                  "convert-scf-to-cf,convert-nvvm-to-llvm,convert-func-to-llvm,"
                  "expand-strided-metadata,";
  for (const Chip &c : chips) {
    p += "nvvm-attach-target{chip=" + c.name + " features=" + c.features + " O=3";
    if (!libdevice.empty())
      p += " l=" + libdevice;
    p += "},";
  }
  p += "lower-affine,convert-arith-to-llvm,convert-index-to-llvm,canonicalize,cse,"
       "gpu.module(strip-debuginfo,convert-gpu-to-nvvm,llvm-optimize-for-nvvm-target,"
       "canonicalize,cse,reconcile-unrealized-casts),"
       "gpu-to-llvm,gpu-module-to-binary{format=isa},convert-math-to-llvm,"
       "canonicalize,cse,reconcile-unrealized-casts,tinymlir-kernel-noinline)";
  return p;
}

/// Replaces each binary's per-chip PTX objects with one object holding the
/// bundle; returns the first chip's PTX.
std::string packBinaries(ModuleOp module, const std::string &libdevice) {
  std::string firstPtx;
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
      if (libdevice.empty() && ptx.find("__nv_") != std::string::npos)
        throw Error("[gpu] the kernels call libdevice math functions but libdevice.10.bc was "
                    "not found: set CUDA_HOME to the CUDA toolkit");
      if (firstPtx.empty())
        firstPtx = ptx;
      bundle += std::string(kPtxBundleTarget) + " " + target.getChip().str() + " " +
                std::to_string(ptx.size()) + "\n" + ptx;
    }
    auto first = cast<gpu::ObjectAttr>(objects[0]);
    MLIRContext *ctx = module.getContext();
    auto packed =
        gpu::ObjectAttr::get(ctx, first.getTarget(), gpu::CompilationTarget::Assembly,
                             StringAttr::get(ctx, bundle), first.getProperties(), first.getKernels());
    binary.setObjectsAttr(ArrayAttr::get(ctx, {packed}));
  }
  return firstPtx;
}

/// tinymlir-gpu-merge-kernel-modules: every outlined kernel in one gpu.module
/// @kernels (one PTX module per compiled function); launches renamed.
struct GpuMergeKernelModulesPass
    : PassWrapper<GpuMergeKernelModulesPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(GpuMergeKernelModulesPass)
  StringRef getArgument() const override { return "tinymlir-gpu-merge-kernel-modules"; }
  StringRef getDescription() const override {
    return "Move every outlined kernel into one gpu.module and retarget the launches";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<gpu::GPUDialect>();
  }
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
      std::string name = functions.size() == 1 ? m.getName().str()
                                               : m.getName().str() + "_" + f.getName().str();
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

} // namespace

std::unique_ptr<Pass> createGpuMergeKernelModulesPass() {
  return std::make_unique<GpuMergeKernelModulesPass>();
}

std::string gpuPipeline() {
  return joinPipelines({kGpuMapPipeline, loweringPipeline(targetChips(), findLibdevice())});
}

GpuStages lowerForGpu(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  ctx->getOrLoadDialect<gpu::GPUDialect>();
  ctx->getOrLoadDialect<NVVM::NVVMDialect>();
  initializeNvptx();
  std::vector<Chip> chips = targetChips();
  std::string libdevice = findLibdevice();

  runPipeline(module, kGpuMapPipeline, "gpu");

  GpuStages stages;
  stages.gpu = printModule(module);
  if (gpuEmulation()) {
    emulateKernelsOnHost(module);
    return stages;
  }
  runPipeline(module, loweringPipeline(chips, libdevice), "gpu-lower");
  stages.ptx = packBinaries(module, libdevice);
  return stages;
}

} // namespace tinymlir::detail
