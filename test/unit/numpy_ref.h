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

} // namespace tinymlir::test
