// The core compiler end to end: traced programs compiled and checked against NumPy.
#include "test_util.h"
#include "numpy_ref.h"
#include "programs.h"

#include <tinymlir/tinymlir.h>

#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <latch>
#include <pthread.h>
#include <regex>
#include <thread>

using namespace tinymlir;
using tinymlir::test::allClose;
using tinymlir::test::count;
using tinymlir::test::errorOf;
using tinymlir::test::kMathUlps;
using tinymlir::test::layerNorm;
using tinymlir::test::matchesNumPy;
using tinymlir::test::numpy;
using tinymlir::test::randomArray;
using tinymlir::test::softmax;
using tinymlir::test::unitRoundoff;
using tinymlir::test::unitsBound;
using tinymlir::test::withinBound;

namespace {

Tensor mixed(const Tensor &x, const Tensor &y) { return x * y + x / (y * y + 3) - y; }

class Elementwise : public ::testing::TestWithParam<DType> {};

TEST_P(Elementwise, BroadcastingMatchesNumPy) {
  DType dtype = GetParam();
  auto f = jit(mixed);
  struct Case {
    Shape x, y;
  };
  for (const Case &c : {Case{{3, 7}, {7}}, Case{{3, 7}, {3, 1}}, Case{{3, 1}, {1, 7}},
                        Case{{2, 3, 4}, {3, 1}}, Case{{5}, {}}, Case{{4, 6}, {4, 6}}}) {
    Array x = randomArray(c.x, dtype, 1), y = randomArray(c.y, dtype, 2);
    Array got = f(x, y);
    // Six roundings a side; the quotient also carries the denominator's two
    // (relative to its own size): at most 8 units of each term's magnitude.
    EXPECT_TRUE(matchesNumPy(got, "x * y + x / (y * y + 3) - y", {{"x", x}, {"y", y}}, 2 * 8,
                             "np.abs(x * y) + np.abs(x / (y * y + 3)) + np.abs(y)"))
        << shapeString(c.x) << " and " << shapeString(c.y);
  }
}

TEST_P(Elementwise, UnaryFunctionsMatchNumPy) {
  DType dtype = GetParam();
  auto f = jit([](const Tensor &x) {
    return exp(-x) + tanh(x) * sqrt(x * x + 1) - pow(x * x + 0.5, 1.5) + pow(x, 3);
  });
  Array x = randomArray({4, 9}, dtype, 3);
  // Per side, relative to each term: exp and tanh kMathUlps each; the sqrt
  // term 3 (product, sum, sqrt) and tanh's; pow(z, 1.5) kMathUlps plus 1.5
  // times z's 2; x**3 kMathUlps (NumPy's pow; ours multiplies, 2); 3 sums.
  double units = 2 * (5 * kMathUlps + 3 + 3 + 3);
  EXPECT_TRUE(matchesNumPy(
      f(x), "np.exp(-x) + np.tanh(x) * np.sqrt(x * x + 1) - (x * x + 0.5) ** 1.5 + x**3",
      {{"x", x}}, units,
      "np.exp(-x) + np.abs(np.tanh(x)) * np.sqrt(x * x + 1) + (x * x + 0.5) ** 1.5 + "
      "np.abs(x)**3"));
}

INSTANTIATE_TEST_SUITE_P(Dtypes, Elementwise, ::testing::Values(DType::f32, DType::f64),
                         [](const auto &info) { return std::string(dtypeName(info.param)); });

TEST(Promotion, MixedDtypesFollowNumPy2) {
  Array a32 = randomArray({3, 4}, DType::f32, 4), a64 = randomArray({4}, DType::f64, 5);
  Array n32 = randomArray({3, 4}, DType::i32, 6);
  auto add = jit([](const Tensor &x, const Tensor &y) { return x + y; });
  // One correctly rounded operation on exactly converted inputs (float32 and
  // int32 are exact in float64): bit-identical, whatever the machine.
  EXPECT_TRUE(allClose(add(a32, a64), numpy("x + y", {{"x", a32}, {"y", a64}}), 0, 0));
  EXPECT_TRUE(allClose(add(n32, a32), numpy("x + y", {{"x", n32}, {"y", a32}}), 0, 0));
  EXPECT_TRUE(allClose(add(n32, n32), numpy("x + x", {{"x", n32}}), 0, 0));
  // Weak literals: an int keeps int32, a float with int32 gives float64,
  // a float with float32 stays float32; a typed float64 scalar promotes.
  auto intLiteral = jit([](const Tensor &x) { return x * 2 - 1; });
  auto floatLiteral = jit([](const Tensor &x) { return x * 0.5; });
  auto typed = jit([](const Tensor &x) { return x * f64(0.1); });
  EXPECT_TRUE(allClose(intLiteral(n32), numpy("x * 2 - 1", {{"x", n32}}), 0, 0));
  EXPECT_TRUE(allClose(floatLiteral(n32), numpy("x * 0.5", {{"x", n32}}), 0, 0));
  EXPECT_TRUE(allClose(floatLiteral(a32), numpy("x * 0.5", {{"x", a32}}), 0, 0));
  EXPECT_TRUE(allClose(typed(a32), numpy("x * np.float64(0.1)", {{"x", a32}}), 0, 0));
  auto casts = jit([](const Tensor &x) { return cast(x, DType::f32) + x.astype(DType::f64); });
  EXPECT_TRUE(allClose(casts(n32),
                       numpy("x.astype(np.float32) + x.astype(np.float64)", {{"x", n32}}), 0, 0));
}

// --- Reductions ------------------------------------------------------------------

struct ReductionCase {
  const char *name;
  std::optional<int64_t> axis;
  bool keepdims;
};

class Reductions : public ::testing::TestWithParam<DType> {};

TEST_P(Reductions, EveryAxisWithAndWithoutKeepdims) {
  DType dtype = GetParam();
  Array x = randomArray({2, 3, 5}, dtype, 7);
  for (std::optional<int64_t> axis :
       {std::optional<int64_t>{}, std::optional<int64_t>{0}, std::optional<int64_t>{1},
        std::optional<int64_t>{2}, std::optional<int64_t>{-1}, std::optional<int64_t>{-3}}) {
    for (bool keepdims : {false, true}) {
      std::string args = std::string("axis=") + (axis ? std::to_string(*axis) : "None") +
                         ", keepdims=" + (keepdims ? "True" : "False");
      const char *names[] = {"sum", "max", "mean", "var", "min"};
      for (int which = 0; which < 5; ++which) {
        auto g = jit([which, axis, keepdims](const Tensor &t) {
          switch (which) {
          case 0:
            return sum(t, axis, keepdims);
          case 1:
            return max(t, axis, keepdims);
          case 2:
            return mean(t, axis, keepdims);
          case 3:
            return var(t, axis, keepdims);
          default:
            return min(t, axis, keepdims);
          }
        });
        // n <= 30 terms: a sum is within gamma_n of sum|x|; a mean adds a
        // division; a variance adds the mean's error times the deviations
        // (first order) and n + 3 roundings of the sum of squares. max and
        // min are exact.
        const char *magnitudes[] = {
            "np.sum(np.abs(x), {a})", "np.zeros(np.shape(np.max(x, {a})))",
            "np.mean(np.abs(x), {a}) + np.abs(np.mean(x, {a}))",
            ("np.var(x, {a}) + 2 * np.mean(np.abs(x - np.mean(x, {k})), {a}) * "
             "np.mean(np.abs(x), {a})"),
            "np.zeros(np.shape(np.min(x, {a})))"};
        std::string magnitude = std::regex_replace(magnitudes[which], std::regex("\\{a\\}"), args);
        magnitude = std::regex_replace(
            magnitude, std::regex("\\{k\\}"),
            std::string("axis=") + (axis ? std::to_string(*axis) : "None") + ", keepdims=True");
        EXPECT_TRUE(matchesNumPy(g(x), std::string("np.") + names[which] + "(x, " + args + ")",
                                 {{"x", x}}, 2 * (30 + 4), magnitude))
            << names[which] << "(" << args << ")";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, Reductions, ::testing::Values(DType::f32, DType::f64),
                         [](const auto &info) { return std::string(dtypeName(info.param)); });

TEST(Reductions, IntegerMax) {
  Array x = randomArray({4, 6}, DType::i32, 8);
  auto f = jit([](const Tensor &t) { return max(t, 1); });
  EXPECT_TRUE(allClose(f(x), numpy("np.max(x, axis=1)", {{"x", x}}), 0, 0));
  auto g = jit([](const Tensor &t) { return min(t, 0); });
  EXPECT_TRUE(allClose(g(x), numpy("np.min(x, axis=0)", {{"x", x}}), 0, 0));
}

// --- exp around its underflow threshold (the masked scores' path) -------------------

TEST(Kernels, ExpAroundTheUnderflowThreshold) {
  // exp below the threshold is computed as 0 without calling exp (the masked
  // scores' path); around it, exp itself: subnormal results, NaN and the
  // infinities as NumPy has them. 16 values so that vector lanes are used.
  const double inf = std::numeric_limits<double>::infinity(),
               nan = std::numeric_limits<double>::quiet_NaN();
  auto ex = jit([](const Tensor &x) { return exp(x); });
  Array x64 = Array::fromVector<double>({-1e10, -inf, -746.0, -745.2, -745.13, -745.0, -744.0,
                                         -708.5, -700.0, 0.0, 1.0, 709.0, 710.0, inf, nan, -1e300},
                                        {16});
  // NaN as NaN, infinities and 0 exactly, the rest within kMathUlps ulp a
  // side: relative to the value, or of the smallest subnormal below the
  // normal range (where an ulp is fixed).
  auto expectSame = [](const Array &got, const Array &want, const Array &x, double u, double tiny) {
    for (int64_t i = 0; i < x.shape()[0]; ++i) {
      double g = got.at({i}), w = want.at({i});
      if (std::isnan(w))
        EXPECT_TRUE(std::isnan(g)) << "exp(" << x.at({i}) << ")";
      else if (std::isinf(w) || w == 0)
        EXPECT_EQ(g, w) << "exp(" << x.at({i}) << ")";
      else
        EXPECT_NEAR(g, w, 2 * kMathUlps * (std::abs(w) * u + tiny)) << "exp(" << x.at({i}) << ")";
    }
  };
  expectSame(ex(x64), numpy("np.exp(x)", {{"x", x64}}), x64, unitRoundoff(DType::f64),
             std::numeric_limits<double>::denorm_min());
  Array x32 =
      Array::fromVector<float>({-1e10f, -104.5f, -104.0f, -103.9f, -103.0f, -87.5f, 0.0f, 88.0f,
                                89.0f, -1e30f, 1.0f, -50.0f, -105.0f, -200.0f, -103.97f, 2.0f},
                               {16});
  expectSame(ex(x32), numpy("np.exp(x)", {{"x", x32}}), x32, unitRoundoff(DType::f32),
             std::numeric_limits<float>::denorm_min());
}

// --- Rank 0, constants, trees, aliasing ----------------------------------------------

TEST(Jit, RankZeroInputsAndOutputs) {
  Array s = Array::scalar(2.5, f32);
  Array v = randomArray({5}, DType::f32, 13);
  auto scale = jit([](const Tensor &a, const Tensor &x) { return a * x; });
  // One correctly rounded product: bit-identical.
  EXPECT_TRUE(allClose(scale(s, v), numpy("a * x", {{"a", s}, {"x", v}}), 0, 0));
  auto total = jit([](const Tensor &x) { return sum(x) * 2; });
  Array t = total(v);
  EXPECT_EQ(t.rank(), 0);
  // A sum of 5 terms (gamma_5 sum|x|), doubled exactly.
  EXPECT_TRUE(matchesNumPy(t, "np.sum(x) * 2", {{"x", v}}, 2 * 5, "2 * np.sum(np.abs(x))"));
  auto square = jit([](const Tensor &a) { return a * a + 1; });
  Array r = square(s);
  EXPECT_EQ(r.rank(), 0);
  EXPECT_EQ(r.at({}), 7.25);
}

TEST(Jit, DeepGraphsCompileOnAStackOfTheirOwn) {
  // 600 chained multiply-adds: the builder recurses once per node (1200 deep,
  // about 1.5 MB of stack). Compiled from a thread with a 512 KiB stack, this
  // overflowed it before compileGraph moved graphs over 1000 deep to a stack
  // sized for them (a 7000-step loop overflowed Python's main thread).
  constexpr int kSteps = 600;
  Array x = randomArray({4}, DType::f32, 5);
  auto chain = jit([](const Tensor &x) {
    Tensor y = x;
    for (int i = 0; i < kSteps; ++i)
      y = y * f32(1.0001) + f32(0.001);
    return y;
  });
  struct Call {
    decltype(chain) *f;
    Array *x, out;
    std::string error;
  } call{&chain, &x, Array(), ""};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 512 << 10);
  pthread_t thread;
  auto body = [](void *p) -> void * {
    auto *c = static_cast<Call *>(p);
    try {
      c->out = (*c->f)(*c->x);
    } catch (const std::exception &e) {
      c->error = e.what();
    }
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attr, body, &call), 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  ASSERT_EQ(call.error, "");
  // Each step rounds twice (or once, fused): y_k within 2u|y_k| of exact per
  // step, amplified by at most 1.0001^600 < 1.07 and |y_k| < |x| + 0.6 * 1.07;
  // ours and NumPy's each within 600 * 2u * 1.07 * (|x| + 0.65).
  double most = 0;
  for (int64_t i = 0; i < 4; ++i)
    most = std::max(most, std::abs(x.at({i})));
  const double bound = 2 * kSteps * 2 * unitRoundoff(DType::f32) * 1.07 * (most + 0.65);
  EXPECT_TRUE(allClose(call.out,
                       numpy("chain(x)", {{"x", x}},
                             "def chain(y):\n  for _ in range(600):\n"
                             "    y = y * np.float32(1.0001) + np.float32(0.001)\n  return y\n"),
                       0, bound));
}

TEST(Jit, TemporariesComeFromTheArraysMemory) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer build: freed blocks are not kept (Memory.cpp)";
#endif
  // A 512x512 float32 product's result (1 MiB) is a temporary of the
  // function: generated code allocates it through allocateMemory, so it is
  // kept for the next call once freed (finalize-memref-to-llvm lowers
  // memref.alloc to malloc if the pipeline's order is wrong).
  Array a = randomArray({512, 512}, DType::f32, 3);
  auto f = jit([](const Tensor &x) { return sum(matmul(x, x), 1); });
  Array first = f(a);
  releaseMemory();
  Array second = f(a);
  EXPECT_GE(releaseMemory(), size_t{1} << 20);
  EXPECT_TRUE(allClose(first, second, 0, 0));
}

TEST(Jit, CapturedArraysAreLiftedToArgumentsNotBaked) {
  Array table = Array::fromVector<float>({1, 2, 3, 4}, {4});
  auto f = jit([table](const Tensor &x) { return x * table + table; });
  Array x = Array::full({2, 4}, 2.0, f32);
  Array first = f(x);
  EXPECT_TRUE(allClose(first, numpy("x * t + t", {{"x", x}, {"t", table}}), 0, 0));
  const Compiled c = f.compile(x);
  // One input, one lifted constant (used twice, passed once), one output.
  EXPECT_EQ(count(c.module(), "bufferization.to_tensor"), 2) << c.module();
  EXPECT_EQ(c.module().find("dense<[1.0"), std::string::npos) << "constant values baked into IR";
  // New values in the captured array are seen without recompiling.
  static_cast<float *>(table.data())[0] = 10;
  Array second = f(x);
  EXPECT_EQ(second.at({1, 0}), 30.0);
  EXPECT_EQ(f.stats().compilations, 1u);
}

struct Affine {
  Tensor gain, bias;
};
TINYMLIR_FIELDS(Affine, gain, bias)

TEST(Jit, ArgumentTreesAreTakenApartRecursively) {
  Array x = randomArray({3, 4}, DType::f32, 14), g = randomArray({4}, DType::f32, 15),
        b = randomArray({4}, DType::f32, 16);
  auto f = jit([](const std::vector<Tensor> &xs, const std::map<std::string, Tensor> &named,
                  const std::tuple<Affine, double> &rest) {
    const auto &[affine, scale] = rest;
    return (xs[0] + xs[1]) * affine.gain + affine.bias * named.at("k") * scale;
  });
  Array y = f(std::vector<Tensor>{x, x}, std::map<std::string, Tensor>{{"k", g}},
              std::tuple<Affine, double>{Affine{g, b}, 3.0});
  // Four roundings a side (x + x is exact).
  EXPECT_TRUE(matchesNumPy(y, "(x + x) * g + b * g * 3.0", {{"x", x}, {"g", g}, {"b", b}}, 2 * 4,
                           "np.abs(2 * x * g) + np.abs(b * g * 3.0)"));
  // The static double is part of the key: a new value compiles a new specialization.
  f(std::vector<Tensor>{x, x}, std::map<std::string, Tensor>{{"k", g}},
    std::tuple<Affine, double>{Affine{g, b}, 3.0});
  EXPECT_EQ(f.stats().compilations, 1u);
  f(std::vector<Tensor>{x, x}, std::map<std::string, Tensor>{{"k", g}},
    std::tuple<Affine, double>{Affine{g, b}, 4.0});
  EXPECT_EQ(f.stats().compilations, 2u);
  // So is the tree's structure.
  f(std::vector<Tensor>{x, x, x}, std::map<std::string, Tensor>{{"k", g}},
    std::tuple<Affine, double>{Affine{g, b}, 4.0});
  EXPECT_EQ(f.stats().compilations, 3u);
}

TEST(Jit, KeysFollowKeyHsGrammar) {
  // The grammar of include/tinymlir/key.h, as test_call_path.py's Python key.
  std::tuple<Tensor, std::tuple<bool, int, double>, std::map<std::string, std::string>> tree{
      Tensor(Array::zeros({2, 3}, DType::f32)), {true, 7, 0.5}, {{"k", "ab"}}};
  detail::Flattener flat;
  detail::walk(tree, flat);
  EXPECT_EQ(flat.key.text(), "(A<f4[2,3,](T;i7;f3fe0000000000000;){k1:ks2:ab})");
  EXPECT_EQ(flat.leaves.size(), 1u);
}

TEST(Jit, NestedJitInlinesWhileTracing) {
  auto inner = jit([](const Tensor &x) { return tanh(x) * 2; });
  auto outer = jit([&inner](const Tensor &x) { return inner(x) + inner(x * 3); });
  Array x = randomArray({8}, DType::f64, 17);
  // tanh kMathUlps each (x * 3 rounds once, tanh's condition is below 1), one sum.
  EXPECT_TRUE(matchesNumPy(outer(x), "np.tanh(x) * 2 + np.tanh(x * 3) * 2", {{"x", x}},
                           2 * (kMathUlps + 2),
                           "2 * np.abs(np.tanh(x)) + 2 * np.abs(np.tanh(x * 3))"));
  EXPECT_EQ(inner.stats().compilations, 0u) << "the inner function was inlined, not compiled";
  std::string module = outer.compile(x).module();
  EXPECT_EQ(count(module, "func.func"), 1);
  EXPECT_EQ(count(module, "math.tanh"), 2);
}

TEST(Jit, ReusedNodesAreEmittedOnce) {
  auto f = jit([](const Tensor &x) {
    Tensor e = exp(x);
    return e * e + e;
  });
  std::string module = f.compile(Array::zeros({4}, f32)).module();
  EXPECT_EQ(count(module, "math.exp"), 1) << module;
}

TEST(Jit, AliasingInputsAreCopied) {
  Array x = Array::arange(12, f64);
  auto f = jit([](const Tensor &a, const Tensor &b) { return a * 10 + b; });
  // The same array twice.
  EXPECT_TRUE(allClose(f(x, x), numpy("x * 10 + x", {{"x", x}}), 0, 0));
  // Overlapping views of one buffer, at different offsets.
  Array a = x.sliced(0, 0, 8), b = x.sliced(0, 4, 12);
  EXPECT_TRUE(allClose(f(a, b), numpy("x[0:8] * 10 + x[4:12]", {{"x", x}}), 0, 0));
  // A transposed (non-contiguous) view is made contiguous.
  Array m = Array::arange(12, f64).reshaped({3, 4});
  auto g = jit([](const Tensor &p, const Tensor &q) { return p - q; });
  Array mt = m.transposed({1, 0});
  Array want = numpy("m.T - m.T.copy()", {{"m", m}});
  EXPECT_TRUE(allClose(g(mt, mt.copy()), want, 0, 0));
}

// --- Fusion --------------------------------------------------------------------------

TEST(Fusion, AffineActivationFusesThreeGenericsIntoOne) {
  auto f = [](const Tensor &x, const Tensor &gain, const Tensor &bias) {
    return (x * gain + bias) * 0.5;
  };
  Array x = randomArray({16, 8}, DType::f32, 18), g = randomArray({8}, DType::f32, 19),
        b = randomArray({8}, DType::f32, 20);
  auto fused = jit(f);
  JitOptions plain;
  plain.optimize = false;
  auto unfused = jit(f, plain);
  Compiled c = fused.compile(x, g, b), u = unfused.compile(x, g, b);
  EXPECT_EQ(count(c.module(), "linalg.generic"), 3) << c.module();
  EXPECT_EQ(count(c.optimized(), "linalg.generic"), 1) << c.optimized();
  EXPECT_EQ(count(u.optimized(), "linalg.generic"), 3);
  Array y1 = fused(x, g, b), y2 = unfused(x, g, b);
  EXPECT_TRUE(allClose(y1, y2, 0, 0));
  // Two roundings a side (the halving is exact).
  EXPECT_TRUE(matchesNumPy(y1, "(x * g + b) * 0.5", {{"x", x}, {"g", g}, {"b", b}}, 2 * 2,
                           "(np.abs(x * g) + np.abs(b)) * 0.5"));
  EXPECT_NE(c.lowered().find("llvm.func"), std::string::npos);
  EXPECT_EQ(c.lowered().find("linalg."), std::string::npos);
}

TEST(Module, BoundaryFollowsTheContract) {
  auto f = jit([](const Tensor &x) { return sum(x * 2, 0); });
  std::string m = f.compile(Array::zeros({3, 4}, f32)).module();
  EXPECT_NE(m.find("llvm.emit_c_interface"), std::string::npos);
  EXPECT_NE(m.find("bufferization.to_tensor %arg0 restrict"), std::string::npos) << m;
  EXPECT_NE(m.find("bufferization.materialize_in_destination"), std::string::npos);
  EXPECT_NE(m.find("restrict writable %arg1"), std::string::npos) << m;
  EXPECT_NE(m.find("linalg.fill"), std::string::npos);
  EXPECT_NE(m.find("linalg.reduce"), std::string::npos);
  EXPECT_NE(m.find("memref<3x4xf32>, %arg1: memref<4xf32>"), std::string::npos) << m;
}

// --- Errors ---------------------------------------------------------------------------

TEST(Errors, CallTimeShapeAndDtypeMismatchesNameTheInput) {
  auto f = jit([](const Tensor &x) { return x + 1; });
  Compiled c = f.compile(Array::zeros({3, 7}, f32));
  EXPECT_EQ(errorOf([&] { c.call({Array::zeros({3, 5}, f32)}); }),
            "[call] input 0 is float32 (3, 5) but this specialization was compiled for float32 "
            "(3, 7)");
  EXPECT_NE(errorOf([&] { c.call({Array::zeros({3, 7}, f64)}); }).find("float64 (3, 7)"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { c.call({}); }).find("[call] expected 1 inputs, got 0"),
            std::string::npos);
}

TEST(Errors, TracingErrorsNameTheOpAndShapes) {
  auto badBroadcast = jit([](const Tensor &a, const Tensor &b) { return a + b; });
  EXPECT_EQ(errorOf([&] { badBroadcast(Array::zeros({3, 7}, f32), Array::zeros({5}, f32)); }),
            "[add] cannot broadcast shapes (3, 7) and (5,)");
  auto badAxis = jit([](const Tensor &a) { return sum(a, 2); });
  EXPECT_EQ(errorOf([&] { badAxis(Array::zeros({3, 7}, f32)); }),
            "[sum] axis 2 is out of bounds for array of dimension 2");
  auto intPow = jit([](const Tensor &a) { return pow(a, -1); });
  EXPECT_EQ(errorOf([&] { intPow(Array::zeros({4}, i32)); }),
            "[pow] Integers to negative integer powers are not allowed.");
  // An array exponent is checked when the kernel runs (ops.def's Require).
  auto arrayPow = jit([](const Tensor &a, const Tensor &p) { return pow(a, p); });
  Array exponents = Array::fromVector<int32_t>({-1, 0, 1, 2}, {4});
  EXPECT_EQ(errorOf([&] { arrayPow(Array::arange(4, i32), exponents); }),
            "Integers to negative integer powers are not allowed.");
  EXPECT_TRUE(allClose(arrayPow(Array::arange(4, i32), Array::arange(4, i32)),
                       numpy("x ** x", {{"x", Array::arange(4, i32)}}), 0, 0));
  // An int32 mean is NumPy's: float64 (exact here: 4 small integers).
  auto intMean = jit([](const Tensor &a) { return mean(a); });
  Array ints = Array::arange(4, i32);
  EXPECT_TRUE(allClose(intMean(ints), numpy("np.mean(x)", {{"x", ints}}), 0, 0));
  // Nothing was compiled for programs that failed to trace.
  EXPECT_EQ(badBroadcast.stats().compilations, 0u);
}

// --- Cache and memory ---------------------------------------------------------------

long residentKiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0)
      return std::stol(line.substr(6));
  return -1;
}

