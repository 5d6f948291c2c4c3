// Graph -> MLIR: linalg on tensors inside a function of memrefs.
//
//   func.func @kernel(%in: memref<...>, ..., %out: memref<...>) {llvm.emit_c_interface}
//     %t = bufferization.to_tensor %in restrict
//     ... linalg.generic / linalg.reduce / linalg.matmul ... on tensors
//     bufferization.materialize_in_destination %r in restrict writable %out
//
// A donated input is read from %out instead (bufferization.to_tensor %out
// restrict writable), so that an update of it bufferizes in place.
#include "builder/MLIRGen.h"

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Bufferization/IR/Bufferization.h>
#include <mlir/Dialect/Complex/IR/Complex.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Dialect/Linalg/IR/Linalg.h>
#include <mlir/Dialect/Math/IR/Math.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/Dialect/Tensor/IR/Tensor.h>
#include <mlir/Dialect/Utils/ReshapeOpsUtils.h>
#include <mlir/IR/Builders.h>
#include <mlir/IR/BuiltinTypes.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>
#include <optional>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace tinymlir::detail {
namespace {

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

/// A constant of `dtype`: a complex one's parts are (value, imag). Integers
/// given as doubles (the lowerings' own constants; a Scalar node's exact
/// value goes through scalarValue) saturate, never UB; uint64 values up to
/// 2^64 keep their bits.
Value scalarConstant(OpBuilder &b, Location loc, DType dtype, double value, double imag = 0) {
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

/// An integer constant of the width of `type` (all ones for -1).
Value intConstant(OpBuilder &b, Location loc, Type type, int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, v));
}

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

/// Private declarations of the runtime functions that calls name without one
/// (complex math, row kernels, index errors: made inside bodies not yet in
/// the module), typed as called.
void declareCallees(ModuleOp module) {
  OpBuilder b(module.getContext());
  b.setInsertionPointToStart(module.getBody());
  module.walk([&](func::CallOp call) {
    if (module.lookupSymbol(call.getCallee()))
      return;
    auto f = func::FuncOp::create(b, call.getLoc(), call.getCallee(), call.getCalleeType());
    f.setPrivate();
  });
}

class ModuleBuilder {
public:
  ModuleBuilder(MLIRContext &context) : context_(context), b_(&context), loc_(b_.getUnknownLoc()) {}

  /// Updates: slice updates, emitted by emitInOrder; Large: thousands of
  /// nodes (an unrolled loop), whose bufferization analysis would grow
  /// superlinearly. Both are bufferized without analysis
  /// (kBufferizeStraightLinePipeline), unless an index_put's loop carries a
  /// tensor through a region (Small: bufferized as usual).
  enum class GraphKind { Small, Updates, Large };
  static constexpr size_t kLargeGraph = 2000;
  static GraphKind classify(const NodePtr &root) {
    bool updates = false;
    std::vector<const Node *> stack{root.get()};
    std::unordered_map<const Node *, bool> seen;
    while (!stack.empty()) {
      const Node *n = stack.back();
      stack.pop_back();
      if (seen[n])
        continue;
      seen[n] = true;
      if (n->op == Op::IndexPut)
        return GraphKind::Small;
      updates |= n->op == Op::SliceUpdate;
      for (const NodePtr &a : n->args)
        stack.push_back(a.get());
    }
    return updates                     ? GraphKind::Updates
           : seen.size() > kLargeGraph ? GraphKind::Large
                                       : GraphKind::Small;
  }

  BuiltModule build(const std::vector<NodePtr> &results, const std::vector<NodePtr> &args,
                    const std::vector<int> &donated) {
    if (results.empty() || donated.size() != results.size())
      throw Error("[build] internal: give one donation (or -1) per result");
    // The root: every result is one of its arguments, read until the end.
    const NodePtr root = makeNode(Op::Results, {}, results[0]->dtype, results);
    collectConstants(root);
    BuiltModule out;
    out.module = ModuleOp::create(loc_);
    b_.setInsertionPointToEnd(out.module->getBody());

    SmallVector<Type> argTypes;
    for (const NodePtr &a : args)
      argTypes.push_back(memrefType(*a));
    for (const NodePtr &c : constants_)
      argTypes.push_back(memrefType(*c));
    for (const NodePtr &r : results)
      argTypes.push_back(memrefType(*r));
    auto func = func::FuncOp::create(b_, loc_, kKernelName, b_.getFunctionType(argTypes, {}));
    func->setAttr("llvm.emit_c_interface", b_.getUnitAttr());
    func->setAttr(kResultsAttr, b_.getI64IntegerAttr(static_cast<int64_t>(results.size())));
    Block *entry = func.addEntryBlock();
    b_.setInsertionPointToStart(entry);

    const size_t firstOutput = args.size() + constants_.size();
    auto output = [&](size_t k) { return entry->getArgument(firstOutput + k); };
    std::vector<int> outputOf(args.size(), -1); // the output each input is donated to
    for (size_t k = 0; k < results.size(); ++k) {
      const int i = donated[k];
      if (i < 0)
        continue;
      if (static_cast<size_t>(i) >= args.size() || args[i]->shape != results[k]->shape ||
          args[i]->dtype != results[k]->dtype || outputOf[i] >= 0)
        throw Error("[build] the donated input " + std::to_string(i) +
                    " must have its result's shape and dtype, and be donated once");
      outputOf[i] = static_cast<int>(k);
    }
    const GraphKind kind = classify(root);
    out.straightLine = kind != GraphKind::Small;
    scalarMode_ = out.straightLine;
    for (size_t i = 0; i < args.size(); ++i)
      if (outputOf[i] < 0)
        bindInput(args[i], entry->getArgument(i));
      else if (kind == GraphKind::Updates) {
        // Its versions live in the output buffer: the first of its updates
        // writes there (emitUpdate), with no copy of the array.
        chainOf_[args[i].get()] = output(outputOf[i]);
        holder_[output(outputOf[i])] = args[i].get();
      } else
        values_[args[i].get()] = bufferization::ToTensorOp::create(
            b_, loc_, tensorType(*args[i]), output(outputOf[i]), /*restrict=*/true,
            /*writable=*/true);
    for (size_t i = 0; i < constants_.size(); ++i) {
      bindInput(constants_[i], entry->getArgument(args.size() + i));
      out.constants.push_back(constants_[i]->constant);
    }
    // Several results bufferized with the analysis: each output as a tensor,
    // defined at the top, where empty-tensor elimination can use it (below).
    // So is a donated input's result: written into the input's tensor, so
    // that the analysis orders the write after the input's last read.
    const bool tensorDestinations =
        !out.straightLine && (results.size() > 1 || std::any_of(donated.begin(), donated.end(),
                                                                [](int i) { return i >= 0; }));
    std::vector<Value> dests(results.size());
    for (size_t k = 0; tensorDestinations && k < results.size(); ++k)
      dests[k] = donated[k] >= 0
                     ? values_[args[donated[k]].get()]
                     : Value(bufferization::ToTensorOp::create(b_, loc_, tensorType(*results[k]),
                                                               output(k), /*restrict=*/true,
                                                               /*writable=*/true));
    // A concatenated result of a straight-line graph: each part is written
    // into its box of the output. Without the bufferization analysis, a
    // chain of insert_slices would copy the whole destination at each part.
    auto partsInPlace = [&](size_t k) {
      return out.straightLine && results[k]->op == Op::Concat && donated[k] < 0;
    };
    if (kind == GraphKind::Updates) {
      std::unordered_set<const Node *> skip{root.get()};
      for (size_t k = 0; k < results.size(); ++k)
        if (partsInPlace(k))
          skip.insert(results[k].get());
      emitInOrder(root, skip);
    }
    // Several results bufferized with the analysis: every result is computed
    // first, then written into its output as a tensor (to_tensor of the
    // output, or the donated input's), so that the analysis sees every write
    // into an output's buffer: empty-tensor elimination makes producers write
    // there directly, and a value one output's producers wrote in place may
    // be another output. They are written in creation order, so that such a
    // value (created before what was computed from it) is written out before
    // its buffer is overwritten. Only then is each copied into its memref, a
    // copy onto itself where it was computed in place. (Written straight into
    // memrefs, which the analysis does not track, an output's write could
    // clobber what a later output still reads.)
    if (tensorDestinations) {
      std::vector<Value> values;
      for (const NodePtr &r : results)
        values.push_back(emit(r));
      std::vector<size_t> order(results.size());
      std::iota(order.begin(), order.end(), size_t{0});
      std::sort(order.begin(), order.end(),
                [&](size_t x, size_t y) { return results[x]->seq < results[y]->seq; });
      std::vector<Value> written(results.size());
      for (size_t k : order)
        written[k] =
            bufferization::MaterializeInDestinationOp::create(b_, loc_, values[k], dests[k])
                .getResult();
      for (size_t k = 0; k < results.size(); ++k)
        bufferization::MaterializeInDestinationOp::create(b_, loc_, TypeRange{}, written[k],
                                                          output(k), /*restrict=*/true,
                                                          /*writable=*/true);
      func::ReturnOp::create(b_, loc_);
      return out;
    }
    for (size_t k = 0; k < results.size(); ++k) {
      const NodePtr &result = results[k];
      if (partsInPlace(k)) {
        for (const auto &[part, box] : concatParts(*result)) {
          Value view =
              memref::SubViewOp::create(b_, loc_, output(k), box.offsets, box.sizes, box.strides);
          bufferization::MaterializeInDestinationOp::create(b_, loc_, TypeRange{}, emit(part), view,
                                                            /*restrict=*/true,
                                                            /*writable=*/true);
        }
      } else if (auto it = chainOf_.find(result.get()); it != chainOf_.end() &&
                                                        it->second == output(k) &&
                                                        holder_[output(k)] == result.get()) {
        // The result is the donated input's last version: already in place.
      } else {
        bufferization::MaterializeInDestinationOp::create(b_, loc_, TypeRange{}, emit(result),
                                                          output(k), /*restrict=*/true,
                                                          /*writable=*/true);
      }
    }
    func::ReturnOp::create(b_, loc_);
    return out;
  }

