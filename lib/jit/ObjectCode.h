// Native code for a lowered kernel (LLVM dialect), compiled by LLVM on every
// core: one object for the kernel's module, one for each module of its parts.
#pragma once

#include <mlir/IR/BuiltinOps.h>

#include <string>
#include <vector>

namespace tinymlir::detail {

class CompileTarget;

/// The kernel's C interface (convert-func-to-llvm's _mlir_ciface_kernel).
std::string interfaceName();
/// The packed entry point's name: the C interface's void(void **) wrapper,
/// as MLIR's ExecutionEngine names it (_mlir_ prefixed).
std::string packedEntryName();

/// Relocatable object files: the kernel's module with the packed entry first,
/// then the modules of its parts (CompileTarget::lower), each optimized at
/// `level` and compiled on one of several threads.
std::vector<std::string> compileObjects(mlir::ModuleOp kernel,
                                        const std::vector<mlir::OwningOpRef<mlir::ModuleOp>> &parts,
                                        const CompileTarget &target, int level);

} // namespace tinymlir::detail
