// Pass pipelines: optimization, bufferization, BLAS rewrite, lowering to LLVM.
#pragma once

#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/MLIRContext.h>

namespace mlir::linalg {
class GenericOp;
}

#include <memory>
#include <optional>
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

/// A linalg.generic on memrefs with its parallel dimensions first and
/// reductions after, as an scf.parallel over the parallel dimensions (none: at
/// the op's place) around an scf.for nest that carries the outputs in
/// registers. Returns false (op untouched) for shapes it does not handle.
bool reductionToLoops(mlir::linalg::GenericOp op);
/// Every static linalg.reduce on memrefs through reductionToLoops.
int lowerReductions(mlir::ModuleOp module);
/// The trip count of a loop with constant bounds, if they are.
std::optional<int64_t> constantTripCount(mlir::Value lower, mlir::Value upper, mlir::Value step);

/// Parallel loops with less work than `minimumWork` iterations (and parallel
/// loops nested in another) become sequential loops; the rest get threads.
int serializeSmallParallelLoops(mlir::ModuleOp module, int64_t minimumWork);

/// Strength reduction of math ops with constant operands (MLIR's algebraic
/// simplification): powf(x, 2 or 3) becomes products, powf(x, 0.5) sqrt...
/// The GELU's cube then costs two multiplications instead of a pow call.
void simplifyMath(mlir::ModuleOp module);

/// exp(x) for x below the underflow threshold is 0 without calling exp: the
/// vector exp (libmvec) sends such lanes one by one to the scalar exp's slow
/// path (errno), and the causal mask's -1e10 scores are such lanes. Exact:
/// exp rounds to +0 there. Returns how many exps it guarded.
int guardExpUnderflow(mlir::ModuleOp module);

std::string printModule(mlir::ModuleOp module);

} // namespace tinymlir::detail
