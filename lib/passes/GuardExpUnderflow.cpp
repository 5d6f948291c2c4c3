// tinymlir-guard-exp-underflow: an f32/f64 math.exp of an argument below the
// underflow threshold is 0, selected without calling exp.
#include "passes/Passes.h"

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Math/IR/Math.h>
#include <mlir/IR/Builders.h>
#include <mlir/Pass/Pass.h>

namespace tinymlir::detail {
#define GEN_PASS_DECL_GUARDEXPUNDERFLOWPASS
#define GEN_PASS_DEF_GUARDEXPUNDERFLOWPASS
#include "passes/Passes.h.inc"
namespace {

using namespace mlir;

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

} // namespace
} // namespace tinymlir::detail
