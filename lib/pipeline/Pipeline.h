// Pass pipelines: optimization, bufferization, BLAS rewrite, lowering to LLVM.
#pragma once

#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/MLIRContext.h>

#include <memory>
#include <string>

namespace tinymlir::detail {

inline constexpr const char *kOptimizePipeline =
    "builtin.module(canonicalize,cse,linalg-fuse-elementwise-ops,canonicalize,cse)";
inline constexpr const char *kBufferizePipeline =
    "builtin.module(eliminate-empty-tensors,one-shot-bufferize{bufferize-function-boundaries},"
    "buffer-deallocation-pipeline,canonicalize)";
/// linalg to loops: scf.parallel for parallel dimensions (see
/// serializeSmallParallelLoops), scf.for for reductions.
inline constexpr const char *kLoopsPipeline = "builtin.module(convert-linalg-to-parallel-loops)";
inline constexpr const char *kLowerPipeline =
    "builtin.module(convert-scf-to-openmp,canonicalize,expand-strided-metadata,"
    "lower-affine,convert-scf-to-cf,convert-math-to-libm,convert-math-to-llvm,"
    "convert-arith-to-llvm,convert-openmp-to-llvm,convert-func-to-llvm,convert-cf-to-llvm,"
    "finalize-memref-to-llvm,reconcile-unrealized-casts)";

/// A context with every dialect, interface and translation the JIT needs.
std::unique_ptr<mlir::MLIRContext> makeContext();

/// Runs a textual pass pipeline, then the verifier. On failure throws an
/// Error naming `stage` and carrying MLIR's diagnostics.
void runPipeline(mlir::ModuleOp module, const std::string &pipeline, const char *stage);
/// Verifies the module; throws an Error naming `stage` on failure.
void verifyModule(mlir::ModuleOp module, const char *stage);

/// Replaces row-major memref linalg.matmul / linalg.batch_matmul with
/// cblas_sgemm / cblas_dgemm calls. Returns how many products it replaced.
int rewriteMatmulsToBlas(mlir::ModuleOp module);

/// Lowers the products with few rows that remain after the BLAS rewrite
/// (float64 rows against float32 weights in decoding) to loops that stream the
/// weights once. Returns how many it lowered.
int lowerSmallProducts(mlir::ModuleOp module);

/// linalg.reduce -> parallel loops over the kept dimensions around sequential
/// accumulations held in registers (vectorizable).
int lowerReductions(mlir::ModuleOp module);

/// Parallel loops with less work than `minimumWork` iterations (and parallel
/// loops nested in another) become sequential loops; the rest get threads.
int serializeSmallParallelLoops(mlir::ModuleOp module, int64_t minimumWork);

std::string printModule(mlir::ModuleOp module);

} // namespace tinymlir::detail
