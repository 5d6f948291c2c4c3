// The C++ API of NumPy's other dtypes and functions: small and unsigned
// integers, float16, complex, the row kernels (sorts, scans, extreme indices,
// computed positions, counts) and np.linalg's LAPACK kernels, each against
// NumPy (Debian's) on the same inputs. They also run the runtime's kernels
// under the sanitizers (the sanitized CI build runs these suites).
#include "numpy_ref.h"
#include "test_util.h"

#include <tinymlir/tinymlir.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

using namespace tinymlir;
using namespace tinymlir::test;

namespace {
Tensor identity(int64_t n) {
  Array a = Array::zeros({n, n}, DType::f64);
  for (int64_t i = 0; i < n; ++i)
    a.set({i, i}, 1.0);
  return Tensor(a);
}
} // namespace

TEST(Dtypes, SmallIntegersWrapAndDivideAsNumPy) {
  Array a = Array::fromVector<int8_t>({-128, -7, 7, 100, 127, 5, 0, -1}, {8});
  Array b = Array::fromVector<int8_t>({-1, 2, -2, 3, 0, 0, 4, -128}, {8});
  auto f = jit([](const Tensor &x, const Tensor &y) {
    return concatenate({x * y, floor_divide(x, y), remainder(x, y), x + 100, left_shift(x, 1),
                        right_shift(x, 9), bitwise_xor(x, y)},
                       0);
  });
  Array got = f(a, b);
  EXPECT_EQ(got.dtype(), DType::i8);
  EXPECT_TRUE(
      allClose(got,
               numpy("np.concatenate([a * b, a // b, a % b, a + np.int8(100), a << 1, "
                     "a >> 9, a ^ b])",
                     {{"a", a}, {"b", b}}, "import warnings; warnings.simplefilter('ignore')"),
               0, 0));
  Array u = Array::fromVector<uint8_t>({0, 1, 200, 255}, {4});
  Array mixed = jit([](const Tensor &x, const Tensor &y) { return x + y; })(
      u, Array::fromVector<int8_t>({-1, 2, 3, -4}, {4}));
  EXPECT_EQ(mixed.dtype(), DType::i16); // uint8 + int8: int16, as NumPy's
  EXPECT_EQ(errorOf([&] { jit([](const Tensor &x) { return x + 300; })(u); }),
            "[add] Python integer 300 out of bounds for uint8");
}

TEST(Dtypes, IntegerScalarsKeepAll64Bits) {
  // 2^60 + 1 and 2^64 - 1 are not doubles: a scalar held as one would round.
  const int64_t big = (int64_t{1} << 60) + 1;
  Array a = Array::fromVector<int64_t>({1, -2}, {2});
  Array sum = jit([&](const Tensor &x) { return x + big; })(a);
  EXPECT_EQ(sum.data<int64_t>()[0], big + 1);
  EXPECT_EQ(sum.data<int64_t>()[1], big - 2);
  Array u = Array::fromVector<uint64_t>({1, 2}, {2});
  Array wrapped = jit([](const Tensor &x) { return x + ~uint64_t{0}; })(u); // wraps, as NumPy's
  EXPECT_EQ(wrapped.dtype(), DType::u64);
  EXPECT_EQ(wrapped.data<uint64_t>()[0], 0u);
  EXPECT_EQ(wrapped.data<uint64_t>()[1], 1u);
  Array filled = jit([&](const Tensor &x) { return x * 0 + full({2}, big, DType::i64); })(a);
  EXPECT_EQ(filled.data<int64_t>()[1], big);
  EXPECT_EQ(errorOf([&] { jit([](const Tensor &x) { return x + (uint64_t{1} << 63); })(a); }),
            "[add] Python integer 9223372036854775808 out of bounds for int64");
}

TEST(Dtypes, Float16AndComplexAsNumPy) {
  Array h = randomArray({16}, DType::f16, 11, 3.0);
  Array sum = jit([](const Tensor &x) { return x * x + 1.5; })(h);
  EXPECT_EQ(sum.dtype(), DType::f16);
  EXPECT_TRUE(
      allClose(sum, numpy("h * h + np.float16(1.5)", {{"h", h}}), 0, 0)); // float32, rounded once
  Array z = randomArray({8}, DType::c128, 12);
  Array w = jit([](const Tensor &x) { return exp(x * x) + abs(x); })(z);
  EXPECT_EQ(w.dtype(), DType::c128);
  // exp and the products: a few eps of |exp(z^2)| (|z| < 4 here: within 1e-12 relative).
  EXPECT_TRUE(allClose(w, numpy("np.exp(z * z) + np.abs(z)", {{"z", z}}), 1e-12, 1e-12));
}

