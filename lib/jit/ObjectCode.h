// Native code for a lowered module (LLVM dialect), compiled by LLVM on
// several threads: the kernel's outlined parts (tinymlir-outline-parts) are
// spread over partitions, each optimized and compiled on a thread of its own.
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

/// Relocatable object files of `module`: its LLVM IR with the packed entry,
/// in at most `partitions` partitions (one unless the kernel was split into
/// parts), each optimized at `level` and compiled on its own thread.
std::vector<std::string> compileObjects(mlir::ModuleOp module, const CompileTarget &target,
                                        int level, unsigned partitions);

} // namespace tinymlir::detail
