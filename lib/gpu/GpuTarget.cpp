// Placeholder until the GPU backend lands: every entry point says so.
#include "gpu/GpuTarget.h"

#include <tinymlir/array.h>

namespace tinymlir::detail {

GpuStages lowerForGpu(mlir::ModuleOp) {
  throw Error("[gpu] the GPU target is not implemented yet");
}

llvm::orc::SymbolMap gpuRuntimeSymbols(llvm::orc::MangleAndInterner) { return llvm::orc::SymbolMap(); }

void requireGpu() { throw Error("[gpu] the GPU target is not implemented yet"); }

} // namespace tinymlir::detail
