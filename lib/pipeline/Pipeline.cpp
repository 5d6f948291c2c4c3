// Running pipelines with MLIR diagnostics turned into tinymlir errors.
#include "pipeline/Pipeline.h"

#include <tinymlir/array.h>

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Math/IR/Math.h>
#include <mlir/Dialect/Math/Transforms/Passes.h>
#include <mlir/IR/Diagnostics.h>
#include <mlir/IR/Verifier.h>
#include <mlir/Pass/PassManager.h>
#include <mlir/Pass/PassRegistry.h>
#include <mlir/Transforms/GreedyPatternRewriteDriver.h>

#include <llvm/Support/raw_ostream.h>

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
    throw Error(std::string("[compile] stage '") + stage + "': the module does not verify:" +
                diags.text());
}

void runPipeline(mlir::ModuleOp module, const std::string &pipeline, const char *stage) {
  DiagnosticCollector diags(module.getContext());
  mlir::PassManager pm(module.getContext());
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

void simplifyMath(mlir::ModuleOp module) {
  mlir::RewritePatternSet patterns(module.getContext());
  mlir::populateMathAlgebraicSimplificationPatterns(patterns);
  if (mlir::failed(mlir::applyPatternsGreedily(module, std::move(patterns))))
    throw Error("[compile] math simplification did not converge");
}

int guardExpUnderflow(mlir::ModuleOp module) {
  using namespace mlir;
  SmallVector<math::ExpOp> exps;
  module.walk([&](math::ExpOp op) {
    if (op.getType().isF32() || op.getType().isF64())
      exps.push_back(op);
  });
  for (math::ExpOp op : exps) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Type type = op.getType();
    // Below these, exp(x) is under half the least subnormal: it rounds to +0.
    const double limit = type.isF64() ? -745.2 : -104.0;
    Value x = op.getOperand();
    Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 0.0));
    Value under = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x,
                                        arith::ConstantOp::create(b, loc, b.getFloatAttr(type, limit)));
    Value safe = arith::SelectOp::create(b, loc, under, zero, x);
    Value e = math::ExpOp::create(b, loc, safe, op.getFastmathAttr());
    op.replaceAllUsesWith(arith::SelectOp::create(b, loc, under, zero, e).getResult());
    op.erase();
  }
  return static_cast<int>(exps.size());
}

std::string printModule(mlir::ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return text;
}

} // namespace tinymlir::detail