TEST(Cache, CompilesOncePerSpecialization) {
  auto f = jit(softmax);
  Array a = randomArray({4, 8}, DType::f32, 21), b = randomArray({4, 8}, DType::f32, 22);
  f(a);
  f(b);
  f(a);
  EXPECT_EQ(f.stats().compilations, 1u);
  EXPECT_EQ(f.stats().hits, 2u);
  f(randomArray({5, 8}, DType::f32, 23)); // new shape
  f(randomArray({4, 8}, DType::f64, 24)); // new dtype
  EXPECT_EQ(f.stats().compilations, 3u);
  EXPECT_EQ(f.stats().size, 3u);
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TINYMLIR_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define TINYMLIR_ASAN 1
#endif

TEST(Cache, RepeatedCallsKeepMemoryFlat) {
#ifdef TINYMLIR_ASAN
  GTEST_SKIP() << "AddressSanitizer's allocator quarantines and caches freed memory, so resident "
                  "size says nothing here; LeakSanitizer checks for leaks in this build instead";
#endif
  auto f = jit([](const Tensor &x, const Tensor &g, const Tensor &b) {
    return layerNorm(x, g, b) + softmax(x);
  });
  Array x = randomArray({64, 256}, DType::f32, 25), g = randomArray({256}, DType::f32, 26),
        b = randomArray({256}, DType::f32, 27);
  for (int i = 0; i < 50; ++i)
    f(x, g, b);
  long before = residentKiB();
  for (int i = 0; i < 1000; ++i)
    f(x, g, b);
  long after = residentKiB();
  std::cout << "resident memory: " << before << " KiB before, " << after << " KiB after\n";
  EXPECT_LT(after - before, 1024) << "resident memory grew from " << before << " KiB to " << after
                                  << " KiB over 1000 calls";
  EXPECT_EQ(f.stats().compilations, 1u);
}

TEST(Cache, LeastRecentlyUsedEvictionBoundsTheCache) {
  JitOptions options;
  options.cacheLimit = 2;
  auto f = jit([](const Tensor &x) { return x * 2; }, options);
  for (int64_t n = 1; n <= 5; ++n)
    f(Array::zeros({n}, f32));
  EXPECT_EQ(f.stats().size, 2u);
  EXPECT_EQ(f.stats().evictions, 3u);
  f(Array::zeros({5}, f32)); // most recent: still cached
  EXPECT_EQ(f.stats().compilations, 5u);
  f.clearCache();
  EXPECT_EQ(f.stats().size, 0u);
}

TEST(Cache, MemoryStaysFlatOverAStreamOfShapes) {
#ifdef TINYMLIR_ASAN
  GTEST_SKIP() << "AddressSanitizer's allocator quarantines and caches freed memory, so resident "
                  "size says nothing here; LeakSanitizer checks for leaks in this build instead";
#endif
  JitOptions options;
  options.cacheLimit = 4;
  auto f = jit([](const Tensor &x) { return softmax(x) * 2; }, options);
  auto stream = [&](int64_t from, int64_t to) {
    for (int64_t n = from; n < to; ++n)
      f(Array::full({3, n}, 1.0, f32));
  };
  stream(1, 21);
  long before = residentKiB();
  stream(21, 81);
  long after = residentKiB();
  std::cout << "resident memory: " << before << " KiB after 20 shapes, " << after
            << " KiB after 80\n";
  EXPECT_EQ(f.stats().size, 4u);
  EXPECT_EQ(f.stats().compilations, 80u);
  EXPECT_LT(after - before, 16 * 1024)
      << "resident memory grew by " << (after - before) << " KiB over 60 evicted specializations";
}

TEST(Evaluate, EagerTensorsCompileOnDemand) {
  Tensor a = Array::fromVector<double>({1, 2, 3}, {3});
  Array r = evaluate(a * a + 1);
  EXPECT_TRUE(allClose(r, Array::fromVector<double>({2, 5, 10}, {3}), 0, 0));
}

} // namespace