TEST(RowKernels, SortsScansAndIndicesAsNumPy) {
  Array x = randomArray({4, 9}, DType::f64, 21);
  auto f = jit([](const Tensor &a) {
    return concatenate({sort(a, 0), cast(argsort(a), DType::f64), cumsum(a, 1),
                        cast(argmax(a, 1, true), DType::f64) * full(a.shape(), 1.0, DType::f64)},
                       1);
  });
  EXPECT_TRUE(
      allClose(f(x),
               numpy("np.concatenate([np.sort(x, 0), np.argsort(x, kind='stable'), "
                     "np.cumsum(x, 1), np.argmax(x, 1, keepdims=True) * np.ones_like(x)], 1)",
                     {{"x", x}}),
               0, 0));
  Array ids = Array::fromVector<int64_t>({3, 0, 3, 1, 4}, {5});
  Array counts = jit([](const Tensor &i) { return bincount(i, 6); })(ids);
  EXPECT_TRUE(allClose(counts, numpy("np.bincount(i, minlength=6)", {{"i", ids}}), 0, 0));
  Array table = randomArray({5, 3}, DType::f32, 22);
  auto gathered = jit([](const Tensor &t, const Tensor &i) { return take(t, argsort(i)); });
  EXPECT_TRUE(allClose(gathered(table, ids),
                       numpy("t[np.argsort(i, kind='stable')]", {{"t", table}, {"i", ids}}), 0, 0));
  // A computed position out of range: NumPy's IndexError when the kernel runs.
  auto outside = jit([](const Tensor &t, const Tensor &i) { return take(t, i + 2); });
  EXPECT_EQ(errorOf([&] { outside(table, ids); }),
            "index 5 is out of bounds for axis 0 with size 5");
  auto written = jit([](const Tensor &t, const Tensor &i) { return put(t, argsort(i), t * 2.0f); });
  EXPECT_TRUE(
      allClose(written(table, ids),
               numpy("put(t, i)", {{"t", table}, {"i", ids}},
                     "def put(t, i):\n  r = t.copy()\n  r[np.argsort(i, kind='stable')] = t * 2\n"
                     "  return r"),
               0, 0));
}

TEST(RowKernels, UfuncAtAndMaskedReductionsAsNumPy) {
  // ufunc.at at computed positions: in order, repeats applying again,
  // negative ones from the end; uint8 sums and products wrap (NumPy's).
  Array ids = Array::fromVector<int64_t>({1, -1, 1, 3, 1}, {5});
  Array small = Array::fromVector<uint8_t>({250, 200, 3, 7, 90}, {5});
  auto at = jit([](const Tensor &t, const Tensor &i) {
    const Tensor v = cast(i * 40 + 130, DType::u8);
    return ufuncAt("multiply", ufuncAt("add", t, argsort(i), v), i, v);
  });
  EXPECT_TRUE(allClose(at(small, ids),
                       numpy("f(t, i)", {{"t", small}, {"i", ids}},
                             "def f(t, i):\n  t = t.copy()\n  v = (i * 40 + 130).astype(np.uint8)\n"
                             "  np.add.at(t, np.argsort(i, kind='stable'), v)\n"
                             "  np.multiply.at(t, i, v)\n  return t"),
                       0, 0));
  // x[mask].max() of nothing: NumPy's ValueError, when the kernel runs.
  Array x = randomArray({3, 4}, DType::f64, 23);
  const auto maskedReduce = [](const char *name, const Tensor &a, const Tensor &mask,
                               const Axes &axes = {}) {
    return std::get<Tensor>(MaskedRead(a, mask).reduce(name, axes, false, {}));
  };
  auto largest = jit([&](const Tensor &a) { return maskedReduce("max", a, greater(a, 10.0)); });
  EXPECT_EQ(errorOf([&] { largest(x); }),
            "zero-size array to reduction operation maximum which has no identity");
  auto mean = jit([&](const Tensor &a) { return maskedReduce("mean", a, greater(a, 0.0)); });
  EXPECT_TRUE(allClose(mean(x), numpy("x[x > 0].mean()", {{"x", x}}), 1e-15, 0));
  // The rows a mask selects, reduced over the count's axis (k-means' centroid):
  // the sum of at most 3 rows in the order NumPy adds them.
  auto centroid = jit(
      [&](const Tensor &a) { return maskedReduce("mean", a, greater(a.sum(1), 0.0), Axes(0)); });
  EXPECT_TRUE(allClose(centroid(x), numpy("x[x.sum(1) > 0].mean(axis=0)", {{"x", x}}), 4 * 2.2e-16,
                       4 * 2.2e-16));
}

