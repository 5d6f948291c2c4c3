// The scalar lowerings of ops.def's elementwise ops (ScalarLowering.h): the
// lowering functions of rows with no one-to-one MLIR op, and scalarOp, which
// picks a row's float, int or complex lowering.
#include "builder/ScalarLowering.h"

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Complex/IR/Complex.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Dialect/Math/IR/Math.h>
#include <mlir/IR/Builders.h>
#include <mlir/IR/BuiltinTypes.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <type_traits>

namespace tinymlir::detail {

using namespace mlir;

Type elementType(Builder &b, DType dtype) {
  switch (dtypeKind(dtype)) {
  case DTypeKind::Bool: // NumPy's bool: a byte, 0 or 1
    return b.getI8Type();
  case DTypeKind::Signed:
  case DTypeKind::Unsigned: // signless: the lowerings choose signed or unsigned ops
    return b.getIntegerType(static_cast<unsigned>(8 * dtypeSize(dtype)));
  case DTypeKind::Float:
    return dtype == DType::f16   ? Type(b.getF16Type())
           : dtype == DType::f32 ? Type(b.getF32Type())
                                 : Type(b.getF64Type());
  case DTypeKind::Complex:
    return ComplexType::get(elementType(b, realPart(dtype)));
  }
  return {};
}

Value scalarConstant(OpBuilder &b, Location loc, DType dtype, double value, double imag) {
  Type type = elementType(b, dtype);
  if (isInteger(dtype)) {
    int64_t v = std::isnan(value)                 ? 0
                : value <= -9223372036854775808.0 ? std::numeric_limits<int64_t>::min()
                : value >= 18446744073709551616.0 ? -1
                : value >= 9223372036854775808.0
                    ? static_cast<int64_t>(static_cast<uint64_t>(value))
                    : static_cast<int64_t>(value);
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, v));
  }
  if (dtype == DType::b8)
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, value != 0 ? 1 : 0));
  if (isComplex(dtype)) {
    Type part = elementType(b, realPart(dtype));
    return complex::ConstantOp::create(
        b, loc, type, b.getArrayAttr({b.getFloatAttr(part, value), b.getFloatAttr(part, imag)}));
  }
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
}

Value intConstant(OpBuilder &b, Location loc, Type type, int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, v));
}

namespace {

// Scalar lowerings of ops.def with no one-to-one MLIR op.

/// An i1 as a bool element (an i8 of 0 or 1).
Value toBool(OpBuilder &b, Location loc, Value i1) {
  return arith::ExtUIOp::create(b, loc, b.getI8Type(), i1);
}

/// The unsigned predicate of a signed one (eq and ne are their own).
constexpr arith::CmpIPredicate unsignedPredicate(arith::CmpIPredicate p) {
  using P = arith::CmpIPredicate;
  return p == P::slt   ? P::ult
         : p == P::sle ? P::ule
         : p == P::sgt ? P::ugt
         : p == P::sge ? P::uge
                       : p;
}

/// Comparisons: of float operands (ordered: false with nan, but for !=), of
/// integer (signed or unsigned) or bool ones, of complex ones; a bool result.
template <arith::CmpFPredicate P> struct CompareFloat {
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &, ArrayRef<Value> x) {
    return toBool(b, loc, arith::CmpFOp::create(b, loc, P, x[0], x[1]));
  }
};
template <arith::CmpIPredicate P> struct CompareInt {
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &n, ArrayRef<Value> x) {
    const bool u = isUnsigned(n.args[0]->dtype) || n.args[0]->dtype == DType::b8;
    return toBool(b, loc, arith::CmpIOp::create(b, loc, u ? unsignedPredicate(P) : P, x[0], x[1]));
  }
};
template <class ComplexOp> struct CompareComplex {
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &, ArrayRef<Value> x) {
    return toBool(b, loc, ComplexOp::create(b, loc, x[0], x[1]));
  }
};

