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

/// Loads libmvec into the process (once) so that the JIT -- also when linking
/// cached objects -- resolves its symbols; whether it is there.
bool loadVectorMath();

/// Optimizes a module at `level` (0-3) for `machine`; with `vectorMath`
/// (and libmvec present) loops of exp, tanh, pow... call libmvec.
std::function<llvm::Error(llvm::Module *)> makeOptimizer(int level, llvm::TargetMachine *machine,
                                                         bool vectorMath);

} // namespace tinymlir::detail
