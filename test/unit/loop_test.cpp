// Loops traced once (LoopBuilder, forLoop): one scf.for in the kernel (in an
// scf.for over chunks of 1,024 iterations, which polls for Ctrl-C), checked
// exactly against the same loops in C++.
#include "test_util.h"
#include "numpy_ref.h"

#include <tinymlir/tinymlir.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <limits>
#include <thread>
#include <string>
#include <vector>

using namespace tinymlir;
using tinymlir::test::count;
using tinymlir::test::errorOf;
using tinymlir::test::randomArray;

namespace {

using Carried = std::vector<Tensor>;

/// A Python int.
Tensor w(int64_t v) { return weakInteger(v); }

/// x[i] for a traced index i.
Tensor at(const Tensor &x, const Tensor &i) { return Ref(x).get({i}).value(); }

/// for i in range(1, n - 1): A[i, 1:-1] = (A[i - 1, 1:-1] + A[i + 1, 1:-1]) / 2
Tensor sweep(const Tensor &a) {
  return forLoop(w(1), w(a.dim(0) - 1), w(1), {a}, [](const Tensor &i, const Carried &c) {
    Ref r(c[0]);
    Tensor up = r.get({i - 1, Slice{1, -1}}).value();
    Tensor down = r.get({i + 1, Slice{1, -1}}).value();
    r.set({i, Slice{1, -1}}, (up + down) / 2);
    return Carried{r.value()};
  })[0];
}

void sweepReference(Array &a) {
  const int64_t n = a.shape()[0], m = a.shape()[1];
  double *p = a.data<double>();
  for (int64_t i = 1; i < n - 1; ++i)
    for (int64_t j = 1; j < m - 1; ++j)
      p[i * m + j] = (p[(i - 1) * m + j] + p[(i + 1) * m + j]) / 2;
}

/// The text of the scf.for loops of a stage (from each `scf.for` to the end).
std::string loopText(const std::string &stage) {
  const size_t p = stage.find("scf.for");
  return p == std::string::npos ? "" : stage.substr(p);
}

Array copyOf(const Array &a) {
  Array out = Array::empty(a.shape(), a.dtype());
  std::copy(a.data<double>(), a.data<double>() + numElements(a.shape()), out.data<double>());
  return out;
}

TEST(Loop, SlicesSizedByTheIndexHaveDynamicExtents) {
  // for i in range(n): x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]: the two
  // spans (traced stop i on axes of one length) are one `?` extent.
  const int64_t n = 9;
  auto f = jit([](const Tensor &L, const Tensor &x, const Tensor &b) {
    return forLoop(w(0), w(x.dim(0)), w(1), {x}, [&](const Tensor &i, const Carried &c) {
      Ref xs(c[0]), l(L);
      Tensor row = l.get({i, TracedSlice{std::nullopt, i}}).value();
      Tensor head = xs.get({TracedSlice{std::nullopt, i}}).value();
      EXPECT_EQ(row.shape(), head.shape()); // one symbolic extent
      EXPECT_LE(row.shape()[0], std::numeric_limits<int64_t>::min() / 2);
      xs.set({i}, (at(b, i) - matmul(row, head)) / l.get({i, i}).value());
      return Carried{xs.value()};
    })[0];
  });
  Array L = randomArray({n, n}, DType::f64, 7), x = Array::zeros({n}, DType::f64),
        b = randomArray({n}, DType::f64, 8);
  for (int64_t i = 0; i < n; ++i)
    L.data<double>()[i * n + i] += n; // well conditioned
  Array got = f(L, x, b);
  // The same solve in C++, summing each row's products in order: the kernel's
  // vectorized dot may add them in another order, each x[i] off by at most
  // 2 gamma_n sum|L[i, j] x[j]| <= 2 gamma_n |b[i]| (a dominant diagonal).
  std::vector<double> want(n);
  for (int64_t i = 0; i < n; ++i) {
    double s = 0;
    for (int64_t j = 0; j < i; ++j)
      s += L.data<double>()[i * n + j] * want[j];
    want[i] = (b.data<double>()[i] - s) / L.data<double>()[i * n + i];
  }
  const double gamma = 2 * n * 2.2204460492503131e-16;
  for (int64_t i = 0; i < n; ++i)
    EXPECT_NEAR(got.data<double>()[i], want[i], gamma * (std::abs(want[i]) + 1)) << i;
  const Compiled c = f.compile(L, x, b);
  EXPECT_NE(c.module().find("?"), std::string::npos) << c.module();
}

TEST(Loop, ARuleWithoutASymbolicCaseRefusesByName) {
  detail::TraceScope scope;
  Tensor x = detail::placeholder(0, {5}, DType::f64), k = detail::placeholder(1, {}, DType::i64);
  Tensor head = Ref(x).get({TracedSlice{std::nullopt, k}}).value();
  EXPECT_NE(errorOf([&] { concatenate({head, head}, 0); }).find("known only when the kernel runs"),
            std::string::npos)
      << errorOf([&] { concatenate({head, head}, 0); });
  EXPECT_NE(errorOf([&] { max(head); }).find("known only when the kernel runs"), std::string::npos);
}

TEST(Loop, CtrlCStopsALongLoopAndWritesNothingBack) {
  // for i in range(n): x[i % 4] = x[i % 4] * 0.5 + 1, for hours; SIGINT after
  // 0.3 s stops the call (Interrupted), the argument as it was.
  auto f = jit([](const Tensor &x, const Tensor &n) {
    return forLoop(w(0), n, w(1), {x}, [](const Tensor &i, const Carried &c) {
      Ref r(c[0]);
      Tensor k = remainder(i, 4);
      r.set({k}, r.get({k}).value() * 0.5 + 1.0);
      return Carried{r.value()};
    })[0];
  });
  Array x = randomArray({4}, DType::f64, 9);
  Array before = copyOf(x);
  f(x, Array::scalar(10, DType::i64)); // compiled
  // A handler of the test's own: a shell's background job starts with SIGINT
  // ignored, and an ignored SIGINT stays ignored during calls too.
  auto previous = std::signal(SIGINT, [](int) {});
  std::thread signal([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kill(getpid(), SIGINT);
  });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(f(x, Array::scalar(1e15, DType::i64)), Interrupted);
  signal.join();
  std::signal(SIGINT, previous);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(x.data<double>()[i], before.data<double>()[i]);
}

TEST(Loop, ScalarSumIsExact) {
  const int64_t n = 37;
  auto f = jit([](const Tensor &x) {
    return forLoop(w(0), w(x.dim(0)), w(1), {f64(0.0)},
                   [&](const Tensor &i, const Carried &c) { return Carried{c[0] + at(x, i)}; })[0];
  });
  Array x = randomArray({n}, DType::f64, 1);
  double expected = 0;
  for (int64_t i = 0; i < n; ++i)
    expected += x.data<double>()[i];
  Array got = f(x);
  EXPECT_EQ(got.shape(), Shape{});
  EXPECT_EQ(got.data<double>()[0], expected);
  const Compiled c = f.compile(x);
  EXPECT_EQ(count(c.module(), "scf.for"), 2) << c.module(); // the loop and its chunks
}

TEST(Loop, GaussSeidelSweepIsExactAndInPlace) {
  auto f = jit(sweep);
  for (int64_t n : {3, 10, 41}) {
    Array a = randomArray({n, 9}, DType::f64, 2);
    Array expected = copyOf(a);
    sweepReference(expected);
    Array got = f(a);
    ASSERT_EQ(got.shape(), a.shape());
    for (int64_t k = 0; k < numElements(a.shape()); ++k)
      ASSERT_EQ(got.data<double>()[k], expected.data<double>()[k]) << "n = " << n << " at " << k;
  }
  // The carried array is updated in place: inside the loop, no allocation
  // or copy of the whole array (a row's temporary at most).
  const Compiled c = f.compile(randomArray({41, 9}, DType::f64, 2));
  EXPECT_EQ(count(c.module(), "scf.for"), 2) << c.module(); // the loop and its chunks
  EXPECT_NE(c.module().find("iter_args"), std::string::npos) << c.module();
  const std::string body = loopText(c.bufferized());
  ASSERT_FALSE(body.empty()) << c.bufferized();
  EXPECT_EQ(count(body, "memref.alloc() {alignment = 64 : i64} : memref<41x9xf64>"), 0)
      << c.bufferized();
  EXPECT_EQ(count(body, "memref<41x9xf64>) outs"), 0) << c.bufferized();
  // (only the copy of the result into the output, after the loop)
  EXPECT_EQ(count(body, "memref<41x9xf64> to memref<41x9xf64>"), 1) << c.bufferized();
}

TEST(Loop, OneLoopWhateverTheTripCount) {
  auto f = jit(sweep);
  const Compiled small = f.compile(randomArray({10, 6}, DType::f64, 3));
  const Compiled large = f.compile(randomArray({1000, 6}, DType::f64, 3));
  EXPECT_EQ(count(small.module(), "scf.for"), 2) << small.module(); // and its chunks
  EXPECT_EQ(count(large.module(), "scf.for"), 2) << large.module();
  EXPECT_EQ(count(small.module(), "\n"), count(large.module(), "\n"));
  EXPECT_EQ(count(small.module(), " = "), count(large.module(), " = "));
}

TEST(Loop, ZeroTripLoopGivesTheInits) {
  auto f = jit([](const Tensor &x, const Tensor &stop) {
    Carried out = forLoop(w(5), stop, w(1), {x, f64(3.0)}, [](const Tensor &i, const Carried &c) {
      return Carried{c[0] * 2, c[1] + 1};
    });
    return std::make_tuple(out[0], out[1]);
  });
  Array x = randomArray({4}, DType::f64, 4);
  for (int64_t stop : {2, 5, 7}) {
    auto [y, s] = f(x, Array::fromVector<int64_t>({stop}, {}));
    const int64_t trips = std::max<int64_t>(0, stop - 5);
    for (int64_t k = 0; k < 4; ++k)
      EXPECT_EQ(y.array().data<double>()[k], x.data<double>()[k] * (1 << trips)) << stop;
    EXPECT_EQ(s.array().data<double>()[0], 3.0 + static_cast<double>(trips)) << stop;
  }
}

TEST(Loop, NegativeAndTracedSteps) {
  // s = 2 s + x[i] over range(start, stop, step): the order shows.
  auto f = jit([](const Tensor &x, const Tensor &start, const Tensor &stop, const Tensor &step) {
    return forLoop(start, stop, step, {f64(0.0)}, [&](const Tensor &i, const Carried &c) {
      return Carried{c[0] * 2 + at(x, i)};
    })[0];
  });
  Array x = randomArray({10}, DType::f64, 5);
  struct Case {
    int64_t start, stop, step;
  };
  for (const Case &c : {Case{9, -1, -1}, Case{9, 0, -3}, Case{8, 0, -3}, Case{1, 10, 4},
                        Case{0, 10, 1}, Case{3, 7, -1}, Case{2, 2, -2}}) {
    double expected = 0;
    for (int64_t i = c.start; c.step > 0 ? i < c.stop : i > c.stop; i += c.step)
      expected = expected * 2 + x.data<double>()[i];
    auto scalar = [](int64_t v) { return Array::fromVector<int64_t>({v}, {}); };
    Array got = f(x, scalar(c.start), scalar(c.stop), scalar(c.step));
    EXPECT_EQ(got.data<double>()[0], expected) << c.start << " " << c.stop << " " << c.step;
  }
  // A constant negative step.
  auto g = jit([](const Tensor &x) {
    return forLoop(w(9), w(-1), w(-2), {f64(0.0)}, [&](const Tensor &i, const Carried &c) {
      return Carried{c[0] * 2 + at(x, i)};
    })[0];
  });
  double expected = 0;
  for (int64_t i = 9; i > -1; i -= 2)
    expected = expected * 2 + x.data<double>()[i];
  EXPECT_EQ(Array(g(x)).data<double>()[0], expected);
}

TEST(Loop, NestedLoopsWithATracedInnerBound) {
  // The lower triangle's sum, row by row: for i: for j in range(i): s += A[i, j].
  auto f = jit([](const Tensor &a) {
    return forLoop(w(0), w(a.dim(0)), w(1), {f64(0.0)}, [&](const Tensor &i, const Carried &outer) {
      return forLoop(w(0), i, w(1), outer, [&](const Tensor &j, const Carried &inner) {
        return Carried{inner[0] + Ref(a).get({i, j}).value()};
      });
    })[0];
  });
  Array a = randomArray({7, 7}, DType::f64, 6);
  double expected = 0;
  for (int64_t i = 0; i < 7; ++i)
    for (int64_t j = 0; j < i; ++j)
      expected += a.data<double>()[i * 7 + j];
  EXPECT_EQ(Array(f(a)).data<double>()[0], expected);
  EXPECT_EQ(count(f.compile(a).module(), "scf.for"), 4); // two loops, each in chunks
}

TEST(Loop, IndexOutOfRangeInTheBodyRaisesIndexError) {
  auto f = jit([](const Tensor &x) {
    return forLoop(w(0), w(x.dim(0) + 1), w(1), {f64(0.0)},
                   [&](const Tensor &i, const Carried &c) { return Carried{c[0] + at(x, i)}; })[0];
  });
  Array x = randomArray({5}, DType::f64, 7);
  try {
    f(x);
    ADD_FAILURE() << "no error";
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), ErrorKind::Index) << e.what();
    EXPECT_NE(std::string(e.what()).find("index 5 is out of bounds for axis 0 with size 5"),
              std::string::npos)
        << e.what();
  }
  // The function still works on other inputs (nothing left half done).
  auto g = jit([](const Tensor &x) {
    return forLoop(w(0), w(x.dim(0)), w(1), {f64(0.0)},
                   [&](const Tensor &i, const Carried &c) { return Carried{c[0] + at(x, i)}; })[0];
  });
  EXPECT_EQ(Array(g(Array::full({3}, 2.0, DType::f64))).data<double>()[0], 6.0);
}