/// NumPy's lexicographic order of complex numbers (its CLT, CLE, CGT, CGE):
/// the real parts decide, unless either imaginary part is nan; equal ones
/// leave it to the imaginary parts. `strict`: < or >; `greater`: > or >=.
Value lexicographic(OpBuilder &b, Location loc, Value x, Value y, bool greater, bool strict) {
  using P = arith::CmpFPredicate;
  Value xr = complex::ReOp::create(b, loc, x), xi = complex::ImOp::create(b, loc, x);
  Value yr = complex::ReOp::create(b, loc, y), yi = complex::ImOp::create(b, loc, y);
  auto cmp = [&](P p, Value u, Value v) { return arith::CmpFOp::create(b, loc, p, u, v); };
  Value real = cmp(greater ? P::OGT : P::OLT, xr, yr);
  Value numbers = arith::AndIOp::create(b, loc, cmp(P::ORD, xi, xi), cmp(P::ORD, yi, yi));
  Value imag = cmp(greater ? (strict ? P::OGT : P::OGE) : (strict ? P::OLT : P::OLE), xi, yi);
  Value tie = arith::AndIOp::create(b, loc, cmp(P::OEQ, xr, yr), imag);
  return arith::OrIOp::create(b, loc, arith::AndIOp::create(b, loc, real, numbers), tie);
}
template <bool greater, bool strict> struct CompareLexicographic {
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &, ArrayRef<Value> x) {
    return toBool(b, loc, lexicographic(b, loc, x[0], x[1], greater, strict));
  }
};
/// NumPy's complex maximum (minimum): the first operand where it has a nan
/// part or is >= (<=) the second, else the second; fmax (fmin) keeps the
/// first where the second has a nan part.
template <bool greater, bool ignoreNan> struct ComplexExtreme {
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &, ArrayRef<Value> x) {
    using P = arith::CmpFPredicate;
    const Value z = x[ignoreNan ? 1 : 0];
    Value re = complex::ReOp::create(b, loc, z), im = complex::ImOp::create(b, loc, z);
    Value nan = arith::OrIOp::create(b, loc, arith::CmpFOp::create(b, loc, P::UNO, re, re),
                                     arith::CmpFOp::create(b, loc, P::UNO, im, im));
    Value first =
        arith::OrIOp::create(b, loc, nan, lexicographic(b, loc, x[0], x[1], greater, false));
    return arith::SelectOp::create(b, loc, first, x[0], x[1]);
  }
};
// ops.def's names (a macro argument holds no comma).
using LessComplex = CompareLexicographic<false, true>;
using LessEqualComplex = CompareLexicographic<false, false>;
using GreaterComplex = CompareLexicographic<true, true>;
using GreaterEqualComplex = CompareLexicographic<true, false>;
using MaximumComplex = ComplexExtreme<true, false>;
using MinimumComplex = ComplexExtreme<false, false>;
using FmaxComplex = ComplexExtreme<true, true>;
using FminComplex = ComplexExtreme<false, true>;

/// Float to integer as NumPy's C casts give on x86, with no poison: values
/// out of the range of the conversion (and nan) give the "integer
/// indefinite" 0x80...0; narrow types convert through int32 (int64 for
/// uint32) and wrap, as C compilers do.
Value floatToInt(OpBuilder &b, Location loc, Value x, DType from, DType to) {
  const unsigned bits = static_cast<unsigned>(8 * dtypeSize(to));
  Type target = elementType(b, to);
  if (to == DType::u64) { // [0, 2^64): unsigned; [-2^63, 0): the signed bits; else 2^63
    Value lo = scalarConstant(b, loc, from, 0.0),
          hi = scalarConstant(b, loc, from, 18446744073709551616.0);
    Value min = scalarConstant(b, loc, from, -9223372036854775808.0);
    Value inU = arith::AndIOp::create(
        b, loc, arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x, lo),
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, hi));
    Value inS = arith::AndIOp::create(
        b, loc, arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x, min),
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, lo));
    Value zero = scalarConstant(b, loc, from, 0.0);
    Value u =
        arith::FPToUIOp::create(b, loc, target, arith::SelectOp::create(b, loc, inU, x, zero));
    Value s =
        arith::FPToSIOp::create(b, loc, target, arith::SelectOp::create(b, loc, inS, x, zero));
    Value indefinite = intConstant(b, loc, target, std::numeric_limits<int64_t>::min());
    return arith::SelectOp::create(b, loc, inU, u,
                                   arith::SelectOp::create(b, loc, inS, s, indefinite));
  }
  const unsigned via = bits == 64 || to == DType::u32 ? 64 : 32;
  Type wide = b.getIntegerType(via);
  const double limit = std::ldexp(1.0, static_cast<int>(via) - 1);
  Value inRange = arith::AndIOp::create(b, loc,
                                        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x,
                                                              scalarConstant(b, loc, from, -limit)),
                                        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x,
                                                              scalarConstant(b, loc, from, limit)));
  Value safe = arith::SelectOp::create(b, loc, inRange, x, scalarConstant(b, loc, from, 0.0));
  Value converted = arith::FPToSIOp::create(b, loc, wide, safe);
  Value v = arith::SelectOp::create(b, loc, inRange, converted,
                                    intConstant(b, loc, wide,
                                                via == 64 ? std::numeric_limits<int64_t>::min()
                                                          : std::numeric_limits<int32_t>::min()));
  return bits == via ? v : Value(arith::TruncIOp::create(b, loc, target, v));
}

