// The NVIDIA GPU targets. Both take the bufferized module (matmuls still
// linalg, function arguments host memrefs) through the same mapping onto
// blocks and threads (the `gpu` stage); then
//  - gpu: the kernels go to PTX for each chip (options.gpuChips, default
//    "sm_90,sm_75": Hopper, and the Turing of a T4), packed into one bundle,
//    and the host module calls our CUDA runtime (runtime/gpu);
//  - gpu-emulated: the kernels run on the CPU as OpenMP teams
//    (tinymlir-gpu-emulate-on-host), for tests on machines without a GPU.
//
// The mapping, on the bufferized module:
//   1. tinymlir-gpu-matmul-kernels     linalg.matmul / batch_matmul -> gpu.launch of a
//                                      shared-memory tiled kernel (MatmulKernels.cpp)
//   2. tinymlir-gpu-prepare-loops      memref.copy -> linalg.copy, static memref.reshape
//                                      -> memref.reinterpret_cast, named ops generalized,
//                                      parallel dimensions first, loop nests without a
//                                      parallel dimension wrapped in a one-trip scf.parallel
//   -- convert-linalg-to-parallel-loops --
//   3. tinymlir-gpu-map-parallel-loops tiles every outermost scf.parallel (no min/max
//                                      bounds: ragged tiles are guarded by scf.if) and
//                                      maps it onto blocks and threads (LoopMapping.cpp)
//   -- convert-parallel-loops-to-gpu, lower-affine, canonicalize, gpu-kernel-outlining --
//   4. tinymlir-gpu-move-data-to-device host arguments -> device buffers through the
//                                      runtime, memref.alloc -> gpu.alloc, copy-out of
//                                      the result (DeviceMemory.cpp)
//   5. tinymlir-gpu-merge-kernel-modules every outlined kernel in one gpu.module
//                                      @kernels (one PTX module per compiled function)
//   -- canonicalize, cse --
//   6. tinymlir-gpu-check-host         fails if a host function still holds loops,
//                                      linalg ops, host allocations or direct
//                                      loads/stores (DeviceMemory.cpp)
// (passes in lib/passes/gpu). libdevice (math functions) comes from CUDA_HOME,
// CUDA_PATH or /usr/local/cuda (nvvm/libdevice/libdevice.10.bc). The kernels
// are serialized as PTX (format=isa: no CUDA tool at compile time); the
// driver compiles it for the device when the module is loaded.
#include "passes/Passes.h"
#include "passes/Pipeline.h"
#include "runtime/gpu/GpuRuntime.h"
#include "runtime/gpu/RuntimeAbi.h"
#include "targets/Target.h"

#include <tinymlir/array.h>

#include <mlir/Dialect/GPU/IR/GPUDialect.h>
#include <mlir/Dialect/LLVMIR/NVVMDialect.h>

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

std::vector<Chip> targetChips(const std::string &list) {
  std::vector<Chip> chips;
  std::stringstream in(list);
  std::string name;
  while (std::getline(in, name, ',')) {
    if (name.empty())
      continue;
    if (name.rfind("sm_", 0) != 0 || name.size() < 5 || !std::isdigit(name[3]))
      throw Error("[gpu] chips '" + list + "': '" + name + "' is not a chip like sm_90");
    chips.push_back({name, ptxFeatures(name)});
  }
  if (chips.empty())
    throw Error("[gpu] chips '" + list + "' name no chip");
  return chips;
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
       "canonicalize,cse,reconcile-unrealized-casts,tinymlir-kernel-noinline,"
       "tinymlir-gpu-pack-ptx-bundle";
  if (!libdevice.empty())
    p += "{libdevice=" + libdevice + "}";
  return p + ")";
}

/// A GPU target's host code calls its runtime and, for what stays on the
/// host, the CPU's.
RuntimeSymbols withCpuSymbols(RuntimeSymbols symbols) {
  for (const RuntimeSymbol &s : cpuRuntimeSymbols())
    symbols.push_back(s);
  return symbols;
}

