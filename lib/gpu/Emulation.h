// GPU emulation on the host CPU for machines without a GPU
// (TINYMLIR_GPU_EMULATE=1): the kernels of the `gpu` stage run as OpenMP
// teams, one OpenMP thread per GPU thread (Emulation.cpp). For tests; the
// PTX stage is then empty.
#pragma once

#include <mlir/IR/BuiltinOps.h>

#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/Mangling.h>

namespace tinymlir::detail {

/// Whether TINYMLIR_GPU_EMULATE is set (and not "0").
bool gpuEmulation();
/// Replaces the launches of the `gpu` stage module by host code and lowers
/// the module with the CPU pipeline.
void emulateKernelsOnHost(mlir::ModuleOp module);
/// The runtime functions of an emulated module.
llvm::orc::SymbolMap gpuEmulationSymbols(llvm::orc::MangleAndInterner interner);

} // namespace tinymlir::detail