  /// A kernel of more than kVectorizedDots dot loops (an unrolled Python loop
  /// over np.dot of slices, as a Cholesky's 4,950) keeps them scalar: LLVM's
  /// loop vectorizer spends about 0.5 ms on each (a third of a 100x100
  /// Cholesky's LLVM time), more than vectorizing saves on short dots of a
  /// kernel called a few thousand times.
  void scalarDotsInLongKernels() {
    if (dotLoops_.size() > kVectorizedDots)
      for (scf::ForOp loop : dotLoops_)
        annotateDot(loop, /*vectorize=*/false);
  }

private:
  Type elementType(DType dtype) { return tinymlir::detail::elementType(b_, dtype); }
  RankedTensorType tensorType(const Node &n) {
    return RankedTensorType::get(n.shape, elementType(n.dtype));
  }
  MemRefType memrefType(const Node &n) { return MemRefType::get(n.shape, elementType(n.dtype)); }

  /// Captured constants in first-use order; the same array view is one argument.
  void collectConstants(const NodePtr &root) {
    std::vector<const Node *> stack{root.get()};
    std::unordered_map<const Node *, bool> seen;
    std::vector<NodePtr> order;
    // Depth-first, children in order, so argument order is deterministic.
    std::function<void(const NodePtr &)> visit = [&](const NodePtr &n) {
      if (seen[n.get()])
        return;
      seen[n.get()] = true;
      for (const NodePtr &a : n->args)
        visit(a);
      if (n->op == Op::Constant)
        order.push_back(n);
    };
    visit(root);
    // A view: its data, dtype, shape and strides (one lookup per constant:
    // unrolled loops capture thousands).
    auto viewKey = [](const Array &x) {
      std::string key;
      auto add = [&](int64_t v) { key.append(reinterpret_cast<const char *>(&v), sizeof v); };
      add(reinterpret_cast<intptr_t>(x.data()));
      add(static_cast<int64_t>(x.dtype()));
      for (int64_t d : x.shape())
        add(d);
      add(-1);
      for (int64_t d : x.strides())
        add(d);
      return key;
    };
    std::unordered_map<std::string, const Node *> byView;
    for (const NodePtr &c : constants_)
      byView.emplace(viewKey(c->constant), c.get());
    for (const NodePtr &c : order) {
      auto [it, fresh] = byView.emplace(viewKey(c->constant), c.get());
      if (fresh)
        constants_.push_back(c);
      else
        aliases_[c.get()] = it->second;
    }
  }

  void bindInput(const NodePtr &n, Value memref) {
    values_[n.get()] = bufferization::ToTensorOp::create(b_, loc_, tensorType(*n), memref,
                                                         /*restrict=*/true, /*writable=*/false);
  }

  Value emptyLike(const Node &n) {
    return tensor::EmptyOp::create(b_, loc_, n.shape, elementType(n.dtype));
  }

  Value scalarConstant(OpBuilder &b, DType dtype, double value, double imag = 0) {
    return tinymlir::detail::scalarConstant(b, loc_, dtype, value, imag);
  }

  /// A Scalar node's value as a constant: integers with all their bits.
  Value scalarValue(OpBuilder &b, const Node &n) {
    if (isInteger(n.dtype))
      return intConstant(b, loc_, tinymlir::detail::elementType(b, n.dtype), n.integer);
    return scalarConstant(b, n.dtype, n.scalar, n.imag);
  }

  Value filled(const Node &n, Value init) {
    return linalg::FillOp::create(b_, loc_, ValueRange{init}, ValueRange{emptyLike(n)})
        .getResult(0);
  }
  Value filled(const Node &n, double value, double imag = 0) {
    return filled(n, scalarConstant(b_, n.dtype, value, imag));
  }

  Value emit(const NodePtr &n) {
    const Node *key = n.get();
    if (auto alias = aliases_.find(key); alias != aliases_.end())
      key = alias->second;
    if (auto it = values_.find(key); it != values_.end())
      return it->second;
    if (chainOf_.contains(key))
      return readVersion(*n);
    Value v = isScalarNode(*n) ? Value(tensor::FromElementsOp::create(b_, loc_, tensorType(*n),
                                                                      ValueRange{scalarOf(n)}))
                               : emitNew(*n);
    values_[key] = v;
    return v;
  }

  // --- Single elements of straight-line graphs: SSA scalars --------------------
  //
  // Unrolled loops of element updates (A[i, j] -= np.dot(A[i, :j], A[j, :j]);
  // A[i, j] /= A[j, j]) and scalar loops (trace += np.tanh(a[i, i])) are mostly
  // single elements. As tensors each would be a buffer of one element, with
  // its allocation and copies in and out (about 500 LLVM operations a step of
  // a Cholesky); as SSA scalars they are a load, the arithmetic and a store.
  // In a graph of updates every node is emitted at its place in program order
  // (emitInOrder), so a load of an element of an array's buffer reads the
  // version the buffer holds there, and never needs a copy.

  /// Most elements of a dot product computed by a loop of scalars (dotOf).
  static constexpr int64_t kScalarDotMax = 4096;

  /// Whether `n` is computed as an SSA scalar (scalarOf): one element, in a
  /// straight-line graph, and elementwise, a slice, a reshape, a literal, or
  /// a short dot product of vectors of its own (float or integer) dtype.
  bool isScalarNode(const Node &n) const {
    if (!scalarMode_ || numElements(n.shape) != 1)
      return false;
    if (n.op == Op::MatMul) {
      const Node &a = *n.args[0], &b = *n.args[1];
      // a row by a column, of any rank: each operand is its k elements
      const int64_t k = a.shape.empty() ? 1 : a.shape.back();
      return numElements(a.shape) == k && numElements(b.shape) == k && k <= kScalarDotMax &&
             a.dtype == n.dtype && b.dtype == n.dtype &&
             (n.dtype == DType::f32 || n.dtype == DType::f64 || isInteger(n.dtype));
    }
    switch (opInfo(n.op).kind) {
    case OpKind::Unary:
    case OpKind::Binary:
    case OpKind::Compare:
    case OpKind::Select:
    case OpKind::Convert:
      return true;
    default:
      return n.op == Op::Slice || n.op == Op::Reshape || n.op == Op::Scalar;
    }
  }

