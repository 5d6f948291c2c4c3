// Builds an MLIR module (linalg on tensors) from a traced graph.
#pragma once

#include "frontend/Graph.h"

#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/OwningOpRef.h>

#include <vector>

namespace tinymlir::detail {

/// The name of the generated function; its C interface is _mlir_ciface_<name>.
inline constexpr const char *kKernelName = "kernel";

struct BuiltModule {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// Captured arrays lifted to trailing arguments, after the traced inputs.
  std::vector<Array> constants;
  /// Whether to bufferize without analysis (kBufferizeStraightLinePipeline):
  /// arrays updated in place (slice updates), or thousands of nodes.
  bool straightLine = false;
};

/// The attribute of the functions a long kernel is split into
/// (tinymlir-outline-parts).
inline constexpr const char *kPartAttr = "tinymlir.part";

/// The function attribute holding how many outputs end its arguments.
inline constexpr const char *kResultsAttr = "tinymlir.results";

/// func.func @kernel(inputs..., constants..., outputs...) with the graph's
/// body: one output per result, each written by its result. With
/// `donated[k]` >= 0, that input is output k's buffer, read and overwritten
/// in place (its own argument is not read): a result that updates it
/// (indexPut, slice updates) then writes only what changes.
BuiltModule buildModule(mlir::MLIRContext &context, const std::vector<NodePtr> &results,
                        const std::vector<NodePtr> &args, const std::vector<int> &donated);

/// Whether the module of these results (an Op::Results node) is bufferized with the analysis
/// (kBufferizePipeline: no slice updates, not thousands of nodes). Then any
/// input may be donated to a result of its shape and dtype: the analysis
/// orders the result's writes after the input's reads, or copies.
bool bufferizesWithAnalysis(const NodePtr &results);

} // namespace tinymlir::detail