TEST(Functions, ReductionsWithNumPysKeywords) {
  // where=, initial=, dtype= and ddof against NumPy; max and min exact, the
  // int8 sum wraps exactly, the float64 mean and variance of 8 selected
  // elements within 16 eps of their magnitude (|x| < 4 here).
  Array x = randomArray({3, 8}, DType::f64, 41);
  Array w = numpy("np.arange(24).reshape(3, 8) % 3 != 1");
  const std::map<std::string, Array> in{{"x", x}, {"w", w}};
  auto reduced = [&](const char *name, Axes axes, bool keepdims, auto how) {
    return jit([=](const Tensor &a, const Tensor &m) {
      return reduce(name, name == std::string("sum") ? cast(a * 40.0, DType::i8) : a, axes,
                    keepdims, how(m));
    })(x, w);
  };
  const double eps = std::numeric_limits<double>::epsilon();
  EXPECT_TRUE(allClose(reduced("max", 1, false,
                               [](const Tensor &m) {
                                 Reduction how;
                                 how.where = m;
                                 how.initial = full({}, -1.5, DType::f64);
                                 return how;
                               }),
                       numpy("np.max(x, axis=1, where=w, initial=-1.5)", in), 0, 0));
  EXPECT_TRUE(allClose(reduced("var", 0, true,
                               [](const Tensor &m) {
                                 Reduction how;
                                 how.where = m;
                                 how.ddof = 1;
                                 return how;
                               }),
                       numpy("np.var(x, axis=0, where=w, ddof=1, keepdims=True)", in), 0,
                       16 * eps * 16));
  EXPECT_TRUE(allClose(reduced("mean", {}, false,
                               [](const Tensor &m) {
                                 Reduction how;
                                 how.where = m;
                                 return how;
                               }),
                       numpy("np.mean(x, where=w)", in), 0, 32 * eps * 4));
  EXPECT_TRUE(allClose(reduced("sum", 1, false,
                               [](const Tensor &) {
                                 Reduction how;
                                 how.dtype = DType::i8;
                                 return how;
                               }),
                       numpy("np.sum((x * 40).astype(np.int8), axis=1, dtype=np.int8)", in), 0, 0));
  EXPECT_EQ(errorOf([&] {
              reduced("min", 0, false, [](const Tensor &m) {
                Reduction how;
                how.where = m;
                return how;
              });
            }),
            "[min] reduction operation 'minimum' does not have an identity, so to use a where mask "
            "one has to specify 'initial'");
  // np.place: values in order over the selected elements.
  Array v = Array::fromVector<double>({10.0, 20.0, 30.0}, {3});
  Array placed = jit(
      [](const Tensor &a, const Tensor &m, const Tensor &p) { return place(a, m, p); })(x, w, v);
  EXPECT_TRUE(allClose(placed,
                       numpy("f(x, w, v)", {{"x", x}, {"w", w}, {"v", v}},
                             "def f(x, w, v):\n  x = x.copy()\n  np.place(x, w, v)\n  return x"),
                       0, 0));
}

TEST(Linalg, LapackKernelsAndLinAlgErrors) {
  Array m = randomArray({5, 5}, DType::f64, 31);
  auto spd = [](const Tensor &a) { return matmul(a, transpose(a, {1, 0})) + identity(5) * 5.0; };
  Array l = jit([&](const Tensor &a) { return la::cholesky(spd(a)); })(m);
  // ||L - L_numpy|| within n eps cond: both factor the same matrix stably.
  EXPECT_TRUE(
      allClose(l, numpy("np.linalg.cholesky(a @ a.T + 5 * np.eye(5))", {{"a", m}}), 1e-12, 1e-12));
  Array b = randomArray({5, 2}, DType::f64, 32);
  Array x = jit([&](const Tensor &a, const Tensor &r) { return la::solve(spd(a), r); })(m, b);
  EXPECT_TRUE(allClose(
      x, numpy("np.linalg.solve(a @ a.T + 5 * np.eye(5), b)", {{"a", m}, {"b", b}}), 1e-12, 1e-12));
  Array det = jit([&](const Tensor &a) { return la::det(spd(a)); })(m);
  EXPECT_TRUE(allClose(det, numpy("np.linalg.det(a @ a.T + 5 * np.eye(5))", {{"a", m}}), 1e-12, 0));
  auto notDefinite = jit([](const Tensor &a) { return la::cholesky(a * -1.0); });
  try {
    notDefinite(Array::full({3, 3}, 1.0, DType::f64));
    ADD_FAILURE() << "no error";
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), ErrorKind::LinAlg);
    EXPECT_STREQ(e.what(), "Matrix is not positive definite");
  }
  EXPECT_EQ(errorOf([] {
              jit([](const Tensor &a) { return la::inv(a); })(Array::zeros({2, 2}, DType::f64));
            }),
            "Singular matrix");
}