  /// The element of a one-element node, as an SSA scalar of its element type:
  /// computed (isScalarNode), or extracted from its tensor.
  Value scalarOf(const NodePtr &n) {
    if (auto it = scalars_.find(n.get()); it != scalars_.end())
      return it->second;
    Value s;
    if (!isScalarNode(*n)) {
      SmallVector<Value> zeros(n->shape.size(), arith::ConstantIndexOp::create(b_, loc_, 0));
      s = tensor::ExtractOp::create(b_, loc_, emit(n), zeros);
    } else if (n->op == Op::Scalar) {
      s = scalarValue(b_, *n);
    } else if (n->op == Op::Reshape) {
      s = scalarOf(n->args[0]);
    } else if (n->op == Op::MatMul) {
      s = dotOf(*n);
    } else if (n->op == Op::Slice) {
      const Node *v = n->args[0].get();
      SmallVector<Value> at = boxOrigin(*n);
      if (chainOf_.contains(v) && !values_.contains(v)) {
        // The element of the buffer, read now: the buffer holds v here.
        Value buffer = chainOf_[v];
        if (holder_[buffer] != v)
          throw Error("[build] internal: an element of an updated array is read after the "
                      "write that replaced it");
        s = memref::LoadOp::create(b_, loc_, buffer, at);
      } else if (isScalarNode(*v)) {
        s = scalarOf(n->args[0]);
      } else {
        s = tensor::ExtractOp::create(b_, loc_, emit(n->args[0]), at);
      }
    } else {
      SmallVector<Value> operands;
      for (const NodePtr &a : n->args)
        operands.push_back(scalarOf(a));
      s = scalarOp(b_, *n, operands);
    }
    scalars_[n.get()] = s;
    return s;
  }

  /// The node holding the elements of vector `n` along one axis, seen through
  /// reshapes that only add or drop unit axes (A[i, :j] read as a (1, j)
  /// slice of the buffer, no copy), and that axis.
  std::pair<NodePtr, size_t> vectorOf(NodePtr n) {
    auto nonUnit = [](const Shape &shape) {
      return std::count_if(shape.begin(), shape.end(), [](int64_t d) { return d != 1; });
    };
    while (n->op == Op::Reshape && nonUnit(n->args[0]->shape) <= 1)
      n = n->args[0];
    size_t axis = 0;
    for (size_t d = 0; d < n->shape.size(); ++d)
      if (n->shape[d] != 1)
        axis = d;
    return {n, axis};
  }

  /// np.dot of two short vectors (a row by a column): a loop carrying the sum
  /// in a register, its reads at this point of the program (the operands'
  /// slices in place).
  Value dotOf(const Node &n) {
    auto [x, xAxis] = vectorOf(n.args[0]);
    auto [y, yAxis] = vectorOf(n.args[1]);
    Value a = emit(x), b = emit(y);
    const bool f = isFloat(n.dtype);
    Type type = elementType(n.dtype);
    Value zero = f ? Value(arith::ConstantOp::create(b_, loc_, b_.getFloatAttr(type, 0.0)))
                   : Value(arith::ConstantIntOp::create(b_, loc_, type, 0));
    Value c0 = arith::ConstantIndexOp::create(b_, loc_, 0);
    Value k = arith::ConstantIndexOp::create(b_, loc_, numElements(n.args[0]->shape));
    Value c1 = arith::ConstantIndexOp::create(b_, loc_, 1);
    auto loop = scf::ForOp::create(
        b_, loc_, c0, k, c1, ValueRange{zero},
        [&](OpBuilder &lb, Location loc, Value i, ValueRange acc) {
          auto element = [&](Value t, const Node &v, size_t axis) {
            SmallVector<Value> at(v.shape.size(), c0);
            if (!at.empty())
              at[axis] = i;
            return tensor::ExtractOp::create(lb, loc, t, at).getResult();
          };
          Value ea = element(a, *x, xAxis), eb = element(b, *y, yAxis);
          Value sum;
          if (f) {
            auto reassoc = arith::FastMathFlags::reassoc;
            sum = arith::AddFOp::create(lb, loc, acc[0], arith::MulFOp::create(lb, loc, ea, eb),
                                        reassoc);
          } else {
            sum = arith::AddIOp::create(lb, loc, acc[0], arith::MulIOp::create(lb, loc, ea, eb));
          }
          scf::YieldOp::create(lb, loc, sum);
        });
    // Kept a loop (vectorized, with the sum reassociated): unrolled, the
    // thousands of dot products of an unrolled loop, each of its own length,
    // would make LLVM's time grow with their lengths.
    dotLoops_.push_back(loop);
    annotateDot(loop, /*vectorize=*/true);
    // Dot loops of one length have the same operands once canonicalize has
    // merged their constants, and CSE's hash does not look into regions: it
    // compared each new loop with every earlier one of its length (a 112x112
    // Cholesky's CSE took 9x the time of a 56x56's for 4x the steps). The ids
    // of the vectors read keep different loops apart, and equal ones equal.
    loop->setAttr("tinymlir.dot", b_.getDenseI64ArrayAttr({idOf(a), idOf(b)}));
    return loop.getResult(0);
  }

  /// A number for `v`, the same each time the module is built: values of
  /// equal operations on equal operands (the same slice of the same tensor,
  /// traced twice) share one, numbered in the order first seen. Only a hash:
  /// CSE still compares the loops themselves.
  int64_t idOf(Value v) {
    return valueIds_.try_emplace(keyOf(v, 0), static_cast<int64_t>(valueIds_.size())).first->second;
  }
  size_t keyOf(Value v, int depth) {
    if (auto it = valueKeys_.find(v); it != valueKeys_.end())
      return it->second;
    Operation *def = v.getDefiningOp();
    llvm::hash_code key = hash_value(v); // arguments, deep chains and loops: themselves
    if (def && depth < 8 && def->getNumRegions() == 0)
      key = llvm::hash_combine(
          OperationEquivalence::computeHash(
              def, [&](Value operand) { return llvm::hash_code(keyOf(operand, depth + 1)); },
              OperationEquivalence::ignoreHashValue, OperationEquivalence::IgnoreLocations),
          cast<OpResult>(v).getResultNumber());
    return valueKeys_[v] = static_cast<size_t>(key);
  }

  /// A dot loop's LLVM loop annotation: never unrolled; vectorized or not.
  void annotateDot(scf::ForOp loop, bool vectorize) {
    MLIRContext *ctx = &context_;
    auto unroll = LLVM::LoopUnrollAttr::get(ctx, b_.getBoolAttr(true), {}, {}, {}, {}, {}, {});
    LLVM::LoopVectorizeAttr scalar;
    if (!vectorize)
      scalar = LLVM::LoopVectorizeAttr::get(ctx, b_.getBoolAttr(true), {}, {}, {}, {}, {}, {});
    loop->setAttr("llvm.loop_annotation",
                  LLVM::LoopAnnotationAttr::get(ctx, {}, scalar, {}, unroll, {}, {}, {}, {}, {}, {},
                                                {}, {}, {}, {}, {}));
  }

  // --- Slice updates: chains of writes into one buffer -------------------------
  //
  // One-shot bufferization's analysis of a chain of k insert_slices into one
  // tensor grows superlinearly in k (a 10x10 Cholesky's 155 updates: 2 s), so
  // an array's versions are not tensors here. The nodes are emitted in
  // creation order (the trace's program order, in which every read of a
  // version comes before the write that replaces it). The first update of an
  // array copies it into a buffer of its own; each update writes its box
  // there (a subview: O(box)). A read of a version reads the buffer itself
  // when every use of what it reads is done before the next write into the
  // buffer (liveEnd_); otherwise it copies what it reads (a slice: O(slice))
  // while the buffer holds that version. A version still read after the next
  // write is copied whole first.

