// Native code for a lowered module (LLVM dialect), compiled by LLVM on
// several threads: the kernel's outlined parts (tinymlir-outline-parts) are
// spread over partitions, each optimized and compiled on a thread of its own.
#pragma once

#include <mlir/IR/BuiltinOps.h>

#include <string>
#include <vector>

namespace tinymlir::detail {

class CompileTarget;

/// The packed entry point's name (`kernel` as MLIR's ExecutionEngine names
/// its void(void **) wrapper of the C interface).
std::string packedEntryName();

/// Relocatable object files of `module`: its LLVM IR with the packed entry,
/// in at most `partitions` partitions (one unless the kernel was split into
/// parts), each optimized at `level` and compiled on its own thread.
std::vector<std::string> compileObjects(mlir::ModuleOp module, const CompileTarget &target,
                                        int level, unsigned partitions);

} // namespace tinymlir::detail