TEST(Functions, NumPyFunctionsOfTheCoreMatchNumPy) {
  // numpy.h: special values, dtypes and NumPy 2's rules, each against NumPy.
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  Array x = Array::fromVector<double>({0.0, -0.0, 1.0, -2.5, inf, -inf, nan, 1e-9}, {8});
  Array y = Array::fromVector<double>({0.0, 1e-9, 1.0 + 1e-6, -2.5, inf, inf, nan, 0.0}, {8});
  Array c = numpy("np.array([complex(1, np.nan), complex(np.inf, 2), complex(-np.inf, -np.inf), "
                  "3 + 4j])");
  const char *warnings = "import warnings; warnings.simplefilter('ignore')";
  auto same = [&](const Array &got, const char *expression, std::map<std::string, Array> in) {
    EXPECT_TRUE(allClose(got, numpy(expression, in, warnings), 0, 0)) << expression;
  };
  same(jit([](const Tensor &a, const Tensor &b) { return isclose(a, b); })(x, y),
       "np.isclose(a, b)", {{"a", x}, {"b", y}});
  same(jit([](const Tensor &a, const Tensor &b) { return isclose(a, b, 0, 0, true); })(x, y),
       "np.isclose(a, b, 0, 0, True)", {{"a", x}, {"b", y}});
  same(jit([](const Tensor &a) { return nanToNum(a, -1.0, std::nullopt, 7.0); })(x),
       "np.nan_to_num(a, nan=-1.0, neginf=7.0)", {{"a", x}});
  same(jit([](const Tensor &a) {
         Tensor r = nanToNum(a);
         return concatenate({real(r), imag(r)}, 0);
       })(c),
       "(lambda r: np.concatenate([r.real, r.imag]))(np.nan_to_num(a))", {{"a", c}});
  same(jit([](const Tensor &a) { return concatenate({isnan(a), isinf(a), isfinite(a)}, 0); })(c),
       "np.concatenate([np.isnan(a), np.isinf(a), np.isfinite(a)])", {{"a", c}});
  same(jit([](const Tensor &a, const Tensor &b) { return heaviside(a, b); })(x, y),
       "np.heaviside(a, b)", {{"a", x}, {"b", y}});
  // clip: one ufunc of the three (NumPy 2's clipping of out-of-range Python ints is
  // tested in Python: Debian's NumPy here is 1.24).
  Array u = Array::fromVector<uint8_t>({0, 3, 200, 255}, {4});
  same(jit([](const Tensor &a) { return clip(a, weakNumber(2), weakNumber(150)); })(u),
       "np.clip(a, 2, 150)", {{"a", u}});
  same(jit([](const Tensor &a) { return clip(a, weakNumber(2), weakNumber(1.5)); })(u),
       "np.clip(a, 2, 1.5)", {{"a", u}});
  same(jit([](const Tensor &a) { return square(greater(a, 100)); })(u), "np.square(a > 100)",
       {{"a", u}});
  // Layout: diagonals, diag, tensordot, stack.
  Array m = randomArray({3, 4, 5}, DType::f64, 41), v = randomArray({4}, DType::f64, 42);
  same(jit([](const Tensor &a) { return diagonal(a, -1, 2, 0); })(m),
       "np.diagonal(a, -1, 2, 0).copy()", {{"a", m}});
  same(jit([](const Tensor &a) { return trace(a, 1, 1, 2); })(m), "np.trace(a, 1, 1, 2)",
       {{"a", m}});
  same(jit([](const Tensor &a) { return diag(a, -2); })(v), "np.diag(a, -2)", {{"a", v}});
  Array t = jit([](const Tensor &a) { return tensordot(a, a, {0, 1}, {0, 1}); })(m);
  EXPECT_TRUE(withinBound(t, numpy("np.tensordot(a, a, ([0, 1], [0, 1]))", {{"a", m}}),
                          numpy("2 * 12 * 2.0**-53 * np.tensordot(abs(a), abs(a), ([0, 1], [0, "
                                "1]))",
                                {{"a", m}})));
  same(jit([](const Tensor &a, const Tensor &b) { return stack({a, b * 2.0}, -1); })(v, v),
       "np.stack([a, b * 2], -1)", {{"a", v}, {"b", v}});
  EXPECT_EQ(errorOf([&] { stack({Tensor(v), Tensor(m)}); }),
            "[stack] all input arrays must have the same shape");
  EXPECT_EQ(errorOf([&] { diagonal(Tensor(m), 0, 1, -2); }),
            "[diagonal] axis1 and axis2 cannot be the same");
}

