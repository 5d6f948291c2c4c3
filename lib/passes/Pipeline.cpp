// Running pipelines with MLIR diagnostics turned into tinymlir errors; the
// pipelines; the passes of the math steps.
#include "passes/Pipeline.h"
#include "passes/Passes.h"
#include "builder/MLIRGen.h"

#include <tinymlir/array.h>

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Dialect/Math/IR/Math.h>
#include <mlir/Dialect/Math/Transforms/Passes.h>
#include <mlir/IR/Diagnostics.h>
#include <mlir/IR/Verifier.h>
#include <mlir/Interfaces/ViewLikeInterface.h>
#include <mlir/Pass/Pass.h>
#include <mlir/Pass/PassManager.h>
#include <mlir/Pass/PassRegistry.h>
#include <mlir/Transforms/GreedyPatternRewriteDriver.h>

#include <llvm/Support/raw_ostream.h>

#include <atomic>
#include <exception>
#include <limits>
#include <thread>

namespace tinymlir::detail {
#define GEN_PASS_DECL_SIMPLIFYMATHPASS
#define GEN_PASS_DEF_SIMPLIFYMATHPASS
#define GEN_PASS_DECL_EXPANDCOPYSIGNPASS
#define GEN_PASS_DEF_EXPANDCOPYSIGNPASS
#define GEN_PASS_DECL_GUARDEXPUNDERFLOWPASS
#define GEN_PASS_DEF_GUARDEXPUNDERFLOWPASS
#define GEN_PASS_DECL_KERNELNOINLINEPASS
#define GEN_PASS_DEF_KERNELNOINLINEPASS
#define GEN_PASS_DECL_LOOPANNOTATIONSPASS
#define GEN_PASS_DEF_LOOPANNOTATIONSPASS
#include "passes/Passes.h.inc"
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

namespace {

using namespace mlir;

/// tinymlir-simplify-math: strength reduction of math ops with constant
/// operands (MLIR's algebraic simplification): powf(x, 2 or 3) becomes
/// products, powf(x, 0.5) sqrt... The GELU's cube then costs two
/// multiplications instead of a pow call. powf(x, -0.5) becomes rsqrt, which
/// no C library defines: 1 / sqrt(x + 0), the + 0 making -0 a +0 so that
/// x = -0 gives +inf as pow does, and +0 where x = -inf (pow's, not nan).
struct ExpandCopySignPass : impl::ExpandCopySignPassBase<ExpandCopySignPass> {
  void runOnOperation() override {
    getOperation().walk([](math::CopySignOp op) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      Type type = op.getType();
      const unsigned bits = getElementTypeOrSelf(type).getIntOrFloatBitWidth();
      Type intType = b.getIntegerType(bits);
      if (auto vector = dyn_cast<VectorType>(type))
        intType = VectorType::get(vector.getShape(), intType);
      auto constant = [&](const APInt &v) -> Value {
        TypedAttr a = b.getIntegerAttr(getElementTypeOrSelf(intType), v);
        if (auto vector = dyn_cast<ShapedType>(intType))
          a = DenseElementsAttr::get(vector, a);
        return arith::ConstantOp::create(b, loc, a);
      };
      Value sign = constant(APInt::getSignMask(bits));
      Value magnitude = constant(~APInt::getSignMask(bits));
      Value x = arith::BitcastOp::create(b, loc, intType, op.getLhs());
      Value y = arith::BitcastOp::create(b, loc, intType, op.getRhs());
      Value r = arith::OrIOp::create(b, loc, arith::AndIOp::create(b, loc, x, magnitude),
                                     arith::AndIOp::create(b, loc, y, sign));
      op.replaceAllUsesWith(arith::BitcastOp::create(b, loc, type, r).getResult());
      op.erase();
    });
  }
};

struct SimplifyMathPass : impl::SimplifyMathPassBase<SimplifyMathPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathAlgebraicSimplificationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      getOperation().emitError("math simplification did not converge");
      return signalPassFailure();
    }
    getOperation().walk([](math::RsqrtOp op) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      Type type = op.getType();
      auto constant = [&](double v) -> Value {
        TypedAttr a = b.getFloatAttr(getElementTypeOrSelf(type), v);
        if (auto vector = dyn_cast<ShapedType>(type))
          a = DenseElementsAttr::get(vector, a);
        return arith::ConstantOp::create(b, loc, a);
      };
      Value x = arith::AddFOp::create(b, loc, op.getOperand(), constant(0.0));
      Value root = math::SqrtOp::create(b, loc, x, op.getFastmathAttr());
      Value inverse = arith::DivFOp::create(b, loc, constant(1.0), root);
      Value minusInf = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x,
                                             constant(-std::numeric_limits<double>::infinity()));
      op.replaceAllUsesWith(
          arith::SelectOp::create(b, loc, minusInf, constant(0.0), inverse).getResult());
      op.erase();
    });
  }
};