struct CastScalar {
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &n, ArrayRef<Value> x) {
    DType from = n.args[0]->dtype, to = n.dtype;
    Type type = elementType(b, to);
    if (from == to)
      return x[0];
    if (isComplex(from)) { // complex -> complex: both parts; -> real: the real part, as NumPy's
      Value re = complex::ReOp::create(b, loc, x[0]);
      if (isComplex(to)) {
        Value im = complex::ImOp::create(b, loc, x[0]);
        Type part = elementType(b, realPart(to));
        auto resize = [&](Value v) -> Value {
          return dtypeSize(to) > dtypeSize(from) ? Value(arith::ExtFOp::create(b, loc, part, v))
                                                 : Value(arith::TruncFOp::create(b, loc, part, v));
        };
        return complex::CreateOp::create(b, loc, type, resize(re), resize(im));
      }
      if (to == DType::b8) { // nonzero: either part
        Value im = complex::ImOp::create(b, loc, x[0]);
        Value zero = scalarConstant(b, loc, realPart(from), 0.0);
        return toBool(b, loc,
                      arith::OrIOp::create(
                          b, loc,
                          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, re, zero),
                          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, im, zero)));
      }
      Node real = n;
      real.args = {std::make_shared<Node>(*n.args[0])};
      real.args[0]->dtype = realPart(from);
      return lowerScalar(b, loc, real, {re});
    }
    if (isComplex(to)) { // (x, 0)
      Node part = n;
      part.dtype = realPart(to);
      Value re = lowerScalar(b, loc, part, x);
      return complex::CreateOp::create(b, loc, type, re, scalarConstant(b, loc, realPart(to), 0.0));
    }
    if (to == DType::b8) // x != 0 (nan is true)
      return toBool(b, loc,
                    isFloat(from)
                        ? Value(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, x[0],
                                                      scalarConstant(b, loc, from, 0.0)))
                        : Value(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x[0],
                                                      scalarConstant(b, loc, from, 0))));
    const bool fromSigned = dtypeKind(from) == DTypeKind::Signed;
    if (isFloat(from) && isFloat(to))
      return dtypeSize(to) > dtypeSize(from) ? Value(arith::ExtFOp::create(b, loc, type, x[0]))
                                             : Value(arith::TruncFOp::create(b, loc, type, x[0]));
    if (isFloat(to))
      return fromSigned ? Value(arith::SIToFPOp::create(b, loc, type, x[0]))
                        : Value(arith::UIToFPOp::create(b, loc, type, x[0]));
    if (!isFloat(from)) { // between integers: NumPy's wraps when narrowing, as TruncI
      if (dtypeSize(to) == dtypeSize(from))
        return x[0];
      if (dtypeSize(to) < dtypeSize(from))
        return arith::TruncIOp::create(b, loc, type, x[0]);
      return fromSigned ? Value(arith::ExtSIOp::create(b, loc, type, x[0]))
                        : Value(arith::ExtUIOp::create(b, loc, type, x[0]));
    }
    return floatToInt(b, loc, x[0], from, to);
  }
};

struct NegateInt { // 0 - x (wraps, for unsigned integers too)
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &n, ArrayRef<Value> x) {
    return arith::SubIOp::create(b, loc, scalarConstant(b, loc, n.dtype, 0), x[0]);
  }
};

struct AbsInt { // max(x, 0 - x) (INT_MIN stays INT_MIN); unsigned and bool: x
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &n, ArrayRef<Value> x) {
    if (dtypeKind(n.dtype) != DTypeKind::Signed)
      return x[0];
    Value negated = NegateInt::lowerScalar(b, loc, n, x);
    return arith::MaxSIOp::create(b, loc, x[0], negated);
  }
};

struct MaxInt {
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &n, ArrayRef<Value> x) {
    return dtypeKind(n.dtype) == DTypeKind::Signed
               ? Value(arith::MaxSIOp::create(b, loc, x[0], x[1]))
               : Value(arith::MaxUIOp::create(b, loc, x[0], x[1]));
  }
};
struct MinInt {
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &n, ArrayRef<Value> x) {
    return dtypeKind(n.dtype) == DTypeKind::Signed
               ? Value(arith::MinSIOp::create(b, loc, x[0], x[1]))
               : Value(arith::MinUIOp::create(b, loc, x[0], x[1]));
  }
};

/// A divisor that never traps: 1 where b is 0 or where a is INT_MIN and b
/// is -1 (the caller selects NumPy's result there). `zero` says where b is 0.
Value safeDivisor(OpBuilder &b, Location loc, const Node &n, ArrayRef<Value> x, Value &zero) {
  Type type = x[0].getType();
  zero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x[1], intConstant(b, loc, type, 0));
  Value bad = zero;
  if (dtypeKind(n.dtype) == DTypeKind::Signed) {
    const unsigned bits = type.getIntOrFloatBitWidth();
    Value min =
        arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, APInt::getSignedMinValue(bits)));
    Value overflow = arith::AndIOp::create(
        b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x[0], min),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x[1],
                              intConstant(b, loc, type, -1)));
    bad = arith::OrIOp::create(b, loc, zero, overflow);
  }
  return arith::SelectOp::create(b, loc, bad, intConstant(b, loc, type, 1), x[1]);
}

