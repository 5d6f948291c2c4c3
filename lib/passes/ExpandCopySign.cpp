// tinymlir-expand-copysign: math.copysign as bit operations on the float's
// integer bits (MLIR 22's convert-math-to-libm has no pattern for it).
#include "passes/Passes.h"

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Math/IR/Math.h>
#include <mlir/IR/Builders.h>
#include <mlir/Pass/Pass.h>

namespace tinymlir::detail {
#define GEN_PASS_DECL_EXPANDCOPYSIGNPASS
#define GEN_PASS_DEF_EXPANDCOPYSIGNPASS
#include "passes/Passes.h.inc"
namespace {

using namespace mlir;

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

} // namespace
} // namespace tinymlir::detail