TEST(Functions, RollTileRepeatKronAndMeshgridMatchNumPy) {
  // Selections: exact, every element where NumPy puts it.
  Array m = randomArray({3, 4}, DType::f64, 43), v = randomArray({5}, DType::f64, 44);
  auto same = [&](const Array &got, const char *expression) {
    EXPECT_TRUE(allClose(got, numpy(expression, {{"a", m}, {"v", v}}), 0, 0)) << expression;
  };
  same(jit([](const Tensor &a) { return roll(a, {1, -7}, std::vector<int64_t>{0, 1}); })(m),
       "np.roll(a, (1, -7), axis=(0, 1))");
  same(jit([](const Tensor &a) { return roll(a, {2, 3}, std::vector<int64_t>{-1}); })(m),
       "np.roll(a, (2, 3), axis=-1)");
  same(jit([](const Tensor &a) { return roll(a, {13}, std::nullopt); })(m), "np.roll(a, 13)");
  same(jit([](const Tensor &a) { return tile(a, {2, 1, 3}); })(m), "np.tile(a, (2, 1, 3))");
  same(jit([](const Tensor &a) { return repeat(a, {2, 0, 1}, 0); })(m),
       "np.repeat(a, [2, 0, 1], axis=0)");
  same(jit([](const Tensor &a) { return repeat(a, {3}, std::nullopt); })(m), "np.repeat(a, 3)");
  same(jit([](const Tensor &a, const Tensor &b) { return kron(a, b); })(m, v), "np.kron(a, v)");
  same(jit([](const Tensor &a, const Tensor &b) {
         std::vector<Tensor> g = meshgrid({b, a});
         return concatenate({reshape(g[0], {-1}), reshape(g[1], {-1})}, 0);
       })(m, v),
       "np.concatenate([g.ravel() for g in np.meshgrid(v, a)])");
  EXPECT_EQ(errorOf([&] { repeat(Tensor(m), {1, 2}, 0); }),
            "[repeat] operands could not be broadcast together with shape (3,) (2,)");
  EXPECT_EQ(errorOf([&] { tile(Tensor(m), {-1}); }), "[tile] negative dimensions are not allowed");
  EXPECT_EQ(errorOf([&] { roll(Tensor(m), {1}, std::vector<int64_t>{2}); }),
            "[roll] axis 2 is out of bounds for array of dimension 2");
}

