// Running pipelines with MLIR diagnostics turned into tinymlir errors; joining
// pipelines; what the passes share (Pipeline.h). Each pass has a file of its own.
#include "passes/Pipeline.h"

#include <tinymlir/array.h>

#include <mlir/IR/Diagnostics.h>
#include <mlir/IR/Verifier.h>
#include <mlir/Interfaces/ViewLikeInterface.h>
#include <mlir/Pass/Pass.h>
#include <mlir/Pass/PassManager.h>
#include <mlir/Pass/PassRegistry.h>

#include <llvm/Support/raw_ostream.h>

#include <atomic>
#include <exception>
#include <thread>

namespace tinymlir::detail {
namespace {

/// Collects diagnostics while alive.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(mlir::MLIRContext *context)
      : handler_(context, [this](mlir::Diagnostic &diag) {
          llvm::raw_string_ostream os(text_);
          os << "\n  " << diag.getLocation() << ": " << diag;
          for (auto &note : diag.getNotes())
            os << "\n    note: " << note;
          return mlir::success();
        }) {}
  const std::string &text() const { return text_; }

private:
  std::string text_;
  mlir::ScopedDiagnosticHandler handler_;
};

} // namespace

void verifyModule(mlir::ModuleOp module, const char *stage) {
  DiagnosticCollector diags(module.getContext());
  if (mlir::failed(mlir::verify(module)))
    throw Error(std::string("[compile] stage '") + stage +
                "': the module does not verify:" + diags.text());
}

void runPipeline(mlir::ModuleOp module, const std::string &pipeline, const char *stage) {
  DiagnosticCollector diags(module.getContext());
  mlir::PassManager pm(module.getContext());
  // The module is verified once, after the stage (below), not after each of
  // its passes: that was 15% of a long kernel's compile time. tinymlir-opt
  // (the lit tests of each pass) keeps verifying after every pass.
  pm.enableVerifier(false);
  std::string parseErrors;
  llvm::raw_string_ostream errs(parseErrors);
  // The pass manager is anchored on the module: add the passes inside the
  // "builtin.module(...)" wrapper to it directly.
  llvm::StringRef passes(pipeline);
  if (passes.consume_front("builtin.module("))
    passes.consume_back(")");
  if (mlir::failed(mlir::parsePassPipeline(passes, pm, errs)))
    throw Error(std::string("[compile] stage '") + stage + "': bad pass pipeline '" + pipeline +
                "': " + parseErrors);
  if (mlir::failed(pm.run(module)))
    throw Error(std::string("[compile] stage '") + stage + "' failed:" + diags.text());
  verifyModule(module, stage);
}

void forEachInParallel(mlir::MLIRContext *context, size_t n, unsigned workers,
                       const std::function<void(size_t)> &fn) {
  workers = static_cast<unsigned>(std::min<size_t>(std::max(workers, 1u), n));
  if (workers <= 1) {
    for (size_t i = 0; i < n; ++i)
      fn(i);
    return;
  }
  const bool wasThreaded = context->isMultithreadingEnabled();
  context->enableMultithreading(true);
  if (!context->isMultithreadingEnabled()) // --mlir-disable-threading: one thread
    workers = 1;
  std::atomic<size_t> next{0};
  std::vector<std::exception_ptr> errors(n);
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        fn(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < workers; ++t)
    threads.emplace_back(work);
  work();
  for (std::thread &t : threads)
    t.join();
  context->enableMultithreading(wasThreaded);
  for (const std::exception_ptr &e : errors)
    if (e)
      std::rethrow_exception(e);
}

std::vector<mlir::OwningOpRef<mlir::ModuleOp>> takeNestedModules(mlir::ModuleOp module) {
  std::vector<mlir::OwningOpRef<mlir::ModuleOp>> nested;
  for (auto inner : llvm::make_early_inc_range(module.getOps<mlir::ModuleOp>())) {
    inner->remove();
    inner.setSymNameAttr(nullptr);
    nested.emplace_back(inner);
  }
  return nested;
}

unsigned compileWorkers() {
  return std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
}

std::string joinPipelines(std::initializer_list<std::string> pipelines) {
  std::string joined;
  for (llvm::StringRef p : pipelines) {
    if (p.consume_front("builtin.module("))
      p.consume_back(")");
    if (!p.empty())
      joined += (joined.empty() ? "" : ",") + p.str();
  }
  return "builtin.module(" + joined + ")";
}

std::string printModule(mlir::ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  // Every module printed was verified (verifyModule, runPipeline): the
  // printer's own verification (a fallback to the generic form) is skipped.
  module.print(os, mlir::OpPrintingFlags().assumeVerified());
  return text;
}

mlir::Value viewRoot(mlir::Value memref) {
  while (auto view = memref.getDefiningOp<mlir::ViewLikeOpInterface>())
    memref = view.getViewSource();
  return memref;
}

} // namespace tinymlir::detail