// --- Threads, named CPUs, special values, empty shapes, int32, broadcasting ----------

namespace {

TEST(Jit, ThreadsCallingWhileItCompilesShareOneCompilation) {
  auto f = jit([](const Tensor &x) { return tanh(x) * 3 + x; });
  Array x = randomArray({64, 33}, DType::f32, 40);
  constexpr int kThreads = 4;
  std::latch start(kThreads);
  std::vector<Array> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      start.arrive_and_wait(); // all call at once, before any compilation is done
      results[t] = f(x);
    });
  for (auto &t : threads)
    t.join();
  for (const Array &r : results)
    // tanh kMathUlps, the product and the sum: a side.
    EXPECT_TRUE(matchesNumPy(r, "np.tanh(x) * 3 + x", {{"x", x}}, 2 * (kMathUlps + 2),
                             "3 * np.abs(np.tanh(x)) + np.abs(x)"));
  EXPECT_EQ(f.stats().compilations, 1u) << "each thread compiled its own copy";
  EXPECT_EQ(f.stats().hits, static_cast<size_t>(kThreads - 1));
}

TEST(Jit, CompiledSaysWhetherACallWouldCompile) {
  auto f = jit([](const Tensor &x, int64_t n) { return x * static_cast<double>(n); });
  Array x = randomArray({4, 3}, DType::f32, 41);
  EXPECT_FALSE(f.compiled(x, 2));
  f.compile(x, 2);
  EXPECT_TRUE(f.compiled(x, 2));
  EXPECT_TRUE(f.compiled(randomArray({4, 3}, DType::f32, 42), 2))
      << "values are not part of the key";
  EXPECT_FALSE(f.compiled(x, 3)) << "another static";
  EXPECT_FALSE(f.compiled(randomArray({4, 4}, DType::f32, 41), 2)) << "another shape";
  EXPECT_FALSE(f.compiled(x.astype(DType::f64), 2)) << "another dtype";
  EXPECT_EQ(f.stats().compilations, 1u) << "compiled() compiles nothing";
}