/// a // b rounded toward minus infinity; 0 where b is 0; INT_MIN // -1 is
/// INT_MIN (a // 1), as NumPy's.
struct FloorDivInt {
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &n, ArrayRef<Value> x) {
    Value zero;
    Value d = safeDivisor(b, loc, n, x, zero);
    Value q = dtypeKind(n.dtype) == DTypeKind::Signed
                  ? Value(arith::FloorDivSIOp::create(b, loc, x[0], d))
                  : Value(arith::DivUIOp::create(b, loc, x[0], d));
    return arith::SelectOp::create(b, loc, zero, intConstant(b, loc, q.getType(), 0), q);
  }
};

/// a % b with the divisor's sign; 0 where b is 0, as NumPy's.
struct ModInt {
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &n, ArrayRef<Value> x) {
    Value zero;
    Value d = safeDivisor(b, loc, n, x, zero);
    Type type = x[0].getType();
    Value c0 = intConstant(b, loc, type, 0);
    Value r;
    if (dtypeKind(n.dtype) == DTypeKind::Signed) {
      r = arith::RemSIOp::create(b, loc, x[0], d);
      Value signsDiffer = arith::XOrIOp::create(
          b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, r, c0),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, d, c0));
      Value adjust = arith::AndIOp::create(
          b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, r, c0), signsDiffer);
      r = arith::SelectOp::create(b, loc, adjust, arith::AddIOp::create(b, loc, r, d), r);
    } else {
      r = arith::RemUIOp::create(b, loc, x[0], d);
    }
    return arith::SelectOp::create(b, loc, zero, c0, r);
  }
};

/// C's remainder (the dividend's sign); 0 where b is 0, as NumPy's np.fmod.
struct FmodInt {
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &n, ArrayRef<Value> x) {
    Value zero;
    Value d = safeDivisor(b, loc, n, x, zero);
    Value r = dtypeKind(n.dtype) == DTypeKind::Signed
                  ? Value(arith::RemSIOp::create(b, loc, x[0], d))
                  : Value(arith::RemUIOp::create(b, loc, x[0], d));
    return arith::SelectOp::create(b, loc, zero, intConstant(b, loc, r.getType(), 0), r);
  }
};

/// NumPy's npy_divmod for floats: mod = fmod(a, b); div = (a - mod) / b,
/// one less where mod's sign differs from b's; then floored, and rounded
/// when within 0.5; b == 0 gives a / b.
struct FloorDivFloat {
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &n, ArrayRef<Value> x) {
    using P = arith::CmpFPredicate;
    auto c = [&](double v) { return scalarConstant(b, loc, n.dtype, v); };
    Value mod = arith::RemFOp::create(b, loc, x[0], x[1]);
    Value div = arith::DivFOp::create(b, loc, arith::SubFOp::create(b, loc, x[0], mod), x[1]);
    Value signsDiffer =
        arith::XOrIOp::create(b, loc, arith::CmpFOp::create(b, loc, P::OLT, x[1], c(0)),
                              arith::CmpFOp::create(b, loc, P::OLT, mod, c(0)));
    Value adjust = arith::AndIOp::create(b, loc, arith::CmpFOp::create(b, loc, P::UNE, mod, c(0)),
                                         signsDiffer);
    div = arith::SelectOp::create(b, loc, adjust, arith::SubFOp::create(b, loc, div, c(1)), div);
    Value floordiv = math::FloorOp::create(b, loc, div);
    Value up =
        arith::CmpFOp::create(b, loc, P::OGT, arith::SubFOp::create(b, loc, div, floordiv), c(0.5));
    floordiv = arith::SelectOp::create(b, loc, up, arith::AddFOp::create(b, loc, floordiv, c(1)),
                                       floordiv);
    Value quotient = arith::DivFOp::create(b, loc, x[0], x[1]);
    Value divZero = arith::CmpFOp::create(b, loc, P::OEQ, div, c(0));
    Value signedZero = math::CopySignOp::create(b, loc, c(0), quotient);
    Value result = arith::SelectOp::create(b, loc, divZero, signedZero, floordiv);
    Value byZero = arith::CmpFOp::create(b, loc, P::OEQ, x[1], c(0));
    return arith::SelectOp::create(b, loc, byZero, quotient, result);
  }
};

