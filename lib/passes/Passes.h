// tinymlir's own MLIR passes: one per compiler step written in C++, each a
// module pass with a command-line name (tinymlir-opt, textual pipelines),
// options and statistics, declared in Passes.td. mlir-tblgen makes their base
// classes and create...Pass() functions (passes/Passes.h.inc in the build
// tree: each pass's file includes its own); registerPasses() registers them.
// No MLIR headers here: tools include this file.
#pragma once

#include <cstdint>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace tinymlir {

/// Registers every tinymlir-* pass with MLIR's pass registry (once).
void registerPasses();

/// What tinymlir-opt offers: the dialects, extensions and interfaces the JIT
/// registers, every upstream pass, and ours.
void registerAllForOpt(mlir::DialectRegistry &registry);

namespace detail {

/// Defaults of the pass options.
/// Mixed-precision products with up to this many rows stream their float32
/// weights (tinymlir-small-products max-rows); more rows convert them and call
/// dgemm. Measured on GPT-2 124M: 16 rows streamed take 0.18 s a forward pass
/// (converted: 0.24 s), 32 rows 0.65 s (converted: 0.33 s, and a fifth of the
/// compile time).
inline constexpr int64_t kSmallProductMaxRows = 16;
/// Parallel loops with fewer iterations (all nested loops counted) run on one
/// thread: below this, an OpenMP fork costs more than it saves
/// (tinymlir-serialize-small-parallel-loops minimum-work).
inline constexpr int64_t kMinimumParallelWork = 1 << 16;

} // namespace detail
} // namespace tinymlir