TEST(Jit, CompilesOnSeveralThreadsAtOnce) {
  // Each compile borrows an MLIR context from a pool and gives it back, and a
  // context is dropped after 32 compiles (lib/passes/Registration.cpp): four
  // threads compile 40 specializations each, all at the same time, more than
  // one context's lifetime.
  auto f = jit([](const Tensor &x) { return x * 2 + 1; });
  constexpr int kThreads = 4, kShapes = 40;
  std::latch start(kThreads);
  std::vector<std::string> wrong(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int s = 0; s < kShapes && wrong[t].empty(); ++s) {
        const int64_t n = 1 + t * kShapes + s; // a length no other thread compiles
        std::vector<float> x(n);
        for (int64_t i = 0; i < n; ++i)
          x[i] = static_cast<float>(i % 97) - 48; // small integers: exact results
        Array r = f(Array::fromVector<float>(x, {n}));
        std::vector<float> y = r.toVector<float>();
        for (int64_t i = 0; i < n && wrong[t].empty(); ++i)
          if (y[i] != 2 * x[i] + 1)
            wrong[t] = "length " + std::to_string(n) + " at " + std::to_string(i) + ": " +
                       std::to_string(y[i]) + " for x = " + std::to_string(x[i]);
      }
    });
  for (auto &t : threads)
    t.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(wrong[t], "") << "thread " << t;
  EXPECT_EQ(f.stats().compilations, static_cast<size_t>(kThreads * kShapes));
}

TEST(Jit, ACompileErrorReachesEveryWaitingThreadAndIsNotCached) {
  auto f = jit([](const Tensor &a, const Tensor &b) { return matmul(a, b); });
  Array a = randomArray({3, 5}, DType::f32, 1), b = randomArray({4, 7}, DType::f32, 2);
  std::latch start(3);
  std::vector<std::string> errors(3);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      errors[t] = errorOf([&] { f(a, b); });
    });
  for (auto &t : threads)
    t.join();
  for (const std::string &e : errors)
    EXPECT_EQ(e, "[matmul] inner dimensions differ: (3, 5) @ (4, 7)");
  EXPECT_EQ(f.stats().size, 0u);
}

/// Sets environment variables for a scope.
class ScopedEnv {
public:
  explicit ScopedEnv(std::vector<std::pair<const char *, const char *>> values) {
    for (auto [name, value] : values) {
      const char *old = std::getenv(name);
      saved_.push_back({name, old ? std::optional<std::string>(old) : std::nullopt});
      setenv(name, value, 1);
    }
  }
  ~ScopedEnv() {
    for (auto &[name, old] : saved_)
      old ? setenv(name, old->c_str(), 1) : unsetenv(name);
  }

private:
  std::vector<std::pair<const char *, std::optional<std::string>>> saved_;
};

TEST(Options, TheEnvironmentSuppliesDefaultsThatCodeOverrides) {
  {
    ScopedEnv env({{"TINYMLIR_BLAS", "0"},
                   {"TINYMLIR_OPT_LEVEL", "1"},
                   {"TINYMLIR_VECTOR_MATH", "off"},
                   {"TINYMLIR_GPU_EMULATE", "1"},
                   {"TINYMLIR_GPU_CHIPS", "sm_80"},
                   {"TINYMLIR_GPU_MATMUL_TILE", "2x4"},
                   {"TINYMLIR_CACHE", "0"},
                   {"TINYMLIR_CACHE_DIR", "/nonexistent"},
                   {"TINYMLIR_TIMING", "1"}});
    JitOptions o;
    EXPECT_FALSE(o.blas);
    EXPECT_EQ(o.optLevel, 1);
    EXPECT_FALSE(o.vectorMath);
    EXPECT_TRUE(o.gpuEmulate);
    EXPECT_EQ(o.gpuChips, "sm_80");
    EXPECT_EQ(o.gpuMatmulTile, "2x4");
    EXPECT_FALSE(o.diskCache);
    EXPECT_EQ(o.cacheDir, ""); // TINYMLIR_CACHE=0 wins over the directory
    EXPECT_TRUE(o.timing);
    // A field set in code wins: BLAS on although TINYMLIR_BLAS=0.
    Array a = randomArray({8, 12}, DType::f32, 3), b = randomArray({12, 5}, DType::f32, 4);
    o.blas = true;
    o.timing = false;
    auto product = [](const Tensor &x, const Tensor &y) { return matmul(x, y); };
    EXPECT_EQ(jit(product, o).compile(a, b).blasCalls(), 1);
  }
  { // The libdevice under $CUDA_HOME is the default, and it is what the GPU pipeline links.
    auto home =
        std::filesystem::temp_directory_path() / ("tinymlir-cuda-" + std::to_string(getpid()));
    std::filesystem::create_directories(home / "nvvm" / "libdevice");
    std::ofstream(home / "nvvm" / "libdevice" / "libdevice.10.bc") << "bitcode";
    ScopedEnv env({{"CUDA_HOME", home.c_str()}});
    JitOptions o;
    o.target = Target::GPU;
    const std::string found = (home / "nvvm" / "libdevice" / "libdevice.10.bc").string();
    EXPECT_EQ(detail::libdevice(o), found);
    EXPECT_NE(printablePipeline(o).find("libdevice=" + found), std::string::npos)
        << printablePipeline(o);
    o.gpuLibdevice = "/elsewhere/libdevice.bc";
    EXPECT_NE(printablePipeline(o).find("libdevice=/elsewhere/libdevice.bc"), std::string::npos)
        << printablePipeline(o);
    std::filesystem::remove_all(home);
  }
  // Options that change the code are in the specialization key.
  JitOptions plain, noVectorMath;
  noVectorMath.vectorMath = false;
  EXPECT_NE(detail::optionsKey(plain), detail::optionsKey(noVectorMath));
  // A malformed value names the variable.
  for (auto [name, value] : std::vector<std::pair<const char *, const char *>>{
           {"TINYMLIR_OPT_LEVEL", "9"}, {"TINYMLIR_BLAS", "maybe"}}) {
    ScopedEnv env({{name, value}});
    std::string error = errorOf([] { JitOptions bad; });
    EXPECT_NE(error.find(std::string("[options] ") + name + "='" + value + "'"), std::string::npos)
        << error;
  }
}