/// NumPy's npy_remainder for floats: fmod, moved into the divisor's sign;
/// a zero takes the divisor's sign; b == 0 gives fmod's nan.
struct ModFloat {
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &n, ArrayRef<Value> x) {
    using P = arith::CmpFPredicate;
    auto c = [&](double v) { return scalarConstant(b, loc, n.dtype, v); };
    Value mod = arith::RemFOp::create(b, loc, x[0], x[1]);
    Value signsDiffer =
        arith::XOrIOp::create(b, loc, arith::CmpFOp::create(b, loc, P::OLT, x[1], c(0)),
                              arith::CmpFOp::create(b, loc, P::OLT, mod, c(0)));
    Value nonzero = arith::CmpFOp::create(b, loc, P::UNE, mod, c(0));
    Value adjust = arith::AndIOp::create(b, loc, nonzero, signsDiffer);
    Value moved =
        arith::SelectOp::create(b, loc, adjust, arith::AddFOp::create(b, loc, mod, x[1]), mod);
    Value zero = arith::CmpFOp::create(b, loc, P::OEQ, mod, c(0));
    Value result =
        arith::SelectOp::create(b, loc, zero, math::CopySignOp::create(b, loc, c(0), x[1]), moved);
    Value byZero = arith::CmpFOp::create(b, loc, P::OEQ, x[1], c(0));
    return arith::SelectOp::create(b, loc, byZero, mod, result);
  }
};

/// Whether the shift count x[1] is in [0, bits): as NumPy's, compared as unsigned.
Value shiftInRange(OpBuilder &b, Location loc, ArrayRef<Value> x) {
  Type type = x[0].getType();
  const unsigned bits = type.getIntOrFloatBitWidth();
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x[1],
                               intConstant(b, loc, type, bits));
}

struct ShiftLeft { // 0 for a count out of range
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &, ArrayRef<Value> x) {
    Type type = x[0].getType();
    Value ok = shiftInRange(b, loc, x);
    Value count = arith::SelectOp::create(b, loc, ok, x[1], intConstant(b, loc, type, 0));
    return arith::SelectOp::create(b, loc, ok, arith::ShLIOp::create(b, loc, x[0], count),
                                   intConstant(b, loc, type, 0));
  }
};

struct ShiftRight { // arithmetic for signed; a count out of range: the sign (-1 or 0)
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &n, ArrayRef<Value> x) {
    Type type = x[0].getType();
    const bool s = dtypeKind(n.dtype) == DTypeKind::Signed;
    Value ok = shiftInRange(b, loc, x);
    Value count = arith::SelectOp::create(b, loc, ok, x[1], intConstant(b, loc, type, 0));
    Value shifted = s ? Value(arith::ShRSIOp::create(b, loc, x[0], count))
                      : Value(arith::ShRUIOp::create(b, loc, x[0], count));
    Value c0 = intConstant(b, loc, type, 0);
    Value sign = s ? Value(arith::SelectOp::create(
                         b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x[0], c0),
                         intConstant(b, loc, type, -1), c0))
                   : c0;
    return arith::SelectOp::create(b, loc, ok, shifted, sign);
  }
};

struct InvertInt { // ~x; of a bool, not x
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &n, ArrayRef<Value> x) {
    return arith::XOrIOp::create(
        b, loc, x[0], intConstant(b, loc, x[0].getType(), n.dtype == DType::b8 ? 1 : -1));
  }
};

/// Integer power by squaring (math.ipowi); a negative exponent of a signed
/// type gives 1 for 1, +-1 for -1 and 0 otherwise, with no trap (NumPy raises
/// for those; the frontend refuses a negative scalar exponent as NumPy's does).
struct PowInt {
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &n, ArrayRef<Value> x) {
    Type type = x[0].getType();
    Value c0 = intConstant(b, loc, type, 0), c1 = intConstant(b, loc, type, 1);
    if (n.dtype == DType::b8) // True ** anything is True; False ** 0 is True
      return arith::OrIOp::create(
          b, loc, x[0],
          toBool(b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x[1], c0)));
    if (dtypeKind(n.dtype) != DTypeKind::Signed)
      return math::IPowIOp::create(b, loc, x[0], x[1]);
    Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x[1], c0);
    Value e = arith::SelectOp::create(b, loc, negative, c0, x[1]);
    Value power = math::IPowIOp::create(b, loc, x[0], e);
    Value minusOne = intConstant(b, loc, type, -1);
    Value odd = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                      arith::AndIOp::create(b, loc, x[1], c1), c0);
    Value ofMinusOne = arith::SelectOp::create(b, loc, odd, minusOne, c1);
    Value inverse = arith::SelectOp::create(
        b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x[0], c1), c1,
        arith::SelectOp::create(
            b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x[0], minusOne),
            ofMinusOne, c0));
    return arith::SelectOp::create(b, loc, negative, inverse, power);
  }
};

