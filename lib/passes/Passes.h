// tinymlir's own MLIR passes: one per compiler step written in C++, each a
// module pass with a command-line name (tinymlir-opt, textual pipelines) and a
// create...Pass() function. Registered in one place, registerPasses().
// No MLIR headers here: tools include this file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace mlir {
class DialectRegistry;
class Pass;
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

// --- lib/passes ---
std::unique_ptr<mlir::Pass> createSimplifyMathPass();
std::unique_ptr<mlir::Pass> createSmallProductsPass(int64_t maxRows = kSmallProductMaxRows,
                                                    int64_t streamRows = 1);
std::unique_ptr<mlir::Pass> createBlasRewritePass();
std::unique_ptr<mlir::Pass> createLowerReductionsPass();
std::unique_ptr<mlir::Pass> createGuardExpUnderflowPass();
std::unique_ptr<mlir::Pass>
createSerializeSmallParallelLoopsPass(int64_t minimumWork = kMinimumParallelWork);
std::unique_ptr<mlir::Pass> createKernelNoInlinePass();

// --- lib/passes/gpu (targets/gpu/GpuTarget.cpp describes the order) ---
std::unique_ptr<mlir::Pass> createGpuMatmulKernelsPass(const std::string &tile = "");
std::unique_ptr<mlir::Pass> createGpuPrepareLoopsPass();
std::unique_ptr<mlir::Pass> createGpuMapParallelLoopsPass();
std::unique_ptr<mlir::Pass> createGpuMoveDataToDevicePass();
std::unique_ptr<mlir::Pass> createGpuMergeKernelModulesPass();
std::unique_ptr<mlir::Pass> createGpuCheckHostPass();
std::unique_ptr<mlir::Pass> createGpuPackPtxBundlePass(const std::string &libdevice = "");
std::unique_ptr<mlir::Pass> createGpuEmulateOnHostPass();

} // namespace detail
} // namespace tinymlir