  /// Emits the graph under `root` in program order, but for the nodes in
  /// `skip` (the root, and results written part by part).
  void emitInOrder(const NodePtr &root, const std::unordered_set<const Node *> &skip) {
    std::vector<const Node *> order;
    std::unordered_map<const Node *, NodePtr> owner;
    std::vector<const Node *> stack{root.get()};
    owner[root.get()] = root;
    while (!stack.empty()) {
      const Node *n = stack.back();
      stack.pop_back();
      order.push_back(n);
      for (const NodePtr &a : n->args) {
        consumers_[a.get()].push_back(n);
        if (owner.emplace(a.get(), a).second)
          stack.push_back(a.get());
      }
    }
    std::sort(order.begin(), order.end(),
              [](const Node *a, const Node *b) { return a->seq < b->seq; });
    // Each version's successor: the first update (in program order) that writes over it.
    for (const Node *n : order)
      if (n->op == Op::SliceUpdate) {
        const Node *base = n->args[0].get();
        if (!successor_.contains(base) || successor_[base]->seq > n->seq)
          successor_[base] = n;
      }
    // How long each value is read (readsUntil of its consumers). Consumers
    // come later in `order`, so one backward pass suffices.
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const Node *n = *it;
      auto readers = consumers_.find(n);
      uint64_t end = 0;
      if (n == root.get() || readers == consumers_.end())
        end = std::numeric_limits<uint64_t>::max();
      else
        for (const Node *r : readers->second)
          end = std::max(end, readsUntil(*r));
      liveEnd_[n] = end;
    }
    for (const Node *n : order) {
      if (n->op == Op::SliceUpdate)
        emitUpdate(*n);
      else if (skip.contains(n) || chainOf_.contains(n))
        continue;
      else if (isScalarNode(*n))
        scalarOf(owner[n]); // reads its elements here, in program order
      else
        emit(owner[n]);
    }
  }

  MemRefType bufferType(const Node &n) { return MemRefType::get(n.shape, elementType(n.dtype)); }

  /// The strided box of a Slice (of its shape) or a SliceUpdate (of its
  /// value's shape): axes holds the offsets, then the steps where one is not 1.
  struct Box {
    SmallVector<OpFoldResult> offsets, sizes, strides;
  };
  Box boxOf(const Node &n, const Shape &sizes) {
    Box box;
    const size_t rank = sizes.size();
    const auto &traced = tracedOffsets(n);
    for (size_t i = 0; i < rank; ++i) {
      box.offsets.push_back(traced[i] ? OpFoldResult(traced[i]) : b_.getIndexAttr(n.axes[i]));
      box.sizes.push_back(b_.getIndexAttr(sizes[i]));
      box.strides.push_back(b_.getIndexAttr(sliceStep(n, rank, i)));
    }
    return box;
  }

  /// The first element of a Slice's or SliceUpdate's box (its offsets: the
  /// first `rank` of axes), as index values: a one-element box's position.
  SmallVector<Value> boxOrigin(const Node &n) {
    SmallVector<Value> at;
    const auto &traced = tracedOffsets(n);
    for (size_t i = 0; i < n.shape.size(); ++i)
      at.push_back(traced[i] ? traced[i] : arith::ConstantIndexOp::create(b_, loc_, n.axes[i]));
    return at;
  }

  /// Per axis of a Slice's or SliceUpdate's array, the box's offset where a
  /// traced position gives it (DynamicBox), else null: the static offset plus
  /// the position times the step, computed once, where first asked for. A
  /// negative position counts from the end of the box's extent; one out of
  /// range reports NumPy's IndexError (runtime/Rows.cpp, raised after the
  /// kernel) and reads or writes the box's first element instead.
  const SmallVector<Value> &tracedOffsets(const Node &n) {
    auto [it, added] = tracedOffsets_.try_emplace(&n);
    if (!added)
      return it->second;
    const size_t rank = n.op == Op::SliceUpdate ? n.shape.size() : n.args[0]->shape.size();
    SmallVector<Value> offsets(rank);
    const size_t count = tracedPositions(n), first = n.args.size() - count;
    for (size_t j = 0; j < count; ++j) {
      const NodePtr &k = n.args[first + j];
      const int64_t axis = n.axes[2 * rank + 2 * j], extent = n.axes[2 * rank + 2 * j + 1];
      Type i64 = b_.getI64Type();
      Value v = scalarOf(k);
      if (dtypeSize(k->dtype) < 8)
        v = isUnsigned(k->dtype) ? Value(arith::ExtUIOp::create(b_, loc_, i64, v))
                                 : Value(arith::ExtSIOp::create(b_, loc_, i64, v));
      Value size = arith::ConstantIntOp::create(b_, loc_, i64, extent);
      Value zero = arith::ConstantIntOp::create(b_, loc_, i64, 0);
      Value p = v;
      if (!isUnsigned(k->dtype)) {
        Value negative = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::slt, v, zero);
        p = arith::SelectOp::create(b_, loc_, negative, arith::AddIOp::create(b_, loc_, v, size),
                                    v);
      }
      // Unsigned: a position still negative is past any extent.
      Value bad = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::uge, p, size);
      scf::IfOp::create(b_, loc_, bad, [&](OpBuilder &b, Location loc) {
        // tinymlir_index_error(position, axis, size): NumPy's IndexError, reported
        // (lib/runtime/Rows.cpp; declared by declareCallees).
        Value a = arith::ConstantIntOp::create(b, loc, i64, axis);
        func::CallOp::create(b, loc, "tinymlir_index_error", TypeRange{}, ValueRange{v, a, size});
        scf::YieldOp::create(b, loc);
      });
      p = arith::SelectOp::create(b_, loc_, bad, zero, p);
      const int64_t step = n.axes[rank + static_cast<size_t>(axis)];
      Value offset = arith::IndexCastOp::create(b_, loc_, b_.getIndexType(), p);
      if (step != 1)
        offset =
            arith::MulIOp::create(b_, loc_, offset, arith::ConstantIndexOp::create(b_, loc_, step));
      if (n.axes[static_cast<size_t>(axis)] != 0)
        offset = arith::AddIOp::create(
            b_, loc_, offset,
            arith::ConstantIndexOp::create(b_, loc_, n.axes[static_cast<size_t>(axis)]));
      offsets[static_cast<size_t>(axis)] = offset;
    }
    return it->second = std::move(offsets);
  }

  /// A Concat's non-empty parts (an empty one has nothing to write, and no
  /// offset inside the result), each with its box of the result.
  std::vector<std::pair<NodePtr, Box>> concatParts(const Node &n) {
    std::vector<std::pair<NodePtr, Box>> parts;
    const int64_t axis = n.axes[0];
    int64_t offset = 0;
    for (const NodePtr &part : n.args) {
      if (numElements(part->shape) == 0)
        continue;
      Box box;
      for (size_t i = 0; i < n.shape.size(); ++i) {
        box.offsets.push_back(b_.getIndexAttr(static_cast<int64_t>(i) == axis ? offset : 0));
        box.sizes.push_back(b_.getIndexAttr(part->shape[i]));
        box.strides.push_back(b_.getIndexAttr(1));
      }
      parts.emplace_back(part, std::move(box));
      offset += part->shape[axis];
    }
    return parts;
  }

  Value subview(Value buffer, const Node &n, const Shape &sizes) {
    Box box = boxOf(n, sizes);
    return memref::SubViewOp::create(b_, loc_, buffer, box.offsets, box.sizes, box.strides);
  }

  /// A tensor holding a copy of `source` (a memref): read now, never written.
  /// Copies between an array's buffer and a box of it are memref.copy, which
  /// the CPU runtime does in runs of memcpy (runtime/Copy.cpp); loops
  /// (linalg.copy) for each of thousands of small copies cost LLVM seconds (a
  /// 61x61 cavity flow's 1,000 copies: 1.4 s -> 9.7 s first call).
  Value copied(Value source, const Shape &shape, DType dtype) {
    Value copy = memref::AllocOp::create(b_, loc_, MemRefType::get(shape, elementType(dtype)));
    memref::CopyOp::create(b_, loc_, source, copy);
    return bufferization::ToTensorOp::create(b_, loc_,
                                             RankedTensorType::get(shape, elementType(dtype)), copy,
                                             /*restrict=*/true, /*writable=*/true);
  }

  void emitUpdate(const Node &u) {
    const Node *base = u.args[0].get();
    // A one-element value is stored as a scalar (computed before the buffer
    // is chosen, as a tensor value would be).
    const bool element = scalarMode_ && numElements(u.args[1]->shape) == 1;
    Value value = element ? scalarOf(u.args[1]) : emit(u.args[1]);
    Value buffer;
    if (auto it = chainOf_.find(base);
        it != chainOf_.end() && holder_[it->second] == base && successor_[base] == &u) {
      buffer = it->second;
      // Readers of the version being overwritten that come later read a copy.
      const auto &readers = consumers_[base];
      if (std::any_of(readers.begin(), readers.end(),
                      [&](const Node *r) { return r != &u && r->seq > u.seq; }))
        values_[base] = copied(buffer, base->shape, base->dtype);
    } else {
      // A new buffer for this array: its current value copied in.
      Value start = emit(u.args[0]);
      buffer = memref::AllocOp::create(b_, loc_, bufferType(u));
      bufferization::MaterializeInDestinationOp::create(b_, loc_, TypeRange{}, start, buffer,
                                                        /*restrict=*/false, /*writable=*/true);
    }
    if (element) {
      memref::StoreOp::create(b_, loc_, value, buffer, boxOrigin(u));
    } else {
      // The box written from the value's buffer (of a static identity layout).
      Value source = readBuffer(bufferType(*u.args[1]), value);
      memref::CopyOp::create(b_, loc_, source, subview(buffer, u, u.args[1]->shape));
    }
    chainOf_[&u] = buffer;
    holder_[buffer] = &u;
  }

  /// Until when consumer `r` reads its operands: a SliceUpdate or a scalar
  /// node (isScalarNode) when it is emitted; any other consumer as long as
  /// its own value is read (fusion may move its reads there).
  uint64_t readsUntil(const Node &r) {
    return r.op == Op::SliceUpdate || isScalarNode(r) ? r.seq : liveEnd_[&r];
  }

  /// Whether reads of version `v` that last until `end` (liveEnd_) are all
  /// done before the write that replaces v in its buffer: then they may read
  /// the buffer itself, with no copy.
  bool readBeforeOverwrite(const Node &v, uint64_t end) {
    auto next = successor_.find(&v);
    return next == successor_.end() || end < next->second->seq;
  }

  /// Whether the box a Slice reads and the box a SliceUpdate writes, of the
  /// same array, are disjoint: some axis where their extents do not meet.
  static bool disjointBoxes(const Node &read, const Node &write) {
    const size_t rank = read.shape.size();
    if (write.op != Op::SliceUpdate || write.args[1]->shape.size() != rank)
      return false;
    auto extent = [rank](const Node &x, const Shape &sizes, size_t i) {
      const int64_t step = sliceStep(x, rank, i);
      int64_t size = sizes[i]; // at a traced position: anywhere in the extent
      for (size_t j = 2 * rank; j + 1 < x.axes.size(); j += 2)
        if (x.axes[j] == static_cast<int64_t>(i))
          size = x.axes[j + 1];
      return std::pair<int64_t, int64_t>{x.axes[i], x.axes[i] + (size - 1) * step};
    };
    for (size_t i = 0; i < rank; ++i) {
      const int64_t written = write.args[1]->shape[i];
      if (read.shape[i] == 0 || written == 0)
        return true;
      auto [a0, a1] = extent(read, read.shape, i);
      auto [b0, b1] = extent(write, write.args[1]->shape, i);
      if (a1 < b0 || b1 < a0)
        return true;
    }
    return false;
  }

  /// Whether Slice `n` of version `v` may be read in the buffer itself until
  /// `end`: every write into the buffer up to then misses its box (a sweep
  /// reading column j - 1 while writing column j; before, any later write
  /// made a copy of the column).
  bool unchangedWhileRead(const Node &n, const Node &v, uint64_t end) {
    for (auto next = successor_.find(&v); next != successor_.end() && next->second->seq <= end;
         next = successor_.find(next->second))
      if (!disjointBoxes(n, *next->second))
        return false;
    return true;
  }

  /// A version of an updated array, read now (while its buffer holds it).
  Value readVersion(const Node &v) {
    Value buffer = chainOf_[&v];
    if (holder_[buffer] != &v)
      throw Error("[build] internal: a version of an updated array is read after the write "
                  "that replaced it");
    // Read in place if every reader is done before the next write (the last
    // version is never written again); otherwise a copy.
    auto next = successor_.find(&v);
    const Node *overwrite = next == successor_.end() ? nullptr : next->second;
    uint64_t end = 0;
    for (const Node *r : consumers_[&v])
      if (!(r == overwrite && r->args[0].get() == &v && r->args[1].get() != &v))
        end = std::max(end, readsUntil(*r));
    Value t = readBeforeOverwrite(v, end)
                  ? Value(bufferization::ToTensorOp::create(b_, loc_, tensorType(v), buffer,
                                                            /*restrict=*/true,
                                                            /*writable=*/false))
                  : copied(buffer, v.shape, v.dtype);
    values_[&v] = t;
    return t;
  }

  /// Slice of a version of an updated array: the box of the buffer itself if
  /// every read of it is done before the next write into the buffer, else
  /// the box copied now (O(slice)).
  std::optional<Value> sliceOfVersion(const Node &n) {
    const Node *v = n.args[0].get();
    if (values_.contains(v) || !chainOf_.contains(v))
      return std::nullopt;
    Value buffer = chainOf_[v];
    if (holder_[buffer] != v)
      throw Error("[build] internal: a slice of an updated array is read after the write "
                  "that replaced it");
    Value box = subview(buffer, n, n.shape);
    if (unchangedWhileRead(n, *v, liveEnd_[&n]))
      return Value(bufferization::ToTensorOp::create(b_, loc_, tensorType(n), box,
                                                     /*restrict=*/true, /*writable=*/false));
    return copied(box, n.shape, n.dtype);
  }

  Value emitNew(const Node &n) {
    switch (n.op) {
#define TINYMLIR_OP(Name, ...)
#define TINYMLIR_ELEMENTWISE_OP(Name, ...) case Op::Name:
#include <tinymlir/ops.def>
      return emitElementwise(n);
    case Op::Argument:
    case Op::Constant:
      break; // bound to the function's arguments before any use
    case Op::Scalar:
      return filled(n, scalarValue(b_, n));
    case Op::Sum:
    case Op::Max:
    case Op::Min:
    case Op::Prod:
      return emitReduction(n);
    case Op::MatMul:
      return emitMatmul(n);
    case Op::Slice: {
      if (auto read = sliceOfVersion(n))
        return *read;
      Box box = boxOf(n, n.shape);
      return tensor::ExtractSliceOp::create(b_, loc_, tensorType(n), emit(n.args[0]), box.offsets,
                                            box.sizes, box.strides);
    }
    case Op::SliceUpdate: { // with an index_put in the graph (emitInOrder writes buffers)
      Box box = boxOf(n, n.args[1]->shape);
      return tensor::InsertSliceOp::create(b_, loc_, emit(n.args[1]), emit(n.args[0]), box.offsets,
                                           box.sizes, box.strides);
    }
    case Op::Reshape: {
      // A slice split into more dimensions (a row of packed q, k, v into
      // heads) stays a view of the slice: expand_shape, no copy. (A slice
      // with steps is reshaped as any tensor.)
      if (n.args[0]->op == Op::Slice && n.shape.size() > n.args[0]->shape.size() &&
          n.args[0]->axes.size() == n.args[0]->shape.size()) {
        if (auto groups = getReassociationIndicesForReshape(tensorType(*n.args[0]), tensorType(n)))
          return tensor::ExpandShapeOp::create(b_, loc_, tensorType(n), emit(n.args[0]), *groups);
      }
      // A slice read in place, squeezed (a[1:-1, j]: (98, 1) -> (98,)) for
      // elementwise readers: collapse_shape, a strided view. tensor.reshape
      // takes identity layouts only, so bufferization copied each such
      // column first (unrolled sweeps: a copy and its loop per read).
      // A slice of an array that is not updated is taken squeezed
      // (a rank-reduced extract_slice): no collapse_shape for fusion to move
      // below the reader, where it kept a column's product from fusing with
      // a row's update (syrk's C[i, :i] += a * A[:i, k]).
      if (n.args[0]->op == Op::Slice && onlyDropsUnitDims(n.args[0]->shape, n.shape) &&
          readByElementwiseOps(n)) {
        const Node &slice = *n.args[0];
        if (!chainOf_.contains(slice.args[0].get())) {
          Box box = boxOf(slice, slice.shape);
          return tensor::ExtractSliceOp::create(b_, loc_, tensorType(n), emit(slice.args[0]),
                                                box.offsets, box.sizes, box.strides);
        }
        if (auto groups = getReassociationIndicesForReshape(tensorType(*n.args[0]), tensorType(n)))
          return tensor::CollapseShapeOp::create(b_, loc_, tensorType(n), emit(n.args[0]), *groups);
      }
      // An elementwise result given unit axes for an elementwise reader or a
      // slice update (a row's new values, (n,) -> (1, n)): expand_shape,
      // which fusion folds into the producer, so that the update's value is
      // computed in its box's shape and can be written into the box itself
      // (tinymlir-write-into-destination).
      if (isElementwise(*n.args[0]) && onlyDropsUnitDims(n.shape, n.args[0]->shape) &&
          readByElementwiseOps(n)) {
        if (auto groups = getReassociationIndicesForReshape(tensorType(*n.args[0]), tensorType(n)))
          return tensor::ExpandShapeOp::create(b_, loc_, tensorType(n), emit(n.args[0]), *groups);
      }
      // Otherwise a shape operand (not expand/collapse_shape), so fusion
      // cannot fold the reshape into a neighbouring matmul and turn it into a
      // generic.
      auto shapeType =
          RankedTensorType::get({static_cast<int64_t>(n.shape.size())}, b_.getI64Type());
      Value shape = arith::ConstantOp::create(
          b_, loc_, DenseIntElementsAttr::get(shapeType, ArrayRef<int64_t>(n.shape)));
      return tensor::ReshapeOp::create(b_, loc_, tensorType(n), emit(n.args[0]), shape);
    }
    case Op::Results:
      throw Error("[build] internal: the results are written into their outputs, not emitted");
    case Op::Concat: {
      // Each part inserted into one destination; eliminate-empty-tensors lets
      // the producers write into their slice of it directly.
      Value out = emptyLike(n);
      for (const auto &[part, box] : concatParts(n))
        out = tensor::InsertSliceOp::create(b_, loc_, emit(part), out, box.offsets, box.sizes,
                                            box.strides);
      return out;
    }
    case Op::Transpose:
      return linalg::TransposeOp::create(b_, loc_, emit(n.args[0]), emptyLike(n), n.axes)
          .getResult()[0];
    case Op::Gather:
      return emitGather(n);
    case Op::IndexPut:
      return emitIndexPut(n);
    case Op::Triu:
    case Op::Tril:
      return emitTriangle(n);
    case Op::Flip:
      return emitFlip(n);
    case Op::Sort:
    case Op::Argsort:
    case Op::Cumsum:
    case Op::Cumprod:
    case Op::Cummax:
    case Op::Cummin:
    case Op::Argmax:
    case Op::Argmin:
    case Op::SearchSorted:
    case Op::Take:
    case Op::Put:
    case Op::Bincount:
    case Op::BincountWeighted:
    case Op::Cholesky:
    case Op::Solve:
    case Op::Inv:
    case Op::Det:
    case Op::Slogdet:
    case Op::Eigh:
    case Op::Svd:
    case Op::Qr:
    case Op::Lstsq:
    case Op::Require:
      return emitRowCall(n);
    }
    throw Error(std::string("[build] no lowering for op '") + opName(n.op) + "'");
  }

  /// Whether `to` is `from` with some of its size-1 dimensions removed.
  static bool onlyDropsUnitDims(const Shape &from, const Shape &to) {
    size_t j = 0;
    for (int64_t d : from) {
      if (j < to.size() && to[j] == d)
        ++j;
      else if (d != 1)
        return false;
    }
    return j == to.size();
  }

  static bool isElementwise(const Node &n) {
    const OpKind kind = opInfo(n.op).kind;
    return kind == OpKind::Unary || kind == OpKind::Binary || kind == OpKind::Compare ||
           kind == OpKind::Select || kind == OpKind::Convert;
  }

  /// Whether every reader of `n` (known when the graph is emitted in order)
  /// is elementwise or writes it into a slice: none can be a product, which
  /// fusion would turn into a generic through a collapse_shape.
  bool readByElementwiseOps(const Node &n) {
    auto it = consumers_.find(&n);
    if (it == consumers_.end() || it->second.empty())
      return false;
    return std::all_of(it->second.begin(), it->second.end(),
                       [](const Node *r) { return r->op == Op::SliceUpdate || isElementwise(*r); });
  }

  /// A read of `tensor`'s buffer by the memref op that follows (a call, a
  /// copy). Bufferization sees the read at this to_buffer, so it must stay
  /// where it is made: each carries its own number, which keeps CSE from
  /// merging it with an earlier one of the same tensor (whose buffer may be
  /// reused in place between the two; found by a weighted histogram whose
  /// second bincount read weights overwritten by a cast).
  Value readBuffer(MemRefType type, Value tensor) {
    auto read = bufferization::ToBufferOp::create(b_, loc_, type, tensor, /*read_only=*/true);
    read->setAttr("tinymlir.read", b_.getI64IntegerAttr(reads_++));
    return read;
  }

  /// A row kernel: tinymlir_<op>_<dtype>(operands..., result, flag) of
  /// lib/runtime/Rows.cpp, on 2-D memrefs of any strides (each passed as
  /// MLIR's expanded descriptor: allocated and aligned pointers, offset, two
  /// sizes, two strides). The result is a fresh buffer the call fills.
  Value emitRowCall(const Node &n) {
    const int64_t d = ShapedType::kDynamic;
    auto layout = StridedLayoutAttr::get(&context_, d, {d, d});
    auto strided = [&](const Node &v) {
      return MemRefType::get(v.shape, elementType(v.dtype), layout);
    };
    auto dynamic = [&](const Node &v) {
      return MemRefType::get({d, d}, elementType(v.dtype), layout);
    };
    // Every operand first: no tensor op may come between a to_buffer and the
    // call (bufferization sees the read at the to_buffer, and could reuse the
    // buffer in place before the call reads it).
    SmallVector<Value> tensors;
    for (const NodePtr &a : n.args)
      tensors.push_back(emit(a));
    SmallVector<Value> operands;
    for (auto [a, t] : llvm::zip(n.args, tensors)) {
      Value m = readBuffer(strided(*a), t);
      operands.push_back(memref::CastOp::create(b_, loc_, dynamic(*a), m));
    }
    Value result = memref::AllocOp::create(b_, loc_, memrefType(n), b_.getI64IntegerAttr(64));
    operands.push_back(memref::CastOp::create(b_, loc_, dynamic(n), result));
    operands.push_back(arith::ConstantIntOp::create(b_, loc_, b_.getI64Type(), n.axes.at(0)));
    // Declared by declareCallees, typed as called.
    const std::string name =
        std::string("tinymlir_") + opName(n.op) + "_" + dtypeName(n.args[0]->dtype);
    func::CallOp::create(b_, loc_, name, TypeRange{}, operands);
    return bufferization::ToTensorOp::create(b_, loc_, tensorType(n), result, /*restrict=*/true,
                                             /*writable=*/true);
  }

  /// (d0..dR) -> operand indices, broadcasting size-1 and missing leading dims.
  AffineMap broadcastMap(const Shape &operand, const Shape &out) {
    size_t rank = out.size(), lead = rank - operand.size();
    SmallVector<AffineExpr> exprs;
    for (size_t k = 0; k < operand.size(); ++k) {
      if (operand[k] == 1 && out[lead + k] != 1)
        exprs.push_back(b_.getAffineConstantExpr(0));
      else
        exprs.push_back(b_.getAffineDimExpr(lead + k));
    }
    return AffineMap::get(rank, 0, exprs, &context_);
  }

  Value emitElementwise(const Node &n) {
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    // Operand i of the region is either a block argument, an inline
    // constant, or an SSA scalar of the straight-line graph (isScalarNode:
    // a[i, k] in `a[:, j] * a[i, k]`), read from above the loop.
    SmallVector<int> blockArg(n.args.size(), -1);
    SmallVector<Value> captured(n.args.size());
    for (size_t i = 0; i < n.args.size(); ++i) {
      if (n.args[i]->op == Op::Scalar)
        continue;
      if (n.args[i]->shape.size() <= n.shape.size() && isScalarNode(*n.args[i])) {
        captured[i] = scalarOf(n.args[i]);
        continue;
      }
      blockArg[i] = static_cast<int>(inputs.size());
      inputs.push_back(emit(n.args[i]));
      maps.push_back(broadcastMap(n.args[i]->shape, n.shape));
    }
    maps.push_back(AffineMap::getMultiDimIdentityMap(n.shape.size(), &context_));
    SmallVector<utils::IteratorType> iterators(n.shape.size(), utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        b_, loc_, TypeRange{tensorType(n)}, inputs, ValueRange{emptyLike(n)}, maps, iterators,
        [&](OpBuilder &b, Location loc, ValueRange block) {
          SmallVector<Value> operands;
          for (size_t i = 0; i < n.args.size(); ++i)
            operands.push_back(blockArg[i] >= 0 ? block[blockArg[i]]
                               : captured[i]    ? captured[i]
                                                : scalarValue(b, *n.args[i]));
          linalg::YieldOp::create(b, loc, scalarOp(b, n, operands));
        });
    return generic.getResult(0);
  }

  /// The body of an elementwise op: its ops.def row's lowering for the
  /// operands' type (float, or int32 and bool).
  Value scalarOp(OpBuilder &b, const Node &n, ArrayRef<Value> x, bool widened = false) {
    const OpKind kind = opInfo(n.op).kind;
    const DType operand = widened ? DType::f32 : n.args[kind == OpKind::Select ? 1 : 0]->dtype;
    if (operand == DType::f16 && (kind == OpKind::Unary || kind == OpKind::Binary)) {
      // As NumPy's float16 loops: each operation in float32, rounded once.
      Node wide = n;
      wide.dtype = DType::f32;
      SmallVector<Value> extended;
      for (Value v : x)
        extended.push_back(arith::ExtFOp::create(b, loc_, b.getF32Type(), v));
      Value r = scalarOp(b, wide, extended, /*widened=*/true);
      return arith::TruncFOp::create(b, loc_, b.getF16Type(), r);
    }
    const bool c = isComplex(operand), f = isFloat(operand);
    switch (n.op) {
#define TINYMLIR_OP(Name, ...)                                                                     \
  case Op::Name:                                                                                   \
    break;
#define TINYMLIR_ELEMENTWISE_OP(Name, spelling, Kind, Ints, FloatLowering, IntLowering,            \
                                ComplexLowering, Function)                                         \
  case Op::Name:                                                                                   \
    return c   ? lower<OpKind::Kind, ComplexLowering>(b, loc_, n, x)                               \
           : f ? lower<OpKind::Kind, FloatLowering>(b, loc_, n, x)                                 \
               : lower<OpKind::Kind, IntLowering>(b, loc_, n, x);
#include <tinymlir/ops.def>
    }
    throw Error(std::string("[build] '") + opName(n.op) + "' is not elementwise");
  }

  Value emitReduction(const Node &n) {
    const Node &in = *n.args[0];
    const bool f = isFloat(in.dtype), c = isComplex(in.dtype);
    const bool s = dtypeKind(in.dtype) == DTypeKind::Signed,
               extreme = n.op == Op::Max || n.op == Op::Min;
    Value acc;
    if (extreme && isInteger(n.dtype)) { // exact extremes of the type (bool: any/all below)
      const unsigned bits = static_cast<unsigned>(8 * dtypeSize(n.dtype));
      APInt v = n.op == Op::Max ? (s ? APInt::getSignedMinValue(bits) : APInt::getMinValue(bits))
                                : (s ? APInt::getSignedMaxValue(bits) : APInt::getMaxValue(bits));
      Value init = arith::ConstantOp::create(b_, loc_, b_.getIntegerAttr(elementType(n.dtype), v));
      acc =
          linalg::FillOp::create(b_, loc_, ValueRange{init}, ValueRange{emptyLike(n)}).getResult(0);
    } else {
      const double inf = std::numeric_limits<double>::infinity();
      double init = n.op == Op::Prod ? 1 : 0;
      if (n.op == Op::Max) // bool: any, from false
        init = f ? -inf : 0;
      if (n.op == Op::Min) // bool: all, from true
        init = f ? inf : 1;
      acc = filled(n, init);
    }
    auto reduce = linalg::ReduceOp::create(
        b_, loc_, ValueRange{emit(n.args[0])}, ValueRange{acc}, n.axes,
        [&](OpBuilder &b, Location loc, ValueRange block) {
          // Accumulations may be reassociated (as NumPy's pairwise sums are):
          // this lets LLVM vectorize them with several partial sums.
          Value r;
          auto reassoc = arith::FastMathFlags::reassoc;
          if (n.op == Op::Sum)
            r = c   ? Value(complex::AddOp::create(b, loc, block[0], block[1]))
                : f ? Value(arith::AddFOp::create(b, loc, block[0], block[1], reassoc))
                    : Value(arith::AddIOp::create(b, loc, block[0], block[1]));
          else if (n.op == Op::Prod) // floats, complex, or 64-bit integers (NumPy's products)
            r = c   ? Value(complex::MulOp::create(b, loc, block[0], block[1]))
                : f ? Value(arith::MulFOp::create(b, loc, block[0], block[1], reassoc))
                    : Value(arith::MulIOp::create(b, loc, block[0], block[1]));
          else if (n.op == Op::Max)
            r = f   ? Value(arith::MaximumFOp::create(b, loc, block[0], block[1], reassoc))
                : s ? Value(arith::MaxSIOp::create(b, loc, block[0], block[1]))
                    : Value(arith::MaxUIOp::create(b, loc, block[0], block[1]));
          else
            r = f   ? Value(arith::MinimumFOp::create(b, loc, block[0], block[1], reassoc))
                : s ? Value(arith::MinSIOp::create(b, loc, block[0], block[1]))
                    : Value(arith::MinUIOp::create(b, loc, block[0], block[1]));
          linalg::YieldOp::create(b, loc, r);
        });
    return reduce.getResult(0);
  }

  /// A product of float64 rows with float32 weights (promoted by an explicit
  /// Cast node, possibly of a transposed matrix): a mixed-precision
  /// linalg.matmul that reads the float32 weights and accumulates in float64.
  /// The CPU target streams the weights of few-row products and converts
  /// those of the others once (tinymlir-small-products, option max-rows).
  /// Returns the weights node (and whether it is transposed), or null.
  static NodePtr mixedPrecisionWeights(const Node &n, bool &transposed) {
    const Node &b = *n.args[1];
    if (n.shape.size() != 2 || n.dtype != DType::f64 || b.op != Op::Cast ||
        b.args[0]->dtype != DType::f32)
      return nullptr;
    const NodePtr &w = b.args[0];
    transposed = w->op == Op::Transpose;
    return transposed ? w->args[0] : w;
  }

  Value emitMatmul(const Node &n) {
    Value acc = filled(n, 0.0);
    bool transposed = false;
    if (NodePtr w = mixedPrecisionWeights(n, transposed)) {
      auto mm = linalg::MatmulOp::create(b_, loc_, TypeRange{tensorType(n)},
                                         ValueRange{emit(n.args[0]), emit(w)}, ValueRange{acc});
      if (transposed) {
        AffineExpr i = b_.getAffineDimExpr(0), j = b_.getAffineDimExpr(1),
                   k = b_.getAffineDimExpr(2);
        mm.setIndexingMapsAttr(b_.getAffineMapArrayAttr({AffineMap::get(3, 0, {i, k}, &context_),
                                                         AffineMap::get(3, 0, {j, k}, &context_),
                                                         AffineMap::get(3, 0, {i, j}, &context_)}));
      }
      return mm.getResult(0);
    }
    Value a = emit(n.args[0]), bv = emit(n.args[1]);
    if (n.shape.size() == 2)
      return linalg::MatmulOp::create(b_, loc_, TypeRange{tensorType(n)}, ValueRange{a, bv},
                                      ValueRange{acc})
          .getResult(0);
    return linalg::BatchMatmulOp::create(b_, loc_, TypeRange{tensorType(n)}, ValueRange{a, bv},
                                         ValueRange{acc})
        .getResult(0);
  }

  Value emitGather(const Node &n) {
    // out[i, j] = table[ids[i], j]; ids (any integer dtype) were checked
    // against the table at the call, a negative one counts from the end.
    Value table = emit(n.args[0]), ids = emit(n.args[1]);
    const DType idType = n.args[1]->dtype;
    const int64_t rows = n.args[0]->shape[0];
    SmallVector<AffineMap> maps{AffineMap::get(2, 0, {b_.getAffineDimExpr(0)}, &context_),
                                AffineMap::getMultiDimIdentityMap(2, &context_)};
    SmallVector<utils::IteratorType> iterators(2, utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        b_, loc_, TypeRange{tensorType(n)}, ValueRange{ids}, ValueRange{emptyLike(n)}, maps,
        iterators, [&](OpBuilder &b, Location loc, ValueRange block) {
          Value id = block[0];
          Type i64 = b.getI64Type();
          if (dtypeSize(idType) < 8)
            id = isUnsigned(idType) ? Value(arith::ExtUIOp::create(b, loc, i64, id))
                                    : Value(arith::ExtSIOp::create(b, loc, i64, id));
          if (!isUnsigned(idType)) {
            Value zero = arith::ConstantIntOp::create(b, loc, i64, 0);
            Value size = arith::ConstantIntOp::create(b, loc, i64, rows);
            Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, id, zero);
            id = arith::SelectOp::create(b, loc, negative, arith::AddIOp::create(b, loc, id, size),
                                         id);
          }
          Value row = arith::IndexCastOp::create(b, loc, b.getIndexType(), id);
          Value col = linalg::IndexOp::create(b, loc, 1);
          Value v = tensor::ExtractOp::create(b, loc, table, ValueRange{row, col});
          linalg::YieldOp::create(b, loc, v);
        });
    return generic.getResult(0);
  }

  Value emitIndexPut(const Node &n) {
    // for r: a[i0[r], :, i1[r], ...] = values[r] (R in place when the indexed
    // axes are adjacent), as a copy into the slice of the loop-carried
    // tensor: in place when `a` is writable (a donated input).
    const Node &target = *n.args[0], &values = *n.args[1];
    const auto &axes = n.axes;
    const int64_t rank = static_cast<int64_t>(n.shape.size());
    const bool adjacent = axes.back() - axes.front() + 1 == static_cast<int64_t>(axes.size());
    const int64_t rowAxis = adjacent ? axes.front() : 0; // R's axis in values
    Shape whole;
    for (int64_t d = 0; d < rank; ++d)
      if (std::find(axes.begin(), axes.end(), d) == axes.end())
        whole.push_back(n.shape[d]);
    auto rowType = RankedTensorType::get(whole, elementType(n.dtype));
    SmallVector<Value> indices;
    for (size_t k = 2; k < n.args.size(); ++k)
      indices.push_back(emit(n.args[k]));
    Value vs = emit(n.args[1]);
    Value zero = arith::ConstantIndexOp::create(b_, loc_, 0);
    Value one = arith::ConstantIndexOp::create(b_, loc_, 1);
    Value rows = arith::ConstantIndexOp::create(b_, loc_, values.shape[rowAxis]);
    auto loop = scf::ForOp::create(
        b_, loc_, zero, rows, one, ValueRange{emit(n.args[0])},
        [&](OpBuilder &b, Location loc, Value r, ValueRange carried) {
          SmallVector<OpFoldResult> offsets, sizes, strides(rank, b.getIndexAttr(1));
          size_t k = 0;
          for (int64_t d = 0; d < rank; ++d) {
            bool indexed = k < axes.size() && axes[k] == d;
            if (indexed) {
              Value i = tensor::ExtractOp::create(b, loc, indices[k++], ValueRange{r});
              offsets.push_back(Value(arith::IndexCastOp::create(b, loc, b.getIndexType(), i)));
            } else {
              offsets.push_back(b.getIndexAttr(0));
            }
            sizes.push_back(b.getIndexAttr(indexed ? 1 : target.shape[d]));
          }
          SmallVector<OpFoldResult> rowOffsets, rowSizes,
              rowStrides(values.shape.size(), b.getIndexAttr(1));
          for (int64_t d = 0; d < static_cast<int64_t>(values.shape.size()); ++d) {
            rowOffsets.push_back(d == rowAxis ? OpFoldResult(r) : b.getIndexAttr(0));
            rowSizes.push_back(b.getIndexAttr(d == rowAxis ? 1 : values.shape[d]));
          }
          Value row =
              tensor::ExtractSliceOp::create(b, loc, rowType, vs, rowOffsets, rowSizes, rowStrides);
          Value slot =
              tensor::ExtractSliceOp::create(b, loc, rowType, carried[0], offsets, sizes, strides);
          Value copied = linalg::CopyOp::create(b, loc, row, slot).getResult(0);
          Value updated =
              tensor::InsertSliceOp::create(b, loc, copied, carried[0], offsets, sizes, strides);
          scf::YieldOp::create(b, loc, updated);
        });
    return loop.getResult(0);
  }

  Value emitFlip(const Node &n) {
    // out[..., i, ...] = x[..., size - 1 - i, ...] along each flipped axis.
    const size_t rank = n.shape.size();
    SmallVector<AffineExpr> reads;
    for (size_t d = 0; d < rank; ++d) {
      AffineExpr i = b_.getAffineDimExpr(d);
      const bool flipped =
          std::find(n.axes.begin(), n.axes.end(), static_cast<int64_t>(d)) != n.axes.end();
      reads.push_back(flipped ? b_.getAffineConstantExpr(n.shape[d] - 1) - i : i);
    }
    SmallVector<AffineMap> maps{AffineMap::get(rank, 0, reads, &context_),
                                AffineMap::getMultiDimIdentityMap(rank, &context_)};
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        b_, loc_, TypeRange{tensorType(n)}, ValueRange{emit(n.args[0])}, ValueRange{emptyLike(n)},
        maps, iterators, [&](OpBuilder &b, Location loc, ValueRange block) {
          linalg::YieldOp::create(b, loc, block[0]);
        });
    return generic.getResult(0);
  }

  Value emitTriangle(const Node &n) {
    // Over the last two axes (i, j): x where j - i >= k (triu) or <= k
    // (tril), else 0.
    const size_t rank = n.shape.size();
    SmallVector<AffineMap> maps(2, AffineMap::getMultiDimIdentityMap(rank, &context_));
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        b_, loc_, TypeRange{tensorType(n)}, ValueRange{emit(n.args[0])}, ValueRange{emptyLike(n)},
        maps, iterators, [&](OpBuilder &b, Location loc, ValueRange block) {
          Value i = linalg::IndexOp::create(b, loc, rank - 2);
          Value j = linalg::IndexOp::create(b, loc, rank - 1);
          Value offset = arith::SubIOp::create(b, loc, j, i);
          Value k = arith::ConstantIndexOp::create(b, loc, n.axes[0]);
          Value keep = arith::CmpIOp::create(
              b, loc, n.op == Op::Triu ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sle,
              offset, k);
          Value zero = scalarConstant(b, n.dtype, 0.0);
          linalg::YieldOp::create(b, loc,
                                  Value(arith::SelectOp::create(b, loc, keep, block[0], zero)));
        });
    return generic.getResult(0);
  }

  MLIRContext &context_;
  OpBuilder b_;
  Location loc_;
  std::vector<NodePtr> constants_;
  std::unordered_map<const Node *, const Node *> aliases_;
  std::unordered_map<const Node *, Value> values_;
  bool scalarMode_ = false;                         // isScalarNode: straight-line graphs
  std::unordered_map<const Node *, Value> scalars_; // scalarOf
  std::unordered_map<const Node *, SmallVector<Value>> tracedOffsets_;
  // Slice updates (emitInOrder): each version's buffer, the version each
  // buffer holds now, each version's successor, and each node's readers.
  std::unordered_map<const Node *, Value> chainOf_;
  llvm::DenseMap<Value, const Node *> holder_;
  std::unordered_map<const Node *, const Node *> successor_;
  std::unordered_map<const Node *, std::vector<const Node *>> consumers_;
  std::unordered_map<const Node *, uint64_t> liveEnd_; // the last seq that reads a value
  int64_t reads_ = 0;                                  // readBuffer's numbers
  std::vector<scf::ForOp> dotLoops_;                   // dotOf's loops
  DenseMap<size_t, int64_t> valueIds_;                 // idOf's, by keyOf
  DenseMap<Value, size_t> valueKeys_;                  // keyOf's
  static constexpr size_t kVectorizedDots = 64;
};

} // namespace

BuiltModule buildModule(MLIRContext &context, const std::vector<NodePtr> &results,
                        const std::vector<NodePtr> &args, const std::vector<int> &donated) {
  ModuleBuilder builder(context);
  BuiltModule out = builder.build(results, args, donated);
  builder.scalarDotsInLongKernels();
  declareCallees(*out.module);
  return out;
}

bool bufferizesWithAnalysis(const NodePtr &results) {
  return ModuleBuilder::classify(results) == ModuleBuilder::GraphKind::Small;
}

} // namespace tinymlir::detail
