// The neural-network kernels GPT-2 runs (lib/models/nn: gelu, softmax,
// layerNorm, causalMask), compiled and checked against NumPy. GPT-2's blocks
// built of them: blocks_test.cpp.
#include "numpy_ref.h"
#include "test_util.h"

#include "models/nn/Kernels.h"

#include <tinymlir/tinymlir.h>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

using namespace tinymlir;
using tinymlir::test::allClose;
using tinymlir::test::errorOf;
using tinymlir::test::kMathUlps;
using tinymlir::test::matchesNumPy;
using tinymlir::test::numpy;
using tinymlir::test::randomArray;
using tinymlir::test::unitRoundoff;
using tinymlir::test::unitsBound;
using tinymlir::test::withinBound;

namespace {

Tensor input(const Shape &shape, DType dtype) { return detail::placeholder(0, shape, dtype); }

TEST(Kernels, GeluOfFloat32TracesToFloat64) {
  EXPECT_EQ(gelu(input({3}, f32)).dtype(), DType::f64);
}

TEST(Kernels, GeluPromotesFloat32ToFloat64LikeTheReference) {
  Array x = Array::linspace(-5, 5, 31, f32);
  auto compiled = jit(gelu);
  Array y = compiled(x);
  EXPECT_EQ(y.dtype(), DType::f64);
  // x**3, the product by 0.044715 and the sum are float32 (as in NumPy): the
  // tanh argument carries kMathUlps + 2 float32 roundings relative to
  // 0.8 * (|x| + 0.044715 |x|^3); tanh's slope is at most 1 and 0.5 x scales
  // it. The float64 tail (tanh, three operations) is covered by the float32
  // units on |x|.
  EXPECT_TRUE(matchesNumPy(
      y, "0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))", {{"x", x}},
      2 * (kMathUlps + 2 + 4) * unitRoundoff(DType::f32) / unitRoundoff(DType::f64),
      "0.5 * np.abs(x) * 0.8 * (np.abs(x) + 0.044715 * np.abs(x)**3) + np.abs(x)"));
}

TEST(Kernels, SoftmaxIsStableAndMatchesNumPy) {
  float inf = std::numeric_limits<float>::infinity();
  Array x =
      Array::fromVector<float>({10000, 9999, -10000, -10000, -9999, -10001, 0, -inf, -inf}, {3, 3});
  auto compiled = jit(softmax);
  Array p = compiled(x);
  const char *reference = "e = np.exp(x - np.max(x, axis=-1, keepdims=True))\n";
  Array want = numpy("e / np.sum(e, axis=-1, keepdims=True)", {{"x", x}}, reference);
  // Per side, relative to p: the subtraction (1) passes |x - max| ulps into
  // exp, exp kMathUlps, the division 1; the row sum of n terms (each with
  // those errors, the |x - max| part weighted by p, at most 1/e) n + 4 + n/e.
  auto bound = [&](const Array &x, const Array &p, int64_t n) {
    return unitsBound(2 * (kMathUlps + 2 + 1.4 * static_cast<double>(n)), p.dtype(),
                      "np.where(p > 0, p * (1 + np.abs(x - np.max(x, axis=-1, keepdims=True))), 0)",
                      {{"x", x}, {"p", p}});
  };
  EXPECT_TRUE(withinBound(p, want, bound(x, want, 3)));
  EXPECT_EQ(p.at({2, 0}), 1.0);
  EXPECT_EQ(p.at({2, 1}), 0.0);
  // The rows sum to 1 within the bound above, summed over 3 terms, plus the sum's 2 roundings.
  for (int64_t r = 0; r < 3; ++r)
    EXPECT_NEAR(p.at({r, 0}) + p.at({r, 1}) + p.at({r, 2}), 1.0,
                (3 * (kMathUlps + 2 + 1.4 * 3 + 2) + 2) * unitRoundoff(DType::f32));
  Array big = randomArray({4, 8, 16}, DType::f64, 9, 30.0);
  Array wantBig = numpy("e / np.sum(e, axis=-1, keepdims=True)", {{"x", big}},
                        "e = np.exp(x - np.max(x, axis=-1, keepdims=True))");
  EXPECT_TRUE(withinBound(compiled(big), wantBig, bound(big, wantBig, 16)));
}

TEST(Kernels, LayerNormWithConstantAndRandomRows) {
  Array x = randomArray({6, 32}, DType::f32, 10, 3.0);
  for (int64_t j = 0; j < 32; ++j) {
    x.set({0, j}, 7.25); // a constant row: variance 0, output = bias
    x.set({3, j}, -1e3);
  }
  Array g = randomArray({32}, DType::f32, 11), b = randomArray({32}, DType::f32, 12);
  auto compiled =
      jit([](const Tensor &x, const Tensor &g, const Tensor &b) { return layerNorm(x, g, b); });
  Array y = compiled(x, g, b);
  // Per side: the mean errs by (n + 1) u mean|x| (n = 32), the variance by
  // n + 4 roundings plus the mean's error; x - mean, sqrt, the division, the
  // gain and the bias add 5. Relative to |g| (mean|x| + |x - mean|) / s + |b|.
  EXPECT_TRUE(matchesNumPy(y,
                           "g * (x - np.mean(x, axis=-1, keepdims=True)) / "
                           "np.sqrt(np.var(x, axis=-1, keepdims=True) + 1e-5) + b",
                           {{"x", x}, {"g", g}, {"b", b}}, 2 * (32 + 4 + 5),
                           "np.abs(g) * (np.mean(np.abs(x), axis=-1, keepdims=True) + "
                           "np.abs(x - np.mean(x, axis=-1, keepdims=True))) / "
                           "np.sqrt(np.var(x, axis=-1, keepdims=True) + 1e-5) + np.abs(b)"));
  for (int64_t j = 0; j < 32; ++j)
    EXPECT_FLOAT_EQ(static_cast<float>(y.at({0, j})), static_cast<float>(b.at({j})));
}

TEST(Mask, CausalMaskMatchesNumPy) {
  for (DType d : {DType::f32, DType::f64}) {
    Tensor m = causalMask(6, d);
    Array got = evaluate(m);
    Array want = numpy(std::string("(1 - np.tri(6, dtype=np.") + dtypeName(d) + ")) * -1e10");
    EXPECT_TRUE(allClose(got, want, 0, 0)) << dtypeName(d);
  }
  EXPECT_NE(errorOf([] { causalMask(0, DType::f32); }).find("[causal_mask]"), std::string::npos);
}

TEST(Mask, CausalMaskWithRuntimeStart) {
  auto f = jit([](const Tensor &start) { return causalMask(3, 8, start, DType::f32); });
  for (int32_t s : {0, 2, 5}) {
    Array got = f(Array::scalar(s, i32));
    Array want = numpy("np.where(np.arange(8)[None, :] > np.arange(3)[:, None] + " +
                       std::to_string(s) + ", np.float32(-1e10), np.float32(0))");
    EXPECT_TRUE(allClose(got, want, 0, 0)) << "start " << s;
  }
  EXPECT_EQ(f.stats().compilations, 1u);
}

TEST(Mask, CausalMaskWithAPositionPerRow) {
  auto f = jit([](const Tensor &positions) { return causalMask(3, 8, positions, DType::f64); });
  Array positions = Array::fromVector<int32_t>({4, 0, 7}, {3});
  Array want =
      numpy("np.where(np.arange(8)[None, :] > p[:, None], -1e10, 0.0)", {{"p", positions}});
  EXPECT_TRUE(allClose(f(positions), want, 0, 0));
  std::string message = errorOf([] {
    jit([](const Tensor &p) { return causalMask(3, 8, p, DType::f32); })(
        Array::fromVector<int32_t>({1, 2}, {2}));
  });
  EXPECT_NE(message.find("[causal_mask] start must be a rank-0 int32 tensor or one of shape (3,)"),
            std::string::npos)
      << message;
}

} // namespace
