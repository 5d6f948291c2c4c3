// LLVM's optimization pipeline for generated code (the execution engine's
// "transformer"), with glibc's vector math library known to the vectorizer.
#pragma once

#include <llvm/Support/Error.h>

#include <functional>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace tinymlir::detail {

/// Whether generated code may call libmvec; loads it into the process (once)
/// so that the JIT -- also when linking cached objects -- resolves its symbols.
/// TINYMLIR_VECTOR_MATH=0 turns it off.
bool vectorMathAvailable();

/// Optimizes a module at `level` (0-3) for `machine`. TINYMLIR_VECTOR_MATH=0
/// keeps scalar libm calls.
std::function<llvm::Error(llvm::Module *)> makeOptimizer(int level, llvm::TargetMachine *machine);

} // namespace tinymlir::detail