/// tinymlir-guard-exp-underflow: exp(x) for x below the underflow threshold is
/// 0 without calling exp: the vector exp (libmvec) sends such lanes one by one
/// to the scalar exp's slow path (errno), and the causal mask's -1e10 scores
/// are such lanes. Exact: exp rounds to +0 there.
struct GuardExpUnderflowPass : impl::GuardExpUnderflowPassBase<GuardExpUnderflowPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<math::ExpOp> exps;
    getOperation().walk([&](math::ExpOp op) {
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
      Value under =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x,
                                arith::ConstantOp::create(b, loc, b.getFloatAttr(type, limit)));
      Value safe = arith::SelectOp::create(b, loc, under, zero, x);
      Value e = math::ExpOp::create(b, loc, safe, op.getFastmathAttr());
      op.replaceAllUsesWith(arith::SelectOp::create(b, loc, under, zero, e).getResult());
      op.erase();
    }
    guarded += exps.size();
  }
};

/// tinymlir-loop-annotations: convert-scf-to-cf copies an scf.for's LLVM
/// attributes (llvm.loop_annotation: the builder's dot loops, never unrolled,
/// scalar in long kernels) onto its back edge, and convert-cf-to-llvm keeps
/// them as discardable attributes of llvm.br / llvm.cond_br; LLVM IR export
/// reads only the branches' own loop_annotation. Without this, no annotation
/// reached LLVM.
struct LoopAnnotationsPass : impl::LoopAnnotationsPassBase<LoopAnnotationsPass> {
  void runOnOperation() override {
    constexpr llvm::StringLiteral name = "llvm.loop_annotation";
    getOperation()->walk([&](Operation *op) {
      auto annotation = op->getDiscardableAttr(name);
      if (!annotation)
        return;
      if (auto loop = dyn_cast<LLVM::LoopAnnotationAttr>(annotation)) {
        if (auto br = dyn_cast<LLVM::BrOp>(op))
          br.setLoopAnnotationAttr(loop);
        else if (auto condBr = dyn_cast<LLVM::CondBrOp>(op))
          condBr.setLoopAnnotationAttr(loop);
        else
          return;
        op->removeDiscardableAttr(name);
      }
    });
  }
};

/// tinymlir-kernel-noinline: the C interface wrapper and the engine's packed
/// wrappers each call the kernel: keep it out of line so that LLVM optimizes
/// and compiles its body once. A long kernel's parts (tinymlir-outline-parts)
/// stay out of line too, or LLVM would make one function of them again.
struct KernelNoInlinePass : impl::KernelNoInlinePassBase<KernelNoInlinePass> {
  using Base::Base;
  void runOnOperation() override {
    OpBuilder b(&getContext());
    for (auto fn : getOperation().getOps<LLVM::LLVMFuncOp>())
      if (fn.getSymName() == kKernelName)
        fn->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("noinline")}));
      else if (fn->hasAttr(kPartAttr))
        fn->setAttr("passthrough",
                    b.getArrayAttr({b.getStringAttr("noinline"), b.getStringAttr("optsize")}));
  }
};

} // namespace

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
