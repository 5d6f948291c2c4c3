// Running pass pipelines, and what the passes share. The pipelines themselves
// belong to the targets (lib/targets).
#pragma once

#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/MLIRContext.h>
#include <mlir/IR/OwningOpRef.h>

namespace mlir::linalg {
class GenericOp;
}

#include <tinymlir/array.h>

#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tinymlir::detail {

/// The passes of pipelines, without their builtin.module(...) wrappers, as
/// one builtin.module(...) pipeline.
std::string joinPipelines(std::initializer_list<std::string> pipelines);

/// A context with every dialect, interface and translation the JIT needs,
/// from a pool: dropping the pointer hands it back for the next compile.
using PooledContext = std::unique_ptr<mlir::MLIRContext, void (*)(mlir::MLIRContext *)>;
PooledContext makeContext();

/// Runs a textual pass pipeline, then the verifier. On failure throws an
/// Error naming `stage` and carrying MLIR's diagnostics.
void runPipeline(mlir::ModuleOp module, const std::string &pipeline, const char *stage);
/// Verifies the module; throws an Error naming `stage` on failure.
void verifyModule(mlir::ModuleOp module, const char *stage);

/// How many products the BLAS rewrite replaced: calls of tinymlir_sgemm /
/// tinymlir_dgemm (func.call or, once lowered, llvm.call).
int countBlasCalls(mlir::ModuleOp module);

/// A linalg.generic on memrefs with its parallel dimensions first and
/// reductions after, as an scf.parallel over the parallel dimensions (none: at
/// the op's place) around an scf.for nest that carries the outputs in
/// registers. Returns false (op untouched) for shapes it does not handle.
bool reductionToLoops(mlir::linalg::GenericOp op);
/// The memref a view (subview, reshape...) is taken of, through every view.
mlir::Value viewRoot(mlir::Value memref);
/// The trip count of a loop with constant bounds, if they are.
std::optional<int64_t> constantTripCount(mlir::Value lower, mlir::Value upper, mlir::Value step);

/// Runs a step that may throw an Error: the Error becomes a diagnostic on
/// `op` and a failure (for passes: signalPassFailure).
template <class Step> mlir::LogicalResult reportErrors(mlir::Operation *op, Step &&step) {
  try {
    step();
    return mlir::success();
  } catch (const Error &e) {
    op->emitError(e.what());
    return mlir::failure();
  }
}

/// The modules nested in `module` (tinymlir-move-out-parts), taken out of it.
std::vector<mlir::OwningOpRef<mlir::ModuleOp>> takeNestedModules(mlir::ModuleOp module);

/// Runs fn(0) ... fn(n - 1) on up to `workers` threads, this one among them,
/// with `context`'s multithreading on meanwhile (its uniquers then take
/// locks); rethrows the first error once every thread has stopped.
void forEachInParallel(mlir::MLIRContext *context, size_t n, unsigned workers,
                       const std::function<void(size_t)> &fn);
/// The threads that compile: the cores, at most 8.
unsigned compileWorkers();

/// The module's text; the module must have been verified (the printer does
/// not verify it again).
std::string printModule(mlir::ModuleOp module);

} // namespace tinymlir::detail
