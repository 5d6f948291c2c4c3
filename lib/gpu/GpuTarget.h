// The NVIDIA GPU target: lowering of a bufferized module to a host module that
// launches PTX kernels (GpuTarget.cpp and GpuPasses.h), and the CUDA runtime
// (driver API, loaded at run time) that the host module calls
// (CudaRuntime.cpp, GpuRuntime.h).
#pragma once

#include "gpu/GpuRuntime.h"

#include <mlir/IR/BuiltinOps.h>

#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/Mangling.h>

#include <string>

namespace tinymlir::detail {

struct GpuStages {
  std::string gpu; ///< after mapping to blocks/threads and kernel outlining
  std::string ptx; ///< the PTX text for sm_90 (the first target chip)
};

/// Lowers a bufferized module (matmuls still linalg) in place: tiled
/// shared-memory matmul kernels, other loops on blocks and threads, outlined
/// kernels serialized to PTX, a host module in the LLVM dialect.
GpuStages lowerForGpu(mlir::ModuleOp module);
/// The pass pipeline of lowerForGpu (without GPU emulation), for printing.
std::string gpuPipeline();

/// The runtime functions the host module calls (mgpu*, tinymlirGpu*), for the
/// execution engine. The engine must be initialize()d (its global constructors
/// register the kernel binaries; loading them waits for the first launch).
llvm::orc::SymbolMap gpuRuntimeSymbols(llvm::orc::MangleAndInterner interner);

} // namespace tinymlir::detail
