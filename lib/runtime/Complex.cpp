// Complex functions as NumPy's loops compute them, called by compiled code
// once per element (ops.def's ComplexCall<"name"> lowering):
// tinymlir_c<name>_<dtype>(re, im) returns the result's parts as two doubles
// in registers (a float result exactly, truncated by the caller).
//
// exp, log, sqrt and the trigonometric and hyperbolic functions are C99's
// (libstdc++'s std:: functions on std::complex call cexp, clog, ...), which
// NumPy's npymath wraps; their values at infinities and nan are C99's Annex
// G. expm1, log1p, exp2, log2, log10, power, reciprocal and sign are NumPy's
// own formulas (its umath's nc_expm1, nc_log1p, ..., npymath's npy_cpow).
#include "runtime/Call.h"

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <numbers>

namespace {

/// The parts of a result, returned in two floating-point registers (the
/// System V ABI's struct of two doubles, as LLVM returns {double, double}).
struct Parts {
  double re, im;
};

template <class T> Parts parts(std::complex<T> z) { return {z.real(), z.imag()}; }

/// NumPy's nc_expm1: expm1(a) cos b - 2 sin^2(b / 2) + i e^a sin b.
template <class T> std::complex<T> expm1(std::complex<T> z) {
  const T a = std::sin(z.imag() / 2);
  return {std::expm1(z.real()) * std::cos(z.imag()) - 2 * a * a,
          std::exp(z.real()) * std::sin(z.imag())};
}

/// NumPy's nc_log1p: log |z + 1| + i arg(z + 1).
template <class T> std::complex<T> log1p(std::complex<T> z) {
  return {std::log(std::hypot(z.real() + 1, z.imag())), std::atan2(z.imag(), z.real() + 1)};
}

/// NumPy's nc_exp2: exp(z ln 2), and nc_log2, nc_log10: log(z) log2(e).
template <class T> std::complex<T> exp2(std::complex<T> z) {
  const T ln2 = std::numbers::ln2_v<T>;
  return std::exp(std::complex<T>(z.real() * ln2, z.imag() * ln2));
}
template <class T> std::complex<T> scaledLog(std::complex<T> z, T scale) {
  const std::complex<T> l = std::log(z);
  return {l.real() * scale, l.imag() * scale};
}

/// NumPy's complex product, with no recovery of infinities (its cmul).
template <class T> std::complex<T> times(std::complex<T> a, std::complex<T> b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

/// NumPy's cdiv: Smith's division, by zero each part over |0|.
template <class T> std::complex<T> over(std::complex<T> a, std::complex<T> b) {
  const T ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
  const T absR = std::fabs(br), absI = std::fabs(bi);
  if (absR >= absI) {
    if (absR == 0 && absI == 0)
      return {ar / absR, ai / absI};
    const T rat = bi / br, scl = T(1) / (br + bi * rat);
    return {(ar + ai * rat) * scl, (ai - ar * rat) * scl};
  }
  const T rat = br / bi, scl = T(1) / (bi + br * rat);
  return {(ar * rat + ai) * scl, (ai * rat - ar) * scl};
}

/// NumPy's npy_cpow: 1 for a zero exponent; of zero, 0 for a positive real
/// part of b and nan otherwise; integer exponents below 100 by products
/// (squaring, then one division for a negative one); else C99's cpow.
template <class T> std::complex<T> power(std::complex<T> a, std::complex<T> b) {
  const T br = b.real(), bi = b.imag();
  if (br == 0 && bi == 0)
    return {1, 0};
  if (a.real() == 0 && a.imag() == 0) {
    if (br > 0)
      return {0, 0};
    return {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::quiet_NaN()};
  }
  if (bi == 0 && br == std::trunc(br) && br > -100 && br < 100) {
    int64_t n = static_cast<int64_t>(br);
    if (n == 1)
      return a;
    if (n == 2)
      return times(a, a);
    if (n == 3)
      return times(a, times(a, a));
    n = n < 0 ? -n : n;
    std::complex<T> result(1, 0), p = a;
    for (int64_t mask = 1;; mask <<= 1) {
      if (n & mask)
        result = times(result, p);
      if (n < (mask << 1))
        break;
      p = times(p, p);
    }
    return br < 0 ? over(std::complex<T>(1, 0), result) : result;
  }
  return std::pow(a, b);
}

/// NumPy's complex reciprocal: Smith's 1 / z (of zero, nan + nan i).
template <class T> std::complex<T> reciprocal(std::complex<T> z) {
  const T re = z.real(), im = z.imag();
  if (std::fabs(im) <= std::fabs(re)) {
    const T r = im / re, d = re + im * r;
    return {T(1) / d, -r / d};
  }
  const T r = re / im, d = re * r + im;
  return {r / d, T(-1) / d};
}

/// NumPy 2's complex sign, z / |z|: 0 at 0, nan at nan; at infinity the unit
/// of its infinite part, nan where both are.
template <class T> std::complex<T> sign(std::complex<T> z) {
  const T re = z.real(), im = z.imag(), magnitude = std::hypot(re, im);
  const T nan = std::numeric_limits<T>::quiet_NaN();
  if (std::isnan(magnitude))
    return {nan, nan};
  if (std::isinf(magnitude)) {
    if (std::isinf(re))
      return std::isinf(im) ? std::complex<T>(nan, nan) : std::complex<T>(re > 0 ? 1 : -1, 0);
    return {0, im > 0 ? T(1) : T(-1)};
  }
  if (magnitude == 0)
    return {0, 0};
  return {re / magnitude, im / magnitude};
}

} // namespace

#define TINYMLIR_COMPLEX_FUNCTION(name, dtype, T, expression)                                      \
  extern "C" Parts tinymlir_c##name##_##dtype(T re, T im) {                                        \
    const std::complex<T> z(re, im);                                                               \
    return parts(expression);                                                                      \
  }