/// atan2(y, x), with C's values at y = x = 0 (+-0 or +-pi by the signs):
/// MLIR folds math.atan2 of two constant zeros to nan.
struct Atan2Float {
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &n, ArrayRef<Value> x) {
    using P = arith::CmpFPredicate;
    auto c = [&](double v) { return scalarConstant(b, loc, n.dtype, v); };
    Value zeros = arith::AndIOp::create(b, loc, arith::CmpFOp::create(b, loc, P::OEQ, x[0], c(0)),
                                        arith::CmpFOp::create(b, loc, P::OEQ, x[1], c(0)));
    Value negativeX =
        arith::CmpFOp::create(b, loc, P::OLT, math::CopySignOp::create(b, loc, c(1), x[1]), c(0));
    Value angle = arith::SelectOp::create(b, loc, negativeX, c(std::numbers::pi), c(0));
    Value special = math::CopySignOp::create(b, loc, angle, x[0]);
    return arith::SelectOp::create(b, loc, zeros, special,
                                   math::Atan2Op::create(b, loc, x[0], x[1]));
  }
};

/// A name as a template argument: ComplexCall<"exp">.
template <size_t N> struct FixedName {
  constexpr FixedName(const char (&s)[N]) { std::copy_n(s, N, name); } // NOLINT: implicit
  char name[N];
};

/// A complex function as NumPy computes it: a call of the runtime's
/// tinymlir_c<name>_<dtype>(re, im) (lib/runtime/Complex.cpp: C99's complex
/// functions, as NumPy's loops call them, or NumPy's own formulas), whose
/// result comes back as a pair of doubles in registers. MLIR's complex
/// lowerings differ from C99's at infinities and nan (exp(inf + nan i) is
/// inf + nan i, abs(inf + nan i) inf) and cancel in sinh for small arguments.
template <FixedName Name> struct ComplexCall {
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &, ArrayRef<Value> x) {
    auto type = cast<ComplexType>(x[0].getType());
    Type part = type.getElementType(), f64 = b.getF64Type();
    auto pair = LLVM::LLVMStructType::getLiteral(b.getContext(), {f64, f64});
    const std::string name =
        std::string("tinymlir_c") + Name.name + (part.isF32() ? "_complex64" : "_complex128");
    SmallVector<Value> operands; // re, im of each
    for (Value z : x) {
      operands.push_back(complex::ReOp::create(b, loc, z));
      operands.push_back(complex::ImOp::create(b, loc, z));
    }
    // declared by declareCallees: this body is not yet in the module
    Value r = func::CallOp::create(b, loc, name, TypeRange{pair}, operands).getResult(0);
    Value parts[2];
    for (int64_t i = 0; i < 2; ++i) {
      parts[i] = LLVM::ExtractValueOp::create(b, loc, r, ArrayRef<int64_t>{i});
      if (part.isF32()) // the float result, exactly
        parts[i] = arith::TruncFOp::create(b, loc, part, parts[i]);
    }
    return complex::CreateOp::create(b, loc, type, parts[0], parts[1]);
  }
};

/// a / b as NumPy's complex division (Smith's, scaled by the larger part of
/// b; by zero: each part of a over |0|, an inf or a nan), inlined.
struct ComplexDivide {
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &, ArrayRef<Value> x) {
    using P = arith::CmpFPredicate;
    Value ar = complex::ReOp::create(b, loc, x[0]), ai = complex::ImOp::create(b, loc, x[0]);
    Value br = complex::ReOp::create(b, loc, x[1]), bi = complex::ImOp::create(b, loc, x[1]);
    auto add = [&](Value u, Value v) { return arith::AddFOp::create(b, loc, u, v).getResult(); };
    auto sub = [&](Value u, Value v) { return arith::SubFOp::create(b, loc, u, v).getResult(); };
    auto mul = [&](Value u, Value v) { return arith::MulFOp::create(b, loc, u, v).getResult(); };
    auto div = [&](Value u, Value v) { return arith::DivFOp::create(b, loc, u, v).getResult(); };
    auto pick = [&](Value c, Value u, Value v) {
      return arith::SelectOp::create(b, loc, c, u, v).getResult();
    };
    Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(ar.getType(), 1.0));
    Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(ar.getType(), 0.0));
    Value absR = math::AbsFOp::create(b, loc, br), absI = math::AbsFOp::create(b, loc, bi);
    // |br| >= |bi|: rat = bi / br, scl = 1 / (br + bi rat)
    Value rat1 = div(bi, br), scl1 = div(one, add(br, mul(bi, rat1)));
    Value re1 = mul(add(ar, mul(ai, rat1)), scl1), im1 = mul(sub(ai, mul(ar, rat1)), scl1);
    // otherwise: rat = br / bi, scl = 1 / (bi + br rat)
    Value rat2 = div(br, bi), scl2 = div(one, add(bi, mul(br, rat2)));
    Value re2 = mul(add(mul(ar, rat2), ai), scl2), im2 = mul(sub(mul(ai, rat2), ar), scl2);
    Value byZero = arith::AndIOp::create(b, loc, arith::CmpFOp::create(b, loc, P::OEQ, absR, zero),
                                         arith::CmpFOp::create(b, loc, P::OEQ, absI, zero));
    Value first = arith::CmpFOp::create(b, loc, P::OGE, absR, absI);
    Value re = pick(byZero, div(ar, absR), pick(first, re1, re2));
    Value im = pick(byZero, div(ai, absR), pick(first, im1, im2));
    return complex::CreateOp::create(b, loc, x[0].getType(), re, im);
  }
};