TEST(Functions, PadMatchesNumPyInEveryMode) {
  // Selections are exact; the ramps and means are NumPy's own steps, so
  // exact too on these integers-valued and small inputs.
  Array m = randomArray({3, 4}, DType::f64, 45);
  Array k = Array::fromVector<int32_t>({1, 5, 2, 8, 3, 9}, {2, 3});
  auto same = [&](const Array &got, const char *expression) {
    EXPECT_TRUE(allClose(got, numpy(expression, {{"a", m}, {"k", k}}), 0, 0)) << expression;
  };
  auto with = [](auto set) {
    PadOptions o;
    set(o);
    return o;
  };
  auto padded = [](const Tensor &x, std::vector<int64_t> w, Shape ws, const char *mode,
                   PadOptions o = {}) { return pad(x, w, ws, mode, o); };
  same(jit([&](const Tensor &a) { return padded(a, {1, 2, 3, 0}, {2, 2}, "constant"); })(m),
       "np.pad(a, ((1, 2), (3, 0)))");
  same(jit([&](const Tensor &a) {
         return padded(a, {2}, {}, "constant", with([&](PadOptions &o) {
                         o.constantValues = Tensor(Array::scalar(2.5, DType::f64));
                       }));
       })(k),
       "np.pad(k, 2, constant_values=2.5)");
  same(jit([&](const Tensor &a) { return padded(a, {5, 4}, {2}, "reflect"); })(m),
       "np.pad(a, (5, 4), mode='reflect')");
  same(jit([&](const Tensor &a) {
         return padded(a, {7, 2}, {2}, "symmetric",
                       with([&](PadOptions &o) { o.reflectType = "odd"; }));
       })(k),
       "np.pad(k, (7, 2), mode='symmetric', reflect_type='odd')");
  same(jit([&](const Tensor &a) { return padded(a, {9, 4}, {2}, "wrap"); })(m),
       "np.pad(a, (9, 4), mode='wrap')");
  same(jit([&](const Tensor &a) { return padded(a, {2, 3}, {2}, "edge"); })(k),
       "np.pad(k, (2, 3), mode='edge')");
  same(jit([&](const Tensor &a) {
         return padded(a, {3, 2}, {2}, "linear_ramp", with([&](PadOptions &o) {
                         o.endValues = Tensor(Array::fromVector<int64_t>({4, -3, 0, 2}, {2, 2}));
                       }));
       })(k),
       "np.pad(k, (3, 2), mode='linear_ramp', end_values=((4, -3), (0, 2)))");
  same(jit([&](const Tensor &a) {
         return padded(a, {2, 1}, {2}, "mean", with([&](PadOptions &o) {
                         o.statLengthGiven = true;
                         o.statLength = std::vector<double>{2};
                       }));
       })(k),
       "np.pad(k, (2, 1), mode='mean', stat_length=2)");
  same(jit([&](const Tensor &a) { return padded(a, {1, 2}, {2}, "maximum"); })(m),
       "np.pad(a, (1, 2), mode='maximum')");
  EXPECT_EQ(errorOf([&] { pad(Tensor(m), {-1}, {}, "constant"); }),
            "[pad] index can't contain negative values");
  EXPECT_EQ(errorOf([&] { pad(Tensor(m), {1}, {}, "bogus"); }),
            "[pad] mode 'bogus' is not supported");
  EXPECT_EQ(errorOf([&] {
              pad(Tensor(m), {1}, {}, "edge", with([&](PadOptions &o) {
                    o.constantValues = Tensor(Array::scalar(1, DType::f64));
                  }));
            }),
            "[pad] unsupported keyword arguments for mode 'edge': {'constant_values'}");
  EXPECT_EQ(errorOf([&] {
              pad(Tensor(m), {1}, {}, "minimum", with([&](PadOptions &o) {
                    o.statLengthGiven = true;
                    o.statLength = std::vector<double>{0};
                  }));
            }),
            "[pad] stat_length of 0 yields no value for padding");
}

TEST(Functions, NanReductionsAndVarianceWithDdofMatchNumPy) {
  // The nan functions and var's ddof, against NumPy: a slice with no number
  // (nan), one with fewer numbers than ddof (nan), ints as the plain
  // reductions. Tolerance: n * eps of the sums of squares' magnitudes.
  const double nan = std::nan("");
  Array x = Array::fromVector<double>(
      {1.5, nan, -2.0, 4.0, nan, nan, nan, nan, 0.25, 3.0, nan, 7.5}, {3, 4});
  Array i = Array::fromVector<int32_t>({3, -1, 4, 1, -5, 9}, {2, 3});
  const char *warnings = "import warnings; warnings.simplefilter('ignore')";
  auto near = [&](const Array &got, const char *expression, const Array &in, double tolerance) {
    EXPECT_TRUE(allClose(got, numpy(expression, {{"a", in}}, warnings), tolerance, tolerance))
        << expression;
  };
  const double tight = 16 * std::numeric_limits<double>::epsilon() * 64;
  near(jit([](const Tensor &a) { return nansum(a, 1); })(x), "np.nansum(a, 1)", x, 0);
  near(jit([](const Tensor &a) { return nanprod(a, {}, true); })(x), "np.nanprod(a, keepdims=True)",
       x, tight);
  near(jit([](const Tensor &a) { return nanmax(a, 1); })(x), "np.nanmax(a, 1)", x, 0);
  near(jit([](const Tensor &a) { return nanmin(a, 0); })(x), "np.nanmin(a, 0)", x, 0);
  near(jit([](const Tensor &a) { return nanmean(a, 1); })(x), "np.nanmean(a, 1)", x, tight);
  near(jit([](const Tensor &a) { return nanvar(a, 1, false, 1); })(x), "np.nanvar(a, 1, ddof=1)", x,
       tight);
  near(jit([](const Tensor &a) { return nanstd(a, 0, true, 2); })(x),
       "np.nanstd(a, 0, ddof=2, keepdims=True)", x, tight);
  near(jit([](const Tensor &a) { return nanmean(a, 0); })(i), "np.nanmean(a, 0)", i, tight);
  near(jit([](const Tensor &a) { return var(a, 1, false, 1.5); })(i), "np.var(a, 1, ddof=1.5)", i,
       tight);
  near(jit([](const Tensor &a) { return var(a, {}, false, 6); })(i), "np.var(a, ddof=6)", i, 0);
  EXPECT_EQ(errorOf([&] { nanmean(Tensor(x), {}, false, DType::i32); }),
            "[nanmean] If a is inexact, then dtype must be inexact");
}