#define TINYMLIR_COMPLEX_BINARY(name, dtype, T, expression)                                        \
  extern "C" Parts tinymlir_c##name##_##dtype(T re, T im, T re2, T im2) {                          \
    const std::complex<T> a(re, im), b(re2, im2);                                                  \
    return parts(expression);                                                                      \
  }
#define TINYMLIR_COMPLEX_FUNCTIONS(X, dtype, T)                                                    \
  X(exp, dtype, T, std::exp(z))                                                                    \
  X(reciprocal, dtype, T, reciprocal(z))                                                           \
  X(sign, dtype, T, sign(z))                                                                       \
  X(log, dtype, T, std::log(z))                                                                    \
  X(sqrt, dtype, T, std::sqrt(z))                                                                  \
  X(sin, dtype, T, std::sin(z))                                                                    \
  X(cos, dtype, T, std::cos(z))                                                                    \
  X(tan, dtype, T, std::tan(z))                                                                    \
  X(sinh, dtype, T, std::sinh(z))                                                                  \
  X(cosh, dtype, T, std::cosh(z))                                                                  \
  X(tanh, dtype, T, std::tanh(z))                                                                  \
  X(arcsin, dtype, T, std::asin(z))                                                                \
  X(arccos, dtype, T, std::acos(z))                                                                \
  X(arctan, dtype, T, std::atan(z))                                                                \
  X(arcsinh, dtype, T, std::asinh(z))                                                              \
  X(arccosh, dtype, T, std::acosh(z))                                                              \
  X(arctanh, dtype, T, std::atanh(z))                                                              \
  X(expm1, dtype, T, expm1(z))                                                                     \
  X(log1p, dtype, T, log1p(z))                                                                     \
  X(exp2, dtype, T, exp2(z))                                                                       \
  X(log2, dtype, T, scaledLog(z, std::numbers::log2e_v<T>))                                        \
  X(log10, dtype, T, scaledLog(z, std::numbers::log10e_v<T>))
#define TINYMLIR_COMPLEX_BINARIES(X, dtype, T) X(power, dtype, T, power(a, b))
TINYMLIR_COMPLEX_FUNCTIONS(TINYMLIR_COMPLEX_FUNCTION, complex64, float)
TINYMLIR_COMPLEX_FUNCTIONS(TINYMLIR_COMPLEX_FUNCTION, complex128, double)
TINYMLIR_COMPLEX_BINARIES(TINYMLIR_COMPLEX_BINARY, complex64, float)
TINYMLIR_COMPLEX_BINARIES(TINYMLIR_COMPLEX_BINARY, complex128, double)

tinymlir::detail::RuntimeSymbols tinymlir::detail::complexRuntimeSymbols() {
  RuntimeSymbols out;
#define TINYMLIR_COMPLEX_SYMBOL(name, dtype, T, expression)                                        \
  out.push_back(symbol("tinymlir_c" #name "_" #dtype, &tinymlir_c##name##_##dtype));
  TINYMLIR_COMPLEX_FUNCTIONS(TINYMLIR_COMPLEX_SYMBOL, complex64, float)
  TINYMLIR_COMPLEX_FUNCTIONS(TINYMLIR_COMPLEX_SYMBOL, complex128, double)
  TINYMLIR_COMPLEX_BINARIES(TINYMLIR_COMPLEX_SYMBOL, complex64, float)
  TINYMLIR_COMPLEX_BINARIES(TINYMLIR_COMPLEX_SYMBOL, complex128, double)
  return out;
}