TEST(Jit, CodeForANamedCpu) {
  auto f = [](const Tensor &x, const Tensor &w) {
    return exp(matmul(x, w) * 0.1) + x.sum(1, true);
  };
  Array x = randomArray({40, 64}, DType::f32, 41), w = randomArray({64, 48}, DType::f32, 42);
  JitOptions baseline;
  baseline.cpu = "x86-64-v3"; // AVX2 + FMA: every x86-64 machine this project runs on
  auto named = jit(f, baseline);
  // Per side: the product (gamma_64, scaled by 0.1, then exp's slope e^y),
  // exp kMathUlps, the row sum gamma_64, one sum.
  EXPECT_TRUE(matchesNumPy(named(x, w), "np.exp(x @ w * 0.1) + x.sum(axis=1, keepdims=True)",
                           {{"x", x}, {"w", w}}, 2 * (64 + kMathUlps + 64 + 3),
                           "np.exp(x @ w * 0.1) * (1 + 0.1 * (np.abs(x) @ np.abs(w))) + "
                           "np.abs(x).sum(axis=1, keepdims=True)"));
  // The environment gives the default, as the test suite's AVX2 run uses it.
  const char *old = std::getenv("TINYMLIR_CPU");
  std::string saved = old ? old : "";
  setenv("TINYMLIR_CPU", "x86-64-v2", 1);
  EXPECT_EQ(JitOptions().cpu, "x86-64-v2");
  EXPECT_EQ(baseline.cpu, "x86-64-v3");
  if (old)
    setenv("TINYMLIR_CPU", saved.c_str(), 1);
  else
    unsetenv("TINYMLIR_CPU");

  JitOptions unknown;
  unknown.cpu = "pentium-9000";
  EXPECT_NE(errorOf([&] { jit(f, unknown)(x, w); }).find("[compile] unknown CPU 'pentium-9000'"),
            std::string::npos);
  // Sapphire Rapids has AMX, which no AMD CPU (and no AVX2-only CPU) has.
  JitOptions future;
  future.cpu = "sapphirerapids";
  std::string error = errorOf([&] { jit(f, future)(x, w); });
  if (error == "<no error>")
    SUCCEED() << "this host has every Sapphire Rapids feature";
  else
    EXPECT_NE(error.find("[compile] CPU 'sapphirerapids' needs features this host lacks: "),
              std::string::npos)
        << error;
}

TEST(SpecialValues, NanAndInfinitiesFollowNumPy) {
  const float inf = std::numeric_limits<float>::infinity(),
              nan = std::numeric_limits<float>::quiet_NaN();
  // Rows: a NaN, +inf, -inf, all -inf (a fully masked row), mixed infinities, finite.
  Array x = Array::fromVector<float>({1,    nan,  2,    0,    //
                                      1,    inf,  2,    0,    //
                                      1,    -inf, 2,    0,    //
                                      -inf, -inf, -inf, -inf, //
                                      inf,  -inf, 1,    0,    //
                                      0.5,  -1,   2,    0.25},
                                     {6, 4});
  Array g = Array::fromVector<float>({1, 2, 0.5, -1}, {4}),
        b = Array::fromVector<float>({0, 1, -1, 2}, {4});
  auto rowMax = jit([](const Tensor &t) { return max(t, -1); });
  EXPECT_TRUE(allClose(rowMax(x), numpy("np.max(x, axis=-1)", {{"x", x}}), 0, 0));
  auto sm = jit(softmax);
  Array p = sm(x);
  Array want = numpy("e / np.sum(e, axis=-1, keepdims=True)", {{"x", x}},
                     "import warnings\nwarnings.simplefilter('ignore')\n"
                     "e = np.exp(x - np.max(x, axis=-1, keepdims=True))");
  // Special rows exactly (NaN where NumPy has NaN); the finite row within
  // the softmax bound of 2 * (kMathUlps + 2 + 1.4 n) units of p (1 + |x - max|),
  // |x - max| <= 3 here.
  EXPECT_TRUE(allClose(p, want, 2 * (kMathUlps + 2 + 1.4 * 4) * 4 * unitRoundoff(DType::f32), 0));
  auto ln =
      jit([](const Tensor &x, const Tensor &g, const Tensor &b) { return layerNorm(x, g, b); });
  Array y = ln(x, g, b);
  Array wantLn =
      numpy("g * (x - np.mean(x, axis=-1, keepdims=True)) / "
            "np.sqrt(np.var(x, axis=-1, keepdims=True) + 1e-5) + b",
            {{"x", x}, {"g", g}, {"b", b}}, "import warnings\nwarnings.simplefilter('ignore')");
  // Rows with a NaN or an infinity are NaN throughout, as in NumPy; the
  // finite row within the layer-norm bound (2 (n + 9) units, magnitudes below 8).
  EXPECT_TRUE(allClose(y, wantLn, 0, 2 * (4 + 9) * 8 * unitRoundoff(DType::f32)));
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 4; ++j)
      EXPECT_TRUE(std::isnan(y.at({i, j}))) << i << ", " << j;
}

TEST(Shapes, ZeroSizeArraysAreNumPys) {
  // Zero-size arguments and results, as NumPy's: x * 2 of a (3, 0) array is (3, 0),
  // its sum over the empty axis is zeros.
  auto f = jit([](const Tensor &x) { return x * 2; });
  EXPECT_EQ(f(Array::zeros({3, 0}, f32)).shape(), (Shape{3, 0}));
  auto g = jit([](const Tensor &x) { return sum(x, 1) + 1; });
  EXPECT_TRUE(allClose(g(Array::zeros({3, 0}, f32)), Array::full({3}, 1.0, f32), 0, 0));
  // An empty slice inside the function is NumPy's (3, 0) array (x[:, 2:2]).
  auto empty = jit([](const Tensor &x) { return slice(x, {0, 2}, {3, 2}); });
  EXPECT_EQ(empty(Array::zeros({3, 4}, f32)).shape(), (Shape{3, 0}));
  EXPECT_NE(errorOf([&] {
              slice(Tensor(Array::zeros({3, 4}, f32)), {0, 3}, {3, 2});
            }).find("[slice] range [3, 2) on axis 1 is outside shape (3, 4)"),
            std::string::npos);
}

TEST(Int32, ArithmeticIsExactAndDivisionIsTrueDivision) {
  Array x = randomArray({5, 6}, DType::i32, 43), y = randomArray({6}, DType::i32, 44);
  for (int64_t j = 0; j < 6; ++j)
    if (y.at({j}) == 0)
      y.set({j}, 3);
  auto arith = jit([](const Tensor &a, const Tensor &b) { return a * b - a + 3 - (-b); });
  Array got = arith(x, y);
  EXPECT_EQ(got.dtype(), DType::i32);
  EXPECT_TRUE(allClose(got, numpy("x * y - x + 3 - (-y)", {{"x", x}, {"y", y}}), 0, 0));
  auto divide = jit([](const Tensor &a, const Tensor &b) { return a / b; });
  // int32 / int32 is float64 in NumPy: exact conversions, one correctly rounded division.
  EXPECT_TRUE(allClose(divide(x, y), numpy("x / y", {{"x", x}, {"y", y}}), 0, 0));
  auto big = jit([](const Tensor &a, const Tensor &b) { return maximum(a, b); });
  EXPECT_TRUE(allClose(big(x, y), numpy("np.maximum(x, y)", {{"x", x}, {"y", y}}), 0, 0));
}

