// The runtime functions generated code calls, by name, for the JIT's symbol
// tables. Each target hands one of these lists to the execution engine.
#pragma once

#include <vector>

namespace tinymlir::detail {

struct RuntimeSymbol {
  const char *name;
  void *address;
};
using RuntimeSymbols = std::vector<RuntimeSymbol>;

/// A function's address as a symbol's address.
template <class F> RuntimeSymbol symbol(const char *name, F *function) {
  return {name, reinterpret_cast<void *>(function)};
}

/// tinymlir_sgemm, tinymlir_dgemm (Gemm.cpp) and MLIR's memrefCopy.
RuntimeSymbols cpuRuntimeSymbols();
/// The mgpu* functions of MLIR's GPU-to-LLVM lowering and tinymlirGpu* (gpu/CudaRuntime.cpp).
RuntimeSymbols cudaRuntimeSymbols();
/// The tinymlirGpu* functions on host buffers, and the emulated thread id
/// (gpu/EmulationRuntime.cpp).
RuntimeSymbols gpuEmulationSymbols();

} // namespace tinymlir::detail