TEST(Functions, TakeTakeAlongAxisAndPutAlongAxisMatchNumPy) {
  // Selections: exact. Concrete indices are checked while tracing, traced
  // ones (arguments) when the kernel runs; both give NumPy's IndexError.
  Array m = randomArray({3, 4}, DType::f64, 45);
  Array ids = Array::fromVector<int64_t>({2, -6, 0, 9}, {2, 2});
  Array along = Array::fromVector<int64_t>({3, 0, -1, 1, 2, 2}, {3, 2});
  const char *put = "def put(a, j, v, axis):\n  b = a.copy(); np.put_along_axis(b, j, v, axis)\n"
                    "  return b";
  auto same = [&](const Array &got, const char *expression) {
    EXPECT_TRUE(allClose(got, numpy(expression, {{"a", m}, {"i", ids}, {"j", along}}, put), 0, 0))
        << expression;
  };
  same(jit([&](const Tensor &a) { return take(a, Tensor(ids), 1, "wrap"); })(m),
       "np.take(a, i, axis=1, mode='wrap')");
  same(jit([](const Tensor &a, const Tensor &i) { return take(a, i, 1, "clip"); })(m, ids),
       "np.take(a, i, axis=1, mode='clip')");
  same(jit([](const Tensor &a, const Tensor &i) { return take(a, i, std::nullopt, "wrap"); })(m,
                                                                                              ids),
       "np.take(a, i, mode='wrap')");
  same(jit([&](const Tensor &a) { return take(a, Tensor(along), std::nullopt); })(m),
       "np.take(a, j)");
  same(jit([](const Tensor &a, const Tensor &j) { return takeAlongAxis(a, j, 1); })(m, along),
       "np.take_along_axis(a, j, 1)");
  same(jit([&](const Tensor &a) { return takeAlongAxis(a, Tensor(along), -1); })(m),
       "np.take_along_axis(a, j, -1)");
  same(jit([](const Tensor &a, const Tensor &j) {
         Ref r(a);
         putAlongAxis(r, j, Tensor(Array::fromVector<double>({-1, -2}, {1, 2})), 1);
         return r.value();
       })(m, along),
       "put(a, j, np.array([[-1.0, -2.0]]), 1)");
  same(jit([&](const Tensor &a) {
         Ref r(a);
         putAlongAxis(r, Tensor(along), Tensor(Array::scalar(9, DType::f64)), 1);
         return r.value();
       })(m),
       "put(a, j, 9.0, 1)");
  same(jit([](const Tensor &a, const Tensor &j) {
         Ref r(a);
         putAlongAxis(r, reshape(j, {-1}), Tensor(Array::scalar(5, DType::f64)), std::nullopt);
         return r.value();
       })(m, along),
       "put(a, j.ravel(), 5.0, None)");
  // Out of bounds: NumPy's IndexError, while tracing or when the kernel runs.
  EXPECT_EQ(errorOf([&] { take(Tensor(m), Tensor(ids), 1); }),
            "index -6 is out of bounds for axis 1 with size 4");
  auto traced = jit([](const Tensor &a, const Tensor &i) { return take(a, i, 1); });
  EXPECT_NE(errorOf([&] { traced(m, ids); }).find("out of bounds"), std::string::npos);
  EXPECT_EQ(errorOf([&] { take(Tensor(m), Tensor(ids), 0, "fold"); }),
            "[take] clipmode must be one of 'clip', 'raise', or 'wrap' (got 'fold')");
  EXPECT_EQ(errorOf([&] { take(Tensor(m), Tensor(Array::scalar(1, DType::f64)), 0); }),
            "[take] Cannot cast array data from dtype('float64') to dtype('int64') according to "
            "the rule 'same_kind'");
  EXPECT_EQ(errorOf([&] { takeAlongAxis(Tensor(m), Tensor(ids), std::nullopt); }),
            "[take_along_axis] when axis=None, `indices` must have a single dimension.");
}