TEST(Broadcasting, MaximumAndTwoSidedRankThree) {
  // (4, 1, 6) against (1, 5, 1): both sides stretch, to (4, 5, 6).
  Array a = randomArray({4, 1, 6}, DType::f32, 45), b = randomArray({1, 5, 1}, DType::f64, 46);
  auto f = jit([](const Tensor &x, const Tensor &y) { return maximum(x, y) * (x - y); });
  Array got = f(a, b);
  EXPECT_EQ(got.shape(), (Shape{4, 5, 6}));
  // float64 (promoted): the difference and the product round once each.
  EXPECT_TRUE(matchesNumPy(got, "np.maximum(a, b) * (a - b)", {{"a", a}, {"b", b}}, 2 * 2,
                           "np.abs(np.maximum(a, b) * (a - b))"));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Array p = Array::fromVector<float>({1, nan, -2, 0}, {4}),
        q = Array::fromVector<float>({nan, 3, -1, -0.0f}, {4});
  auto m = jit([](const Tensor &x, const Tensor &y) { return maximum(x, y); });
  EXPECT_TRUE(allClose(m(p, q), numpy("np.maximum(p, q)", {{"p", p}, {"q", q}}), 0, 0))
      << "np.maximum propagates NaN";
}

} // namespace

// --- log, abs, minimum, erf, sin, cos: ops added through their ops.def rows ----------------

namespace {

/// math.erf of each element (NumPy has no np.erf), in float64.
const char *kErf = "np.vectorize(__import__('math').erf, otypes=[np.float64])";

class TableOps : public ::testing::TestWithParam<DType> {};

TEST_P(TableOps, LogAbsMinimumErfMatchNumPy) {
  DType dtype = GetParam();
  Array x = randomArray({5, 7}, dtype, 61), y = randomArray({7}, dtype, 62);
  // Positive operands for log, made by NumPy: the log's own error only.
  Array z = numpy("np.abs(x) + 0.25", {{"x", x}});
  // One libm/libmvec call a side: kMathUlps of the result each.
  EXPECT_TRUE(matchesNumPy(jit([](const Tensor &t) { return log(t); })(z), "np.log(z)", {{"z", z}},
                           2 * kMathUlps, "np.abs(np.log(z))"));
  std::string erf = std::string(kErf) + "(x).astype(x.dtype)";
  EXPECT_TRUE(matchesNumPy(jit([](const Tensor &t) { return tinymlir::erf(t); })(x), erf,
                           {{"x", x}}, 2 * kMathUlps, "np.abs(" + erf + ")"));
  for (const char *f : {"sin", "cos"}) { // rows added to ops.def alone
    auto fn = jit([f](const Tensor &t) { return std::string(f) == "sin" ? sin(t) : cos(t); });
    std::string want = std::string("np.") + f + "(x)";
    EXPECT_TRUE(matchesNumPy(fn(x), want, {{"x", x}}, 2 * kMathUlps, "np.abs(" + want + ")")) << f;
  }
  // abs and minimum round nothing: equal to NumPy, broadcasting included.
  EXPECT_TRUE(allClose(jit([](const Tensor &t) { return abs(t); })(x),
                       numpy("np.abs(x)", {{"x", x}}), 0, 0));
  auto lower = jit([](const Tensor &a, const Tensor &b) { return minimum(a, b); });
  EXPECT_TRUE(allClose(lower(x, y), numpy("np.minimum(x, y)", {{"x", x}, {"y", y}}), 0, 0));
  EXPECT_TRUE(allClose(lower(y, x), numpy("np.minimum(y, x)", {{"x", x}, {"y", y}}), 0, 0));
  // Weak scalars on either side keep the tensor's dtype.
  auto scalars = jit([](const Tensor &a) { return minimum(a, 0.5) + minimum(-1, a); });
  Array s = scalars(x);
  EXPECT_EQ(s.dtype(), dtype);
  // Two exact minima, one rounded sum a side.
  EXPECT_TRUE(matchesNumPy(s, "np.minimum(x, 0.5) + np.minimum(-1, x)", {{"x", x}}, 2,
                           "np.abs(np.minimum(x, 0.5) + np.minimum(-1, x))"));
}

INSTANTIATE_TEST_SUITE_P(Dtypes, TableOps, ::testing::Values(DType::f32, DType::f64),
                         [](const auto &info) { return std::string(dtypeName(info.param)); });

TEST(TableOps, SpecialValuesAsNumPy) {
  const float nan = std::numeric_limits<float>::quiet_NaN(),
              inf = std::numeric_limits<float>::infinity();
  Array p = Array::fromVector<float>({1, nan, -2, 0, -0.0f, inf, -inf, 3}, {8}),
        q = Array::fromVector<float>({nan, 3, -1, -0.0f, 0, -inf, 2, inf}, {8});
  const std::string quiet = "import warnings\nwarnings.simplefilter('ignore')";
  auto m = jit([](const Tensor &a, const Tensor &b) { return minimum(a, b); });
  EXPECT_TRUE(allClose(m(p, q), numpy("np.minimum(p, q)", {{"p", p}, {"q", q}}), 0, 0))
      << "np.minimum propagates NaN";
  EXPECT_TRUE(allClose(m(q, p), numpy("np.minimum(q, p)", {{"p", p}, {"q", q}}), 0, 0));
  EXPECT_TRUE(allClose(jit([](const Tensor &a) { return abs(a); })(p),
                       numpy("np.abs(p)", {{"p", p}}), 0, 0));
  // log: 1 -> 0, NaN, negative -> NaN, +-0 -> -inf, inf -> inf, -inf -> NaN;
  // 3 within kMathUlps a side.
  EXPECT_TRUE(withinBound(
      jit([](const Tensor &a) { return log(a); })(p), numpy("np.log(p)", {{"p", p}}, quiet),
      unitsBound(2 * kMathUlps, DType::f32, "np.nan_to_num(np.abs(np.log(np.abs(p))), posinf=0)",
                 {{"p", p}})));
  // erf: +-0 -> +-0, +-inf -> +-1, NaN -> NaN.
  std::string erf = std::string(kErf) + "(p).astype(np.float32)";
  EXPECT_TRUE(withinBound(
      jit([](const Tensor &a) { return tinymlir::erf(a); })(p), numpy(erf, {{"p", p}}),
      unitsBound(2 * kMathUlps, DType::f32, "np.nan_to_num(np.abs(" + erf + "))", {{"p", p}})));
}

TEST(TableOps, ComparisonsWhereAndLogicalAsNumPy) {
  // Bool results, exact: nan compares false but for !=, -0 equals 0; int32
  // with float32 compares in float64 (NumPy's promotion).
  const float nan = std::numeric_limits<float>::quiet_NaN(),
              inf = std::numeric_limits<float>::infinity();
  Array p = Array::fromVector<float>({1, nan, -2, 0, -0.0f, inf, -inf, 3}, {8}),
        q = Array::fromVector<float>({nan, 3, -1, -0.0f, 0, -inf, 2, 3}, {8}),
        n = Array::fromVector<int32_t>({1, 0, -2, 7, 0, 16777217, -3, 3}, {8});
  using Fn = Tensor (*)(const Tensor &, const Tensor &);
  const std::pair<const char *, Fn> comparisons[] = {{"less", less},
                                                     {"less_equal", less_equal},
                                                     {"greater", greater},
                                                     {"greater_equal", greater_equal},
                                                     {"equal", equal},
                                                     {"not_equal", not_equal},
                                                     {"logical_and", logical_and},
                                                     {"logical_or", logical_or},
                                                     {"logical_xor", logical_xor}};
  for (auto [name, fn] : comparisons) {
    for (const Array *b : {&q, &n}) {
      Array got = jit([fn](const Tensor &x, const Tensor &y) { return fn(x, y); })(p, *b);
      EXPECT_EQ(got.dtype(), DType::b8) << name;
      EXPECT_TRUE(
          allClose(got, numpy(std::string("np.") + name + "(p, b)", {{"p", p}, {"b", *b}}), 0, 0))
          << name;
    }
  }
  auto relu = jit([](const Tensor &x, const Tensor &y) { return where(greater(x, 0), x, y); });
  EXPECT_TRUE(allClose(relu(p, q), numpy("np.where(p > 0, p, q)", {{"p", p}, {"q", q}}), 0, 0));
  auto mixed = jit([](const Tensor &x, const Tensor &k) { return where(x, k, 0.5); });
  EXPECT_TRUE(allClose(mixed(p, n), numpy("np.where(p, n, 0.5)", {{"p", p}, {"n", n}}), 0, 0));
  auto reduced = jit([](const Tensor &x) {
    return cast(any(greater(x, 2)), DType::i32) + cast(all(x), DType::i32) * 10 +
           cast(logical_not(any(less(x, -10))), DType::i32) * 100;
  });
  EXPECT_TRUE(allClose(reduced(p),
                       numpy("(np.any(p > 2).astype(np.int32) + np.all(p).astype("
                             "np.int32) * 10 + np.logical_not(np.any(p < -10)).astype("
                             "np.int32) * 100)",
                             {{"p", p}}),
                       0, 0));
  // NumPy's bool loops: bool + bool is logical or (bool), exp(bool) float16,
  // bool - bool an error; a bool with a Python int, and a sum of bools, int64.
  Tensor b = Tensor(Array::fromVector<bool>({true, false}, {2}));
  EXPECT_EQ(add(b, b).dtype(), DType::b8);
  EXPECT_NE(errorOf([&] { subtract(b, b); }).find("[sub] numpy boolean subtract"),
            std::string::npos);
  EXPECT_EQ(multiply(b, 2).dtype(), DType::i64);
  EXPECT_EQ(exp(b).dtype(), DType::f16);
  EXPECT_EQ(sum(b).dtype(), DType::i64);
}

TEST(TableOps, Int32AsNumPy) {
  // abs and minimum of int32 stay int32 (exact); log and erf of int32 are float64.
  Array n = randomArray({4, 6}, DType::i32, 63), k = randomArray({6}, DType::i32, 64);
  Array absN = jit([](const Tensor &a) { return abs(a); })(n);
  EXPECT_EQ(absN.dtype(), DType::i32);
  EXPECT_TRUE(allClose(absN, numpy("np.abs(n)", {{"n", n}}), 0, 0));
  Array low = jit([](const Tensor &a, const Tensor &b) { return minimum(a, b); })(n, k);
  EXPECT_EQ(low.dtype(), DType::i32);
  EXPECT_TRUE(allClose(low, numpy("np.minimum(n, k)", {{"n", n}, {"k", k}}), 0, 0));
  Array positive = numpy("np.abs(n) + 1", {{"n", n}});
  ASSERT_EQ(positive.dtype(), DType::i32);
  Array logN = jit([](const Tensor &a) { return log(a); })(positive);
  EXPECT_EQ(logN.dtype(), DType::f64);
  // Exact conversion to float64, then one call a side.
  EXPECT_TRUE(
      matchesNumPy(logN, "np.log(n)", {{"n", positive}}, 2 * kMathUlps, "np.abs(np.log(n))"));
  Array erfN = jit([](const Tensor &a) { return tinymlir::erf(a); })(n);
  EXPECT_EQ(erfN.dtype(), DType::f64);
  std::string erf = std::string(kErf) + "(n)";
  EXPECT_TRUE(matchesNumPy(erfN, erf, {{"n", n}}, 2 * kMathUlps, "np.abs(" + erf + ")"));
}

TEST(TableOps, LowerForTheGpuTarget) {
  auto f = [](const Tensor &a, const Tensor &b) {
    return tinymlir::erf(a) + log(abs(a) + 1) - minimum(a, b);
  };
  Array x = randomArray({37, 50}, DType::f32, 65), y = randomArray({50}, DType::f32, 66);
  JitOptions gpu;
  gpu.target = Target::GPU;
  Compiled c = jit(f, gpu).compile(x, y);
  EXPECT_NE(c.ptx().find(".target sm_"), std::string::npos);
  // erf and log come from libdevice, linked and inlined.
  EXPECT_EQ(c.ptx().find("__nv_"), std::string::npos);
  // Per side: erf and log kMathUlps of their results; log's argument one
  // rounding (absolute u, its condition being 1/z); two sums relative to the
  // terms; minimum exact.
  const char *want =
      "np.vectorize(__import__('math').erf, otypes=[np.float64])(x).astype(np.float32)"
      " + np.log(np.abs(x) + 1) - np.minimum(x, y)";
  const char *magnitude =
      "np.abs(np.vectorize(__import__('math').erf)(x)) + np.log(np.abs(x) + 1) + "
      "np.abs(np.minimum(x, y)) + 1";
  EXPECT_TRUE(
      matchesNumPy(jit(f)(x, y), want, {{"x", x}, {"y", y}}, 2 * (kMathUlps + 3), magnitude));
  // The GPU kernels, emulated on the CPU (scalar libm calls).
  gpu.gpuEmulate = true;
  Array emulated = jit(f, gpu)(x, y);
  EXPECT_TRUE(matchesNumPy(emulated, want, {{"x", x}, {"y", y}}, 2 * (kMathUlps + 3), magnitude));
}

} // namespace

