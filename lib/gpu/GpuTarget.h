// The NVIDIA GPU target: lowering of a bufferized module to a host module that
// launches PTX kernels, and the CUDA runtime (driver API, loaded at run time)
// that the host module calls.
#pragma once

#include <mlir/IR/BuiltinOps.h>

#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/Mangling.h>

#include <string>

namespace tinymlir::detail {

struct GpuStages {
  std::string gpu; ///< after mapping to blocks/threads and kernel outlining
  std::string ptx; ///< the PTX text for sm_90
};

/// Lowers a bufferized module (matmuls still linalg) in place: tiled
/// shared-memory matmul kernels, other loops on blocks and threads, outlined
/// kernels serialized to PTX/cubin, a host module in the LLVM dialect.
GpuStages lowerForGpu(mlir::ModuleOp module);

/// The runtime functions the host module calls (mgpu*), for the execution engine.
llvm::orc::SymbolMap gpuRuntimeSymbols(llvm::orc::MangleAndInterner interner);

/// Throws a clear tinymlir::Error unless a CUDA driver and a device are usable.
void requireGpu();

} // namespace tinymlir::detail