/// A C library function of floats (hypot: no MLIR op), as NumPy's loops
/// call it: `name` for f64, `name`f for f32, declared by declareCallees.
template <FixedName Name> struct LibmCall {
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &, ArrayRef<Value> x) {
    Type type = x[0].getType();
    const std::string name = std::string(Name.name) + (type.isF32() ? "f" : "");
    return func::CallOp::create(b, loc, name, TypeRange{type}, ValueRange(x)).getResult(0);
  }
};

/// NumPy's npy_logaddexp (log(e^x + e^y)) and npy_logaddexp2 (base 2): x +
/// log(2) (or + 1) where x == y, including equal infinities; else the larger
/// plus log1p(exp(-|x - y|)) (log2 of 1 + 2^-|x - y|); nan where x - y is.
template <bool base2> struct LogAddExp {
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &, ArrayRef<Value> x) {
    using P = arith::CmpFPredicate;
    Type type = x[0].getType();
    auto c = [&](double v) { return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, v)); };
    Value d = arith::SubFOp::create(b, loc, x[0], x[1]);
    Value larger =
        arith::SelectOp::create(b, loc, arith::CmpFOp::create(b, loc, P::OGT, d, c(0)), x[0], x[1]);
    Value negAbs = arith::NegFOp::create(b, loc, math::AbsFOp::create(b, loc, d));
    Value tail =
        base2 ? Value(arith::MulFOp::create(
                    b, loc, math::Log1pOp::create(b, loc, math::Exp2Op::create(b, loc, negAbs)),
                    c(std::numbers::log2e)))
              : Value(math::Log1pOp::create(b, loc, math::ExpOp::create(b, loc, negAbs)));
    Value result = arith::AddFOp::create(b, loc, larger, tail);
    Value same = arith::AddFOp::create(b, loc, x[0], c(base2 ? 1.0 : std::numbers::ln2));
    Value nan = arith::CmpFOp::create(b, loc, P::UNO, d, d);
    return arith::SelectOp::create(b, loc, arith::CmpFOp::create(b, loc, P::OEQ, x[0], x[1]), same,
                                   arith::SelectOp::create(b, loc, nan, d, result));
  }
};

/// |z|, MLIR's (inlined, vectorized), with C99's inf where either part is
/// infinite, even beside a nan (hypot's rule, which NumPy's cabs follows).
struct ComplexAbs {
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &, ArrayRef<Value> x) {
    Value magnitude = complex::AbsOp::create(b, loc, x[0]);
    Type part = magnitude.getType();
    Value inf = arith::ConstantOp::create(
        b, loc, b.getFloatAttr(part, std::numeric_limits<double>::infinity()));
    auto infinite = [&](Value v) {
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                   math::AbsFOp::create(b, loc, v), inf);
    };
    Value either = arith::OrIOp::create(b, loc, infinite(complex::ReOp::create(b, loc, x[0])),
                                        infinite(complex::ImOp::create(b, loc, x[0])));
    return arith::SelectOp::create(b, loc, either, inf, magnitude);
  }
};

struct MakeComplex { // the complex number of two parts
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &n, ArrayRef<Value> x) {
    return complex::CreateOp::create(b, loc, elementType(b, n.dtype), x[0], x[1]);
  }
};

struct ZeroScalar { // np.imag of a real value
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &n, ArrayRef<Value>) {
    return scalarConstant(b, loc, n.dtype, 0.0);
  }
};

struct AngleReal { // arctan2(0, x): pi for negative values and -0
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &n, ArrayRef<Value> x) {
    return math::Atan2Op::create(b, loc, scalarConstant(b, loc, n.dtype, 0.0), x[0]);
  }
};

struct BitcastScalar { // the same bits as the node's dtype
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &n, ArrayRef<Value> x) {
    return arith::BitcastOp::create(b, loc, elementType(b, n.dtype), x[0]);
  }
};

struct Identity { // floor, ceil and trunc of an integer
  static Value lowerScalar(OpBuilder &, Location, const Node &, ArrayRef<Value> x) { return x[0]; }
};