// --- Assignment (NumPy's x[index] = v as values) -----------------------------------

TEST(Assignment, SliceUpdateBroadcastAndFullAsNumPy) {
  Array x = randomArray({4, 6}, DType::f64, 11), v = randomArray({3}, DType::f32, 12);
  // y = x.copy(); y[1:3, ::2] = v (float32 cast, broadcast over the rows);
  // y[3] = -0.0; y + broadcast_to(v[:1], (4, 6)): one selection and copies,
  // and one rounded addition of exact values.
  auto f = jit([](const Tensor &a, const Tensor &b) {
    Tensor y = sliceUpdate(a, {1, 0}, {3, 6}, {1, 2}, b);
    y = sliceUpdate(y, {3}, {4}, {}, full({1, 6}, -0.0, DType::f64));
    return y + broadcastTo(slice(b, {0}, {1}), {4, 6});
  });
  const char *expected =
      "(lambda y: (y.__setitem__((slice(1, 3), slice(None, None, 2)), v),"
      " y.__setitem__(3, -0.0), y + np.broadcast_to(v[:1], (4, 6)))[2])(x.copy())";
  EXPECT_TRUE(allClose(f(x, v), numpy(expected, {{"x", x}, {"v", v}}), 0, 0));
  // A value that does not broadcast to the box is NumPy's error, by name.
  EXPECT_THROW(
      {
        try {
          sliceUpdate(Tensor(x), {0}, {2}, {}, Tensor(Array::zeros({3, 6}, f64)));
        } catch (const Error &e) {
          EXPECT_NE(std::string(e.what()).find("[slice_update] could not broadcast input array "
                                               "from shape (3, 6) into shape (2, 6)"),
                    std::string::npos)
              << e.what();
          throw;
        }
      },
      Error);
}

TEST(Assignment, EmptySlicesProductsAndReductions) {
  Array x = randomArray({3, 4}, DType::f64, 13);
  // x[0, :0] @ x[:0, 1] is 0; sums over an empty axis are 0, products 1.
  auto f = jit([](const Tensor &a) {
    Tensor row = reshape(slice(a, {0, 0}, {1, 0}), {0});
    Tensor column = reshape(slice(a, {0, 1}, {0, 2}), {0});
    return matmul(row, column) + sum(slice(a, {0}, {0}), 0).sum() +
           prod(slice(a, {0, 0}, {3, 0}), 1).sum();
  });
  EXPECT_TRUE(allClose(f(x),
                       numpy("x[0, :0] @ x[:0, 1] + x[:0].sum(axis=0).sum() + "
                             "x[:, :0].prod(axis=1).sum()",
                             {{"x", x}}),
                       0, 0));
  EXPECT_THROW(max(slice(Tensor(x), {0}, {0}), 0), Error); // no identity: NumPy's ValueError
}

TEST(Assignment, RefsIndexViewAndWriteAsNumPy) {
  // The C++ side of Python's indexing: a Ref is a writable array, get/set take
  // NumPy's index items, views share their buffer.
  Array x = randomArray({5, 6}, DType::f64, 31), v = randomArray({3, 4}, DType::f64, 32);
  Array k = Array::scalar(3, DType::i64);
  auto f = jit([](const Tensor &a, const Tensor &b, const Tensor &i) {
    Ref y(a);                                                           // y = a.copy()
    y.set({Slice{1, -1}, Slice{1, -1}}, b * 0.5);                       // y[1:-1, 1:-1] = 0.5 * b
    Ref row = y.get({int64_t{2}});                                      // a view
    row.assign(row.value() * 2.0);                                      // y[2] *= 2
    y.get({Ellipsis{}, Slice{{}, {}, -2}}).set({int64_t{0}}, f64(7.0)); // y[..., ::-2][0] = 7
    y.set({i, Slice{2, 4}}, y.get({i, Slice{0, 2}}).value() + 1.0);     // y[i, 2:4] = y[i, :2] + 1
    y.set({greater(a, 0.8)}, f64(-1.0));                                // y[a > 0.8] = -1
    Tensor rows(Array::fromVector<int64_t>({4, 0, -1}, {3}));
    Tensor twice(Array::fromVector<int64_t>({1, 1, -3}, {3}));
    y.set({rows, Slice{}}, y.get({twice}).value() * 2.0); // y[[4, 0, -1]] = y[[1, 1, -3]] * 2
    Tensor order = argsort(a.sum(1));                     // computed positions
    y.set({order, int64_t{1}}, y.get({order, Slice{{}, {}, 2}}).value().sum(1));
    return y.get({Slice{}, NewAxis{}, Range{5, 0, -2}}).value(); // y[:, None, range(5, 0, -2)]
  });
  const char *expected = "(lambda y: (y.__setitem__((slice(1, -1), slice(1, -1)), 0.5 * b),"
                         " y[2].__imul__(2), y[..., ::-2].__setitem__(0, 7.0),"
                         " y.__setitem__((int(k), slice(2, 4)), y[int(k), :2] + 1),"
                         " y.__setitem__(a > 0.8, -1.0),"
                         " y.__setitem__(([4, 0, -1], slice(None)), y[[1, 1, -3]] * 2),"
                         " y.__setitem__((np.argsort(a.sum(1), kind='stable'), 1),"
                         "   y[np.argsort(a.sum(1), kind='stable'), ::2].sum(1)),"
                         " y[:, None, 5:0:-2])[-1])(a.copy())";
  EXPECT_TRUE(allClose(f(x, v, k), numpy(expected, {{"a", x}, {"b", v}, {"k", k}}), 0, 0));

  // Layouts as NumPy's flags and shares_memory see them.
  Ref r(Tensor(Array::zeros({4, 6}, DType::f64)));
  EXPECT_TRUE(r.get({Slice{1, 3}}).contiguous());
  EXPECT_FALSE(r.get({Slice{}, Slice{1, 3}}).contiguous());
  EXPECT_TRUE(r.get({Slice{}, Slice{1, 3}}).sameBuffer(r));
  EXPECT_FALSE(r.get({int64_t{1}, int64_t{2}}).sameBuffer(r)); // a scalar: a copy
  EXPECT_EQ(r.get({int64_t{1}, Slice{{}, {}, -2}}).positions().toVector<int64_t>(),
            (std::vector<int64_t>{11, 9, 7}));
  // NumPy's IndexErrors, typed.
  for (const Index &bad : {Index{int64_t{4}}, Index{Slice{}, Slice{}, Slice{}},
                           Index{Ellipsis{}, int64_t{0}, Ellipsis{}}}) {
    try {
      r.get(bad);
      ADD_FAILURE() << "no error";
    } catch (const Error &e) {
      EXPECT_EQ(e.kind(), ErrorKind::Index) << e.what();
    }
  }
  EXPECT_EQ(errorOf([&] { r.get({int64_t{-5}}); }),
            "index -5 is out of bounds for axis 0 with size 4");
}