TEST(Loop, CarriedValuesKeepTheirShapeAndJoinTheirDTypes) {
  // A weak init is carried as int64; a float64 yield retraces in float64.
  auto f = jit([](const Tensor &x) {
    return forLoop(w(0), w(x.dim(0)), w(1), {weakInteger(0)},
                   [&](const Tensor &i, const Carried &c) { return Carried{c[0] + at(x, i)}; })[0];
  });
  Array x = Array::full({4}, 0.5, DType::f64);
  Array got = f(x);
  EXPECT_EQ(got.dtype(), DType::f64);
  EXPECT_EQ(got.data<double>()[0], 2.0);

  detail::TraceScope scope;
  Tensor v = detail::placeholder(0, {3}, DType::f32);
  LoopBuilder shape(w(0), w(3), w(1), {v});
  EXPECT_EQ(errorOf([&] { shape.finish({sum(shape.params()[0])}); }),
            "[loop] carried value 0 changes shape from (3,) to ()");
  LoopBuilder dtype(w(0), w(3), w(1), {v});
  EXPECT_NE(errorOf([&] {
              dtype.finish({dtype.params()[0] * f64(2.0)});
            }).find("[loop] carried value 0 changes dtype from float32 to float64"),
            std::string::npos);
  EXPECT_EQ(dtype.joinedDType(0), DType::f64);
  EXPECT_EQ(errorOf([&] { LoopBuilder(w(0), w(3), w(0), {v}); }), "range() arg 3 must not be zero");
  EXPECT_NE(errorOf([&] {
              LoopBuilder(w(0), weakScalar(2.5, false), w(1), {v});
            }).find("cannot be interpreted"),
            std::string::npos);
}