/// Blocks and threads, kernels outlined, data on the device: the `gpu` stage.
std::string mapPipeline(const std::string &tile) {
  return "builtin.module(tinymlir-gpu-matmul-kernels" +
         (tile.empty() ? std::string() : "{tile=" + tile + "}") +
         ",tinymlir-gpu-prepare-loops,func.func(convert-linalg-to-parallel-loops),"
         "tinymlir-gpu-map-parallel-loops,func.func(convert-parallel-loops-to-gpu),lower-affine,"
         "canonicalize,gpu-launch-sink-index-computations,gpu-kernel-outlining,"
         "tinymlir-gpu-move-data-to-device,tinymlir-gpu-merge-kernel-modules,canonicalize,cse,"
         "tinymlir-gpu-check-host)";
}

/// The first chip's PTX in the module's kernel bundle (RuntimeAbi.h).
std::string firstPtx(ModuleOp module) {
  for (auto binary : module.getOps<gpu::BinaryOp>())
    for (Attribute a : binary.getObjectsAttr()) {
      std::istringstream bundle(cast<gpu::ObjectAttr>(a).getObject().str());
      std::string magic, tag, chip;
      size_t bytes = 0;
      std::getline(bundle, magic);
      if (magic != kPtxBundleMagic || !(bundle >> tag >> chip >> bytes) || bundle.get() != '\n')
        throw Error("[gpu] the kernel binary is not a PTX bundle");
      std::string ptx(bytes, '\0');
      bundle.read(ptx.data(), static_cast<std::streamsize>(bytes));
      return ptx;
    }
  return "";
}

class GpuTarget final : public CompileTarget {
public:
  explicit GpuTarget(const JitOptions &options)
      : CompileTarget("", options.vectorMath), tile_(options.gpuMatmulTile),
        chips_(targetChips(options.gpuChips)), libdevice_(libdevice(options)) {}
  const char *name() const override { return "gpu"; }
  std::string lowerPipeline() const override {
    return joinPipelines({mapPipeline(tile_), loweringPipeline(chips_, libdevice_)});
  }
  std::vector<OwningOpRef<ModuleOp>> lower(ModuleOp module, TargetStages &stages) const override {
    initializeNvptx();
    runPipeline(module, mapPipeline(tile_), "gpu");
    stages.gpu = printModule(module);
    runPipeline(module, loweringPipeline(chips_, libdevice_), "gpu-lower");
    stages.ptx = firstPtx(module);
    return {};
  }
  RuntimeSymbols runtimeSymbols() const override { return withCpuSymbols(cudaRuntimeSymbols()); }
  bool hasConstructors() const override { return true; } // they register the kernel binaries
  CallHooks callHooks() const override { return {&requireGpu, &checkGpuErrors}; }

private:
  std::string tile_;
  std::vector<Chip> chips_;
  std::string libdevice_;
};

class EmulatedGpuTarget final : public CompileTarget {
public:
  explicit EmulatedGpuTarget(const JitOptions &options)
      : CompileTarget("", options.vectorMath), tile_(options.gpuMatmulTile) {}
  const char *name() const override { return "gpu-emulated"; }
  std::string lowerPipeline() const override {
    return joinPipelines({mapPipeline(tile_), emulation()});
  }
  std::vector<OwningOpRef<ModuleOp>> lower(ModuleOp module, TargetStages &stages) const override {
    runPipeline(module, mapPipeline(tile_), "gpu");
    stages.gpu = printModule(module);
    runPipeline(module, emulation(), "gpu-emulate");
    return {};
  }
  RuntimeSymbols runtimeSymbols() const override { return withCpuSymbols(gpuEmulationSymbols()); }
  CallHooks callHooks() const override { return {&checkGpuErrors, &checkGpuErrors}; }

private:
  static std::string emulation() {
    return joinPipelines({"builtin.module(tinymlir-gpu-emulate-on-host)", kLoopsToLlvmPipeline});
  }
  std::string tile_;
};

} // namespace

std::unique_ptr<CompileTarget> makeGpuTarget(const JitOptions &options) {
  if (options.gpuEmulate)
    return std::make_unique<EmulatedGpuTarget>(options);
  return std::make_unique<GpuTarget>(options);
}

} // namespace tinymlir::detail