TEST(Assignment, SameValueComparesGraphsStructurally) {
  Tensor p = detail::placeholder(0, {3}, DType::f64), q = detail::placeholder(1, {3}, DType::f64);
  EXPECT_TRUE(sameValue(greater(p, 0.5), greater(p, 0.5))); // two traces of p > 0.5
  EXPECT_FALSE(sameValue(greater(p, 0.5), greater(p, 0.25)));
  EXPECT_FALSE(sameValue(greater(p, 0.5), greater(q, 0.5)));
}

// --- Several results: one kernel, an output per result -------------------------------

TEST(MultiResult, OneKernelWithAnOutputPerResultInItsOwnDtype) {
  Array x = randomArray({3, 4}, DType::f32, 21);
  // A tuple of results of three dtypes, and int64 values beyond 2^53 that a
  // float64 packing would round: each output is its own array, exactly.
  auto stats = jit([](const Tensor &a) {
    Tensor big = full({2}, int64_t{(int64_t{1} << 62) + 1}, DType::i64);
    return std::tuple<Tensor, Tensor, Tensor>(sum(a, 0), a * 2.0,
                                              big + slice(argmax(a, 1), {0}, {1}));
  });
  auto [s, twice, wide] = stats(x);
  // A sum of 3 terms: within 2 gamma_3 sum|x| of NumPy's.
  EXPECT_TRUE(
      withinBound(s.array(), numpy("x.sum(axis=0)", {{"x", x}}),
                  numpy("2 * 3 * 2.0**-24 * np.abs(x).sum(axis=0, dtype=np.float64)", {{"x", x}})));
  EXPECT_TRUE(allClose(twice.array(), numpy("x * 2.0", {{"x", x}}), 0, 0));
  EXPECT_EQ(wide.dtype(), DType::i64);
  Array expected = numpy("np.full(2, 2**62 + 1) + x.argmax(axis=1)[0]", {{"x", x}});
  for (int64_t k = 0; k < 2; ++k)
    EXPECT_EQ(static_cast<const int64_t *>(wide.array().data())[k],
              static_cast<const int64_t *>(expected.data())[k]);
  Compiled c = stats.compile(x);
  EXPECT_EQ(c.resultShapes(), (std::vector<Shape>{{4}, {3, 4}, {2}}));
  EXPECT_EQ(c.resultDTypes(), (std::vector<DType>{DType::f32, DType::f32, DType::i64}));
  EXPECT_NE(c.module().find("tinymlir.results = 3"), std::string::npos) << c.module();
  // One result's API on a multi-result kernel is an error that says so.
  EXPECT_NE(errorOf([&] { c.call({x}); }).find("has 3 results"), std::string::npos);
  // So are outputs that share memory.
  Array one = Array::empty({4}, DType::f32), two = Array::empty({3, 4}, DType::f32);
  std::vector<Array> overlapping{one, Array::view(two.data(), {3, 4}, DType::f32),
                                 Array::view(two.data(), {2}, DType::i64)};
  EXPECT_NE(errorOf([&] { c.callInto({x}, overlapping); }).find("share memory"), std::string::npos);
}

TEST(MultiResult, SeveralInputsUpdatedInPlaceByOneKernel) {
  // a[1:3, ::2] = b[0]; b[2] = a[0] * 3 (the old a); both updated where they
  // are (donated), and a third result read from the new a.
  Array a = randomArray({4, 4}, DType::f64, 22), b = randomArray({3, 2}, DType::f64, 23);
  Tensor pa = detail::placeholder(0, {4, 4}, DType::f64);
  Tensor pb = detail::placeholder(1, {3, 2}, DType::f64);
  Tensor newA = sliceUpdate(pa, {1, 0}, {3, 4}, {1, 2}, slice(pb, {0}, {1}));
  Tensor newB = sliceUpdate(pb, {2}, {3}, {}, slice(pa, {0, 0}, {1, 2}) * 3.0);
  Tensor total = sum(newA);
  Compiled c = compileGraph({total, newA, newB}, {pa, pb}, JitOptions(), {-1, 0, 1});
  EXPECT_EQ(c.donations(), (std::vector<int>{-1, 0, 1}));
  Array expectA =
      numpy("(lambda y: (y.__setitem__((slice(1, 3), slice(None, None, 2)), b[0]), y)[1])"
            "(a.copy())",
            {{"a", a}, {"b", b}});
  Array expectB =
      numpy("(lambda y: (y.__setitem__(2, a[0, :2] * 3), y)[1])(b.copy())", {{"a", a}, {"b", b}});
  Array expectTotal = numpy("t.sum()", {{"t", expectA}});
  Array s = Array::empty({}, DType::f64);
  std::vector<Array> outputs{s, a, b};
  c.callInto({a, b}, outputs);
  EXPECT_TRUE(allClose(a, expectA, 0, 0));
  EXPECT_TRUE(allClose(b, expectB, 0, 0));
  // A sum of 16 terms: within 2 gamma_16 sum|t| of NumPy's.
  EXPECT_TRUE(
      withinBound(s, expectTotal, numpy("2 * 16 * 2.0**-53 * np.abs(t).sum()", {{"t", expectA}})));
  // A donated input must be its output's array.
  std::vector<Array> fresh{Array::empty({}, DType::f64), Array::empty({4, 4}, DType::f64), b};
  EXPECT_NE(errorOf([&] { c.callInto({a, b}, fresh); }).find("updated in place"),
            std::string::npos);
  // Without donation the inputs are left as they were.
  Compiled copying = compileGraph({total, newA, newB}, {pa, pb});
  Array a2 = a.copy(), b2 = b.copy();
  std::vector<Array> results = copying.callAll({a2, b2});
  EXPECT_TRUE(allClose(a2, a, 0, 0));
  EXPECT_EQ(copying.donations(), (std::vector<int>{-1, -1, -1}));
  EXPECT_EQ(results.size(), 3u);
}

// --- int64, NumPy's default integer ---------------------------------------------------

TEST(Int64, ArithmeticPromotionAndIntegerReductionsAsNumPy) {
  // Values beyond int32: exact int64 arithmetic; int32 with int64 is int64; int32
  // and bool sums accumulate in int64; a Python int beside a bool is int64.
  Array big = randomArray({3, 4}, DType::i64, 51), small = randomArray({4}, DType::i32, 52);
  Array mask = randomArray({3, 4}, DType::b8, 53);
  auto f = jit([](const Tensor &a, const Tensor &b, const Tensor &m) {
    return a * 3 - b + sum(b) + sum(m, 1, true) + m * 2 + max(a, 0) - min(a);
  });
  Array got = f(big, small, mask);
  EXPECT_EQ(got.dtype(), DType::i64);
  EXPECT_TRUE(allClose(got,
                       numpy("a * 3 - b + b.sum() + m.sum(axis=1, keepdims=True) + m * 2 + "
                             "a.max(axis=0) - a.min()",
                             {{"a", big}, {"b", small}, {"m", mask}}),
                       0, 0));
  // int64 with a float is float64; int64 to int32 wraps, as NumPy's astype.
  auto g = jit([](const Tensor &a) { return a * 0.5 + cast(cast(a, DType::i32), DType::f64); });
  EXPECT_TRUE(allClose(
      g(big), numpy("a * 0.5 + a.astype(np.int32).astype(np.float64)", {{"a", big}}), 0, 0));
}