TEST(Loop, RebaseReplacesTheBufferForEveryView) {
  detail::TraceScope scope;
  Tensor v = detail::placeholder(0, {4}, DType::f64);
  Ref a(v);
  Ref tail = a.get({Slice{1, std::nullopt}});
  (void)tail.value();
  Tensor w = detail::placeholder(1, {4}, DType::f64);
  a.rebase(w, /*newVersion=*/false);
  EXPECT_EQ(a.version(), 0);
  EXPECT_EQ(a.value().node(), w.node());
  EXPECT_TRUE(sameValue(tail.value(), Ref(w).get({Slice{1, std::nullopt}}).value()));
  a.rebase(v, /*newVersion=*/true);
  EXPECT_EQ(a.version(), 1);
}

TEST(Loop, GpuTargetRefusesLoops) {
  JitOptions o;
  o.target = Target::GPU;
  o.gpuEmulate = true;
  Tensor result;
  Tensor x;
  {
    detail::TraceScope scope;
    x = detail::placeholder(0, {4}, DType::f64);
    result = forLoop(w(0), w(3), w(1), {x},
                     [](const Tensor &, const Carried &c) { return Carried{c[0] + 1}; })[0];
  }
  EXPECT_NE(errorOf([&] {
              compileGraph(result, {x}, o);
            }).find("[gpu] loops are not supported on the GPU target yet"),
            std::string::npos);
}

} // namespace