/// x > 0 ? 1 : x < 0 ? -1 : x + 0 (the + 0 makes -0 a +0 and keeps nan).
struct ReciprocalFloat { // 1 / x
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &n, ArrayRef<Value> x) {
    return arith::DivFOp::create(b, loc, scalarConstant(b, loc, n.dtype, 1.0), x[0]);
  }
};

struct SignFloat {
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &n, ArrayRef<Value> x) {
    Value zero = scalarConstant(b, loc, n.dtype, 0.0);
    Value positive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x[0], zero);
    Value negative = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x[0], zero);
    Value rest = arith::SelectOp::create(b, loc, negative, scalarConstant(b, loc, n.dtype, -1.0),
                                         arith::AddFOp::create(b, loc, x[0], zero));
    return arith::SelectOp::create(b, loc, positive, scalarConstant(b, loc, n.dtype, 1.0), rest);
  }
};

struct SignInt { // x > 0 ? 1 : x < 0 ? -1 : 0 (unsigned: x != 0)
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &n, ArrayRef<Value> x) {
    Value zero = scalarConstant(b, loc, n.dtype, 0);
    const bool s = dtypeKind(n.dtype) == DTypeKind::Signed;
    Value positive = arith::CmpIOp::create(
        b, loc, s ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::ne, x[0], zero);
    Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x[0], zero);
    Value rest = s ? Value(arith::SelectOp::create(b, loc, negative,
                                                   scalarConstant(b, loc, n.dtype, -1), zero))
                   : zero;
    return arith::SelectOp::create(b, loc, positive, scalarConstant(b, loc, n.dtype, 1), rest);
  }
};

/// where: x[1] where the condition x[0] (a bool) is nonzero, else x[2].
struct SelectScalar {
  static Value lowerScalar(OpBuilder &b, Location loc, const Node &, ArrayRef<Value> x) {
    Value holds = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x[0],
                                        scalarConstant(b, loc, DType::b8, 0));
    return arith::SelectOp::create(b, loc, holds, x[1], x[2]);
  }
};

/// The int32 lowering of an op whose int32 operands are promoted or rejected
/// by the frontend: never reached.
struct NotLowered {};

/// Builds ops.def's `Lowering` for an op of `kind`: a lowering function above,
/// or the MLIR op of that name on the operands.
template <OpKind kind, class Lowering>
Value lower(OpBuilder &b, Location loc, const Node &n, ArrayRef<Value> x) {
  if constexpr (std::is_same_v<Lowering, NotLowered>)
    throw Error(std::string("[build] '") + opName(n.op) + "' has no lowering for " +
                dtypeName(n.dtype) + " operands");
  else if constexpr (requires { Lowering::lowerScalar(b, loc, n, x); })
    return Lowering::lowerScalar(b, loc, n, x);
  else if constexpr (kind == OpKind::Unary)
    return Lowering::create(b, loc, x[0]);
  else
    return Lowering::create(b, loc, x[0], x[1]);
}

} // namespace

Value scalarOp(OpBuilder &b, Location loc, const Node &n, ArrayRef<Value> x, bool widened) {
  const OpKind kind = opInfo(n.op).kind;
  const DType operand = widened ? DType::f32 : n.args[kind == OpKind::Select ? 1 : 0]->dtype;
  if (operand == DType::f16 && (kind == OpKind::Unary || kind == OpKind::Binary)) {
    // As NumPy's float16 loops: each operation in float32, rounded once.
    Node wide = n;
    wide.dtype = DType::f32;
    SmallVector<Value> extended;
    for (Value v : x)
      extended.push_back(arith::ExtFOp::create(b, loc, b.getF32Type(), v));
    Value r = scalarOp(b, loc, wide, extended, /*widened=*/true);
    return arith::TruncFOp::create(b, loc, b.getF16Type(), r);
  }
  const bool c = isComplex(operand), f = isFloat(operand);
  switch (n.op) {
#define TINYMLIR_OP(Name, ...)                                                                     \
  case Op::Name:                                                                                   \
    break;
#define TINYMLIR_ELEMENTWISE_OP(Name, spelling, Kind, Ints, FloatLowering, IntLowering,            \
                                ComplexLowering, Function)                                         \
  case Op::Name:                                                                                   \
    return c   ? lower<OpKind::Kind, ComplexLowering>(b, loc, n, x)                                \
           : f ? lower<OpKind::Kind, FloatLowering>(b, loc, n, x)                                  \
               : lower<OpKind::Kind, IntLowering>(b, loc, n, x);
#include <tinymlir/ops.def>
  }
  throw Error(std::string("[build] '") + opName(n.op) + "' is not elementwise");
}

} // namespace tinymlir::detail
