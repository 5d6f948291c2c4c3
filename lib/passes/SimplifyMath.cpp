// tinymlir-simplify-math: MLIR's algebraic simplification of math ops with
// constant operands, and math.rsqrt as 1 / sqrt.
#include "passes/Passes.h"

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Math/IR/Math.h>
#include <mlir/Dialect/Math/Transforms/Passes.h>
#include <mlir/IR/Builders.h>
#include <mlir/Pass/Pass.h>
#include <mlir/Transforms/GreedyPatternRewriteDriver.h>

#include <limits>

namespace tinymlir::detail {
#define GEN_PASS_DECL_SIMPLIFYMATHPASS
#define GEN_PASS_DEF_SIMPLIFYMATHPASS
#include "passes/Passes.h.inc"
namespace {

using namespace mlir;

/// tinymlir-simplify-math: strength reduction of math ops with constant
/// operands (MLIR's algebraic simplification): powf(x, 2 or 3) becomes
/// products, powf(x, 0.5) sqrt... The GELU's cube then costs two
/// multiplications instead of a pow call. powf(x, -0.5) becomes rsqrt, which
/// no C library defines: 1 / sqrt(x + 0), the + 0 making -0 a +0 so that
/// x = -0 gives +inf as pow does, and +0 where x = -inf (pow's, not nan).
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

} // namespace
} // namespace tinymlir::detail