TEST(Index, ReshapeAndRavelAreViewsWhereNumPysAre) {
  // NumPy's reshape is a view where the merged axes are contiguous among
  // themselves (a[:, ::2] to 1-D is one, a[::2] to 1-D is not), ravel where
  // the array is contiguous in the order asked; a write through a view
  // reaches the array, one through a copy does not.
  Array m = randomArray({4, 6}, DType::f64, 46);
  const char *writes = "def writes(a):\n  b = a.copy()\n  b[:, ::2].reshape(-1)[...] *= 10\n"
                       "  b[::2].reshape(-1)[...] = 0\n  b.T.reshape(3, 2, 4)[1] += 1\n"
                       "  b[1:3].ravel('K')[::2] = -1\n  b.T.ravel('K')[1] = 7\n"
                       "  b.reshape(6, 4, order='F').reshape(-1)[...] = 5\n  return b";
  auto f = jit([](const Tensor &a) {
    Ref b(a);
    auto times = [](const Ref &r, double k) {
      Ref v = r;
      v.assign(v.value() * Tensor(Array::scalar(k, DType::f64)));
    };
    times(b.get({Slice{}, Slice{std::nullopt, std::nullopt, 2}}).reshaped({-1}), 10);
    times(b.get({Slice{std::nullopt, std::nullopt, 2}}).reshaped({-1}), 0);
    Ref third = b.view({ViewStep{ViewStep::Kind::Transpose, {1, 0}, {}, {}}}).reshaped({3, 2, 4});
    Ref slab = third.get({int64_t{1}});
    slab.assign(slab.value() + Tensor(Array::scalar(1, DType::f64)));
    Ref middle = b.get({Slice{1, 3}}).raveled("K").get({Slice{std::nullopt, std::nullopt, 2}});
    middle.assign(Tensor(Array::scalar(-1, DType::f64)));
    Ref column = b.view({ViewStep{ViewStep::Kind::Transpose, {1, 0}, {}, {}}}).raveled("K");
    column.set({int64_t{1}}, Tensor(Array::scalar(7, DType::f64)));
    Ref t = b.reshaped({6, 4}, "F"); // a copy, F-ordered
    Ref flat = t.reshaped({-1});     // C order of an F-ordered copy: a copy again
    flat.assign(Tensor(Array::scalar(5, DType::f64)));
    return b.value();
  });
  EXPECT_TRUE(allClose(f(m), numpy("writes(a)", {{"a", m}}, writes), 0, 0));
  Ref a{Tensor(m)};
  EXPECT_EQ(
      errorOf([&] { a.get({Slice{std::nullopt, std::nullopt, 2}}).reshaped({-1}, "C", false); }),
      "Unable to avoid creating a copy while reshaping.");
  EXPECT_EQ(errorOf([&] { a.reshaped({6, 4}, "K"); }), "order 'K' is not permitted for reshaping");
  EXPECT_EQ(errorOf([&] { a.raveled("Q"); }),
            "order must be one of 'C', 'F', 'A', or 'K' (got 'Q')");
  EXPECT_TRUE(a.reshaped({24}, "C", false).sharesMemory(a, true));
  EXPECT_FALSE(a.reshaped({24}, "C", true).sharesMemory(a, false));
  // np.asarray: the array itself; order='F' of a C array, a copy; ndmin, a view.
  EXPECT_FALSE(a.asArray(std::nullopt, std::nullopt, "K").has_value());
  EXPECT_FALSE(a.asArray(std::nullopt, std::nullopt, "F")->sharesMemory(a, false));
  EXPECT_EQ(a.asArray(std::nullopt, std::nullopt, "K", 3)->shape(), (Shape{1, 4, 6}));
  EXPECT_TRUE(a.transposed().sharesMemory(a, true));
  EXPECT_EQ(a.transposed(std::vector<int64_t>{-1, 0}).shape(), (Shape{6, 4}));
}
