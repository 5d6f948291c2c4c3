// Independent references: NumPy (Debian's, with NumPy 2 promotion) computes the
// expected values of a test from the same inputs.
#pragma once

#include <tinymlir/array.h>

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace tinymlir::test {

/// Evaluates `expression` (Python, with `np` and the inputs as variables) in
/// NumPy with NPY_PROMOTION_STATE=weak; `prelude` runs first (definitions).
Array numpy(const std::string &expression, const std::map<std::string, Array> &inputs = {},
            const std::string &prelude = "");

/// Random normal values (seeded), in the given dtype.
Array randomArray(const Shape &shape, DType dtype, uint64_t seed, double scale = 1.0);

/// gtest assertion: same dtype and shape, and |a - e| <= atol + rtol * |e|
/// elementwise (NaN matches NaN, infinities must match exactly).
::testing::AssertionResult allClose(const Array &actual, const Array &expected, double rtol,
                                    double atol);

// --- Error bounds -----------------------------------------------------------
// Tolerances come from the computation, not from one machine. Our code and
// NumPy's (whatever SIMD kernels, BLAS, blocking, FMA or summation order each
// picks) are both within a forward error bound of the exact result, so their
// difference is within twice that bound. Bounds are elementwise and absolute.
//
// The building blocks (Higham, "Accuracy and Stability of Numerical
// Algorithms", 2nd ed.):
// - u, the unit roundoff: 2^-24 in float32, 2^-53 in float64; one rounded
//   operation has relative error at most u.
// - gamma_n = n*u / (1 - n*u): a sum or dot product of n terms, in any order
//   and blocking (FMA included), is within gamma_n * sum|terms| of the exact
//   value (eq. 3.5 and section 4.2); so A @ B is within gamma_K * (|A| @ |B|).
// - A vectorized libm function (glibc's libmvec here, NumPy's own SIMD loops
//   there) is within kMathUlps ulp of the exact value (glibc documents at
//   most 4 ulp for libmvec; NumPy's AVX-512/AVX2 loops claim at most 4).

/// The unit roundoff u of a floating dtype: 2^-24 (float32) or 2^-53 (float64).
double unitRoundoff(DType dtype);

/// gamma_n = n*u / (1 - n*u) for the dtype.
double gamma(int64_t n, DType dtype);

/// Error of one vectorized math function call, in ulp (see above).
constexpr double kMathUlps = 4;

/// gtest assertion: same dtype and shape, and |actual - expected| <= bound
/// elementwise, `bound` being a float64 array broadcast to the shape (NumPy
/// arrays of one element or of the same shape). NaN matches NaN, infinities
/// must match exactly.
::testing::AssertionResult withinBound(const Array &actual, const Array &expected,
                                       const Array &bound);

/// The elementwise bound on |ours - NumPy's| for a product a @ b (rank 2 or
/// batched rank 3, any dtypes: computed in the promoted dtype, exact casts):
/// both are within gamma_K * (|a| @ |b|) of the exact product, plus one
/// rounding of the result, so the bound is 2 * (gamma_K + u) * (|a| @ |b|).
Array productBound(const Array &a, const Array &b);

/// Evaluates `magnitude` (a NumPy expression of the inputs, computed in
/// float64 on absolute values by the caller's choice) and scales it by
/// units * u(dtype): the bound for an expression with about `units` rounding
/// errors (ours and NumPy's together) relative to that magnitude.
Array unitsBound(double units, DType dtype, const std::string &magnitude,
                 const std::map<std::string, Array> &inputs = {});

/// Checks `actual` against NumPy's `expression` within units * u * magnitude.
::testing::AssertionResult matchesNumPy(const Array &actual, const std::string &expression,
                                        const std::map<std::string, Array> &inputs, double units,
                                        const std::string &magnitude);

} // namespace tinymlir::test
