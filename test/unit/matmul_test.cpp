// Matrix products, layout operations, gather and the BLAS rewrite, checked
// against NumPy (the causal mask and GPT-2's blocks: test/gpt2/kernels_test.cpp
// and blocks_test.cpp).
#include "test_util.h"
#include "numpy_ref.h"

#include <tinymlir/tinymlir.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>
#include <tuple>

using namespace tinymlir;
using tinymlir::test::allClose;
using tinymlir::test::count;
using tinymlir::test::errorOf;
using tinymlir::test::gamma;
using tinymlir::test::matchesNumPy;
using tinymlir::test::numpy;
using tinymlir::test::productBound;
using tinymlir::test::randomArray;
using tinymlir::test::withinBound;

namespace {

Tensor product(const Tensor &a, const Tensor &b) { return matmul(a, b); }

JitOptions withoutBlas() {
  JitOptions o;
  o.blas = false;
  return o;
}

TEST(Matmul, RectangularProductsMatchNumPy) {
  auto blas = jit(product), loops = jit(product, withoutBlas());
  struct Case {
    Shape a, b;
    DType da, db;
  };
  for (const Case &c : {Case{{3, 5}, {5, 7}, DType::f32, DType::f32},
                        Case{{33, 70}, {70, 19}, DType::f32, DType::f32},
                        Case{{64, 96}, {96, 80}, DType::f64, DType::f64},
                        Case{{4, 3, 5}, {4, 5, 7}, DType::f32, DType::f32},
                        Case{{3, 17, 9}, {3, 9, 2}, DType::f64, DType::f64},
                        Case{{6, 10}, {10, 3}, DType::f32, DType::f64},
                        Case{{2, 6, 10}, {2, 10, 3}, DType::f64, DType::f32}}) {
    Array a = randomArray(c.a, c.da, 1), b = randomArray(c.b, c.db, 2);
    Array want = numpy("a @ b", {{"a", a}, {"b", b}});
    Array bound = productBound(a, b);
    Array viaBlas = blas(a, b), viaLoops = loops(a, b);
    EXPECT_TRUE(withinBound(viaBlas, want, bound)) << shapeString(c.a) << " @ " << shapeString(c.b);
    EXPECT_TRUE(withinBound(viaLoops, want, bound)) << "without BLAS: " << shapeString(c.a);
    EXPECT_EQ(blas.compile(a, b).blasCalls(), 1);
    EXPECT_EQ(loops.compile(a, b).blasCalls(), 0);
  }
}

TEST(Matmul, LargeProductsSplitOverThreadsMatchNumPy) {
  // Above a few MFLOP a product runs as column blocks (or whole products of a
  // batch) on the OpenMP team, one single-threaded BLAS call each; ragged
  // widths and batches smaller than the team included.
  setThreads(3);
  auto blas = jit(product);
  struct Case {
    Shape a, b;
    DType dtype;
  };
  // Matrix-vector products split as row blocks (A @ x) and, with no NumPy in
  // the process, a float64 x @ B of 2^20 elements or more as column blocks of
  // gemv on B^T (numpy_blas leaves it to BLAS): ragged blocks of 16.
  for (const Case &c :
       {Case{{100, 300}, {300, 517}, DType::f64}, Case{{130, 256}, {256, 100}, DType::f32},
        Case{{3, 64, 128}, {3, 128, 200}, DType::f32},
        Case{{2, 70, 128}, {2, 128, 301}, DType::f64}, Case{{1001, 600}, {600, 1}, DType::f64},
        Case{{1, 1100}, {1100, 1000}, DType::f64}, Case{{1, 1024}, {1024, 1025}, DType::f64}}) {
    Array a = randomArray(c.a, c.dtype, 5), b = randomArray(c.b, c.dtype, 6);
    Array want = numpy("a @ b", {{"a", a}, {"b", b}});
    EXPECT_TRUE(withinBound(blas(a, b), want, productBound(a, b)))
        << shapeString(c.a) << " @ " << shapeString(c.b);
  }
  setThreads(0);
}

TEST(Matmul, BothProductsOfOneMatrixInOnePass) {
  // (A @ x) @ A and (r @ A, A @ p): one tinymlir_?gemv2 call each, A read
  // once, on 3 threads (1031 rows: a part block of four rows on each). Each
  // result is within 2 (K + M + 2) u of the exact value relative to the same
  // expression on absolute values, as NumPy's two gemv calls are.
  setThreads(3);
  auto atax = jit([](const Tensor &a, const Tensor &x) { return matmul(matmul(a, x), a); });
  auto bicg = jit([](const Tensor &a, const Tensor &p, const Tensor &r) {
    return std::tuple<Tensor, Tensor>(matmul(r, a), matmul(a, p));
  });
  const int64_t m = 1031, k = 1037;
  for (DType dtype : {DType::f64, DType::f32}) {
    Array a = randomArray({m, k}, dtype, 7), x = randomArray({k}, dtype, 8),
          r = randomArray({m}, dtype, 9);
    std::map<std::string, Array> in{{"a", a}, {"x", x}, {"r", r}};
    EXPECT_EQ(atax.compile(a, x).blasCalls(), 1);
    EXPECT_TRUE(matchesNumPy(atax(a, x).array(), "(a @ x) @ a", in, 2.0 * (m + k + 2),
                             "(np.abs(a) @ np.abs(x)) @ np.abs(a)"));
    EXPECT_EQ(bicg.compile(a, x, r).blasCalls(), 1);
    auto [s, q] = bicg(a, x, r);
    EXPECT_TRUE(matchesNumPy(s.array(), "r @ a", in, 2.0 * (m + 2), "np.abs(r) @ np.abs(a)"));
    EXPECT_TRUE(matchesNumPy(q.array(), "a @ x", in, 2.0 * (k + 2), "np.abs(a) @ np.abs(x)"));
  }
  setThreads(0);
}

TEST(Matmul, EnvironmentVariableSwitchesBlasOff) {
  Array a = randomArray({8, 12}, DType::f32, 3), b = randomArray({12, 5}, DType::f32, 4);
  setenv("TINYMLIR_BLAS", "0", 1);
  Compiled c = jit(product).compile(a, b);
  unsetenv("TINYMLIR_BLAS");
  EXPECT_EQ(c.blasCalls(), 0);
  EXPECT_EQ(c.lowered().find("tinymlir_sgemm"), std::string::npos);
  EXPECT_TRUE(
      withinBound(c.call({a, b}), numpy("a @ b", {{"a", a}, {"b", b}}), productBound(a, b)));
}

TEST(Layout, SliceReshapeTransposeViewsAtOffsets) {
  auto f = jit([](const Tensor &x, const Tensor &y) {
    Tensor s = slice(x, {1, 4}, {5, 16}); // (4, 12) at a non-trivial offset
    Tensor r = reshape(s, {6, 8});        // needs the slice's data contiguous
    Tensor t = r.T();                     // (8, 6)
    return matmul(t, y) + slice(x, {0, 0}, {8, 5}).sum(0, true);
  });
  Array x = randomArray({8, 16}, DType::f32, 5), y = randomArray({6, 5}, DType::f32, 6);
  Array want = numpy("x[1:5, 4:16].reshape(6, 8).T @ y + x[0:8, 0:5].sum(axis=0, keepdims=True)",
                     {{"x", x}, {"y", y}});
  // Each side: gamma_6 for the product, gamma_8 for the column sums, one
  // rounding for the add and one for the result, relative to the magnitudes.
  EXPECT_TRUE(matchesNumPy(
      f(x, y), "x[1:5, 4:16].reshape(6, 8).T @ y + x[0:8, 0:5].sum(axis=0, keepdims=True)",
      {{"x", x}, {"y", y}}, 2 * (6 + 8 + 2),
      "np.abs(x[1:5, 4:16].reshape(6, 8).T) @ np.abs(y) + np.abs(x[0:8, 0:5]).sum(axis=0)"));
  std::string m = f.compile(x, y).module();
  EXPECT_NE(m.find("tensor.extract_slice"), std::string::npos);
  EXPECT_NE(m.find("tensor.reshape"), std::string::npos);
  EXPECT_NE(m.find("linalg.transpose"), std::string::npos);
}

TEST(Layout, SplitIntoEqualSections) {
  auto f = jit([](const Tensor &x) {
    std::vector<Tensor> p = split(x, 3, -1);
    return p[0] - p[1] * 2 + p[2] * 3;
  });
  Array x = randomArray({4, 9}, DType::f64, 7);
  // Two products by 2 and 3 (one exact), two sums: 3 roundings a side.
  Array want = numpy("p[0] - p[1] * 2 + p[2] * 3", {{"x", x}}, "p = np.split(x, 3, axis=-1)");
  EXPECT_TRUE(withinBound(f(x), want,
                          tinymlir::test::unitsBound(2 * 3, DType::f64,
                                                     "np.abs(x[:, 0:3]) + 2 * np.abs(x[:, 3:6]) + "
                                                     "3 * np.abs(x[:, 6:9])",
                                                     {{"x", x}})));
  auto rows = jit([](const Tensor &x) { return split(x, 2, 0)[1]; });
  EXPECT_TRUE(allClose(rows(x), numpy("np.split(x, 2, axis=0)[1]", {{"x", x}}), 0, 0));
}

TEST(Gather, EmbeddingLookupAndIdChecks) {
  auto f = jit([](const Tensor &table, const Tensor &ids) { return gather(table, ids); });
  Array table = randomArray({10, 4}, DType::f32, 8);
  Array ids = Array::fromVector<int32_t>({3, 0, 9, 3, 7}, {5});
  EXPECT_TRUE(allClose(f(table, ids), numpy("t[i]", {{"t", table}, {"i", ids}}), 0, 0));
  EXPECT_EQ(errorOf([&] { f(table, Array::fromVector<int32_t>({1, 10, 2, 0, 0}, {5})); }),
            "[gather] id 10 at position 1 is outside the table of 10 rows");
  EXPECT_EQ(errorOf([&] { f(table, Array::fromVector<int32_t>({1, 2, -11, 0, 0}, {5})); }),
            "[gather] id -11 at position 2 is outside the table of 10 rows");
  EXPECT_EQ(f.stats().compilations, 1u);
  // Negative ids count from the end, as NumPy's; ids of any integer dtype.
  Array negative = Array::fromVector<int64_t>({-1, -10, 2}, {3});
  EXPECT_TRUE(allClose(f(table, negative), numpy("t[i]", {{"t", table}, {"i", negative}}), 0, 0));
  Array small = Array::fromVector<uint8_t>({9, 0}, {2});
  EXPECT_TRUE(allClose(f(table, small), numpy("t[i]", {{"t", table}, {"i", small}}), 0, 0));
}

/// a[index] = values in NumPy, on a copy: `assign` is the indexing, e.g. "i, :, j".
Array numpyPut(const Array &a, const std::string &assign, const std::map<std::string, Array> &in) {
  std::map<std::string, Array> inputs = in;
  inputs["a"] = a;
  return numpy("b", inputs, "b = a.copy(); b[" + assign + "] = v");
}

TEST(IndexPut, MatchesNumPyAssignment) {
  using Index = std::vector<std::optional<Tensor>>;
  Array a = randomArray({3, 4, 5, 6}, DType::f32, 21);
  // Position (2, 5) repeats: the last row wins, as in NumPy.
  Array i = Array::fromVector<int32_t>({2, 0, 2, 1, 2}, {5});
  Array j = Array::fromVector<int32_t>({5, 0, 3, 3, 5}, {5});
  // Axes 0 and 3, apart: values (R, 4, 5).
  auto apart = jit([](const Tensor &a, const Tensor &i, const Tensor &j, const Tensor &v) {
    return indexPut(a, Index{i, std::nullopt, std::nullopt, j}, v);
  });
  Array v = randomArray({5, 4, 5}, DType::f32, 22);
  EXPECT_TRUE(
      allClose(apart(a, i, j, v), numpyPut(a, "i, :, :, j", {{"i", i}, {"j", j}, {"v", v}}), 0, 0));
  // Axes 1 and 2, adjacent: R in their place, values (3, R, 6); the float64
  // values are cast to float32, as NumPy's assignment does.
  auto adjacent = jit([](const Tensor &a, const Tensor &i, const Tensor &j, const Tensor &v) {
    return indexPut(a, Index{std::nullopt, i, j}, v);
  });
  Array w = randomArray({3, 5, 6}, DType::f64, 23);
  Array k = Array::fromVector<int32_t>({3, 0, 1, 3, 2}, {5});
  Array m = Array::fromVector<int32_t>({4, 0, 4, 1, 2}, {5});
  EXPECT_TRUE(
      allClose(adjacent(a, k, m, w), numpyPut(a, ":, i, j", {{"i", k}, {"j", m}, {"v", w}}), 0, 0));
  // Rows of a matrix, and single elements (every axis indexed).
  Array table = randomArray({6, 3}, DType::f64, 24);
  auto rows = jit(
      [](const Tensor &a, const Tensor &i, const Tensor &v) { return indexPut(a, Index{i}, v); });
  Array r = randomArray({2, 3}, DType::f64, 25), ri = Array::fromVector<int32_t>({4, 1}, {2});
  EXPECT_TRUE(allClose(rows(table, ri, r), numpyPut(table, "i", {{"i", ri}, {"v", r}}), 0, 0));
  auto cells = jit([](const Tensor &a, const Tensor &i, const Tensor &j, const Tensor &v) {
    return indexPut(a, Index{i, j}, v);
  });
  Array c = randomArray({3}, DType::f64, 26), ci = Array::fromVector<int32_t>({5, 0, 2}, {3}),
        cj = Array::fromVector<int32_t>({2, 1, 0}, {3});
  EXPECT_TRUE(allClose(cells(table, ci, cj, c),
                       numpyPut(table, "i, j", {{"i", ci}, {"j", cj}, {"v", c}}), 0, 0));

  // Positions are checked before the call; shapes and dtypes when tracing.
  EXPECT_EQ(errorOf([&] { apart(a, i, Array::fromVector<int32_t>({5, 0, 6, 3, 5}, {5}), v); }),
            "[index_put] index 6 at position 2 is outside axis 3 of size 6");
  EXPECT_EQ(errorOf([&] { apart(a, Array::fromVector<int32_t>({0, -1, 0, 0, 0}, {5}), j, v); }),
            "[index_put] index -1 at position 1 is outside axis 0 of size 3");
  EXPECT_EQ(
      errorOf([&] { apart(a, i, j, randomArray({5, 5, 4}, DType::f32, 1)); }),
      "[index_put] values of shape (5, 5, 4) for 5 positions of (3, 4, 5, 6): expected (5, 4, 5)");
  EXPECT_EQ(errorOf([&] { apart(a, i, Array::fromVector<int32_t>({1, 2}, {2}), v); }),
            "[index_put] indices of different lengths: 5 and 2 (axis 3)");
  EXPECT_EQ(errorOf([&] { rows(table, randomArray({2}, DType::f32, 2), r); }),
            "[index_put] the index of axis 0 must be a rank-1 int32 tensor, got float32 (2,)");
  auto computed = jit([](const Tensor &a, const Tensor &i, const Tensor &v) {
    return indexPut(a, Index{i + 1}, v);
  });
  EXPECT_EQ(errorOf([&] { computed(table, ri, r); }),
            "[index_put] indices must be an input of the compiled function (they are checked "
            "against the sizes before each call); got a computed add value");
}

TEST(IndexPut, IntoAnArgumentUpdatesItInPlace) {
  using Index = std::vector<std::optional<Tensor>>;
  auto store = [](const Tensor &cache, const Tensor &slots, const Tensor &positions,
                  const Tensor &rows) {
    return indexPut(cache, Index{slots, std::nullopt, positions}, rows); // cache[s, :, p] = rows
  };
  auto f = jit(store);
  Array cache = randomArray({4, 8, 16}, DType::f64, 31);
  Array slots = Array::fromVector<int32_t>({3, 1, 0}, {3}),
        positions = Array::fromVector<int32_t>({7, 15, 0}, {3});
  Array rows = randomArray({3, 8}, DType::f64, 32);
  Array want = numpyPut(cache, "s, :, p", {{"s", slots}, {"p", positions}, {"v", rows}});
  const void *data = cache.data();
  Array before = cache.copy();
  // Into another array: the argument is left as it was.
  Array other = Array::empty(cache.shape(), cache.dtype());
  f.into(other, cache, slots, positions, rows);
  EXPECT_TRUE(allClose(other, want, 0, 0));
  EXPECT_TRUE(allClose(cache, before, 0, 0));
  // Into the argument itself: updated where it stands, a second specialization.
  f.into(cache, cache, slots, positions, rows);
  EXPECT_EQ(cache.data(), data);
  EXPECT_TRUE(allClose(cache, want, 0, 0));
  EXPECT_EQ(f.stats().compilations, 2u);
  // Compiled in place, the code neither allocates nor copies the cache: it
  // writes the 3 rows into it.
  Tensor c = detail::placeholder(0, cache.shape(), DType::f64),
         s = detail::placeholder(1, slots.shape(), DType::i32),
         p = detail::placeholder(2, positions.shape(), DType::i32),
         r = detail::placeholder(3, rows.shape(), DType::f64);
  Tensor result;
  {
    detail::TraceScope scope;
    result = store(c, s, p, r);
  }
  Compiled inPlace = compileGraph(result, {c, s, p, r}, JitOptions(), /*donated=*/0);
  EXPECT_EQ(count(inPlace.bufferized(), "memref.alloc"), 0) << inPlace.bufferized();
  EXPECT_EQ(count(inPlace.bufferized(), "memref.copy"), 0) << inPlace.bufferized();
  Compiled copying = compileGraph(result, {c, s, p, r});
  EXPECT_GE(count(copying.bufferized(), "memref.copy"), 1) << copying.bufferized();
  // A donated input must be the output array itself.
  Array elsewhere = cache.copy();
  EXPECT_EQ(errorOf([&] { inPlace.callInto({cache, slots, positions, rows}, elsewhere); }),
            "[call] input 0 is updated in place: this specialization needs it to be output 0's "
            "array");
  // Rows written from the argument itself: in NumPy, b[i] = a[:3] reads a
  // before any row is written; so does the in-place update (bufferization
  // sees the slice alias the rows written after it, and copies it first).
  auto shift = jit([](const Tensor &a, const Tensor &i) {
    return indexPut(a, Index{i}, slice(a, {0, 0}, {3, 8}));
  });
  Array grid = randomArray({6, 8}, DType::f64, 34), at = Array::fromVector<int32_t>({1, 2, 3}, {3});
  Array shifted = numpy("b", {{"a", grid}, {"i", at}}, "b = a.copy(); b[i] = a[:3]");
  shift.into(grid, grid, at);
  EXPECT_TRUE(allClose(grid, shifted, 0, 0));
  // Any function may run into an argument: where the result's elements depend
  // on others of it (a transpose, a product), bufferization copies what it
  // must; the numbers are those of the out-of-place call.
  Array square = randomArray({6, 6}, DType::f64, 33), kept = square.copy();
  auto transposeInto = jit([](const Tensor &x) { return transpose(x, {1, 0}) * 2 + x; });
  transposeInto.into(square, square);
  EXPECT_TRUE(allClose(square, numpy("x.T * 2 + x", {{"x", kept}}), 0, 0));
  auto productInto = jit([](const Tensor &x) { return matmul(x, x); });
  kept = square.copy();
  productInto.into(square, square);
  EXPECT_TRUE(withinBound(square, numpy("x @ x", {{"x", kept}}), productBound(kept, kept)));
  // GPU code is kernels over device copies: no loop of rows in order there.
  JitOptions gpu;
  gpu.target = Target::GPU;
  gpu.gpuEmulate = true;
  EXPECT_EQ(errorOf([&] { jit(store, gpu).into(cache, cache, slots, positions, rows); }),
            "[index_put] the gpu-emulated target cannot run it (its rows are written in order, "
            "by a loop on the host); compile it for the CPU");
}

} // namespace

namespace {

TEST(MixedPrecision, FewRowsReadFloat32WeightsWithoutConverting) {
  auto plain = jit([](const Tensor &x, const Tensor &w) { return matmul(x, w); });
  auto tied = jit([](const Tensor &x, const Tensor &w) { return matmul(x, w.T()); });
  Array x = randomArray({2, 64}, DType::f64, 90), w = randomArray({64, 300}, DType::f32, 91);
  Array x13 = randomArray({13, 64}, DType::f64, 94);
  EXPECT_TRUE(
      withinBound(plain(x13, w), numpy("x @ w", {{"x", x13}, {"w", w}}), productBound(x13, w)));
  EXPECT_EQ(plain.compile(x13, w).blasCalls(), 0);
  Array wt = randomArray({50, 64}, DType::f32, 92);
  EXPECT_TRUE(withinBound(plain(x, w), numpy("x @ w", {{"x", x}, {"w", w}}), productBound(x, w)));
  EXPECT_TRUE(withinBound(tied(x, wt), numpy("x @ w.T", {{"x", x}, {"w", wt}}),
                          productBound(x, wt.transposed({1, 0}).copy())));
  for (const Compiled &c : {plain.compile(x, w), tied.compile(x, wt)}) {
    // One mixed-precision product, no float64 copy of the weights anywhere.
    EXPECT_NE(c.optimized().find("linalg.matmul"), std::string::npos) << c.optimized();
    EXPECT_NE(c.optimized().find("tensor<2x64xf64>, tensor<"), std::string::npos);
    EXPECT_EQ(c.optimized().find("x64xf64>) outs"), std::string::npos) << c.optimized();
    EXPECT_EQ(c.optimized().find("linalg.transpose"), std::string::npos);
    EXPECT_EQ(c.blasCalls(), 0);
  }
  // Many rows: convert once, then BLAS (dgemm).
  Array rows = randomArray({40, 64}, DType::f64, 93);
  EXPECT_EQ(plain.compile(rows, w).blasCalls(), 1);
  EXPECT_TRUE(
      withinBound(plain(rows, w), numpy("x @ w", {{"x", rows}, {"w", w}}), productBound(rows, w)));
}

TEST(StreamedProducts, EachRowIsItsOneRowProduct) {
  // Few-row products streamed as batched decoding's (JitOptions::streamRows):
  // within the product bound of NumPy's, and each row bit for bit the product
  // of that row alone -- with ragged tiles (rows not a multiple of the register
  // block, weight rows not a multiple of the tile), K the vectors do not
  // divide, and K the row chunks do not divide.
  JitOptions streamed;
  streamed.streamRows = 16;
  auto plain = jit([](const Tensor &x, const Tensor &w) { return matmul(x, w); }, streamed);
  auto tied = jit([](const Tensor &x, const Tensor &w) { return matmul(x, w.T()); }, streamed);
  struct Case {
    int64_t rows, k, n;
    DType dx;
  };
  uint64_t seed = 200;
  for (const Case &c :
       {Case{3, 64, 50, DType::f32}, Case{8, 64, 67, DType::f64}, Case{5, 96, 64, DType::f32},
        Case{16, 32, 33, DType::f64}, Case{4, 12, 13, DType::f32}, Case{7, 6, 64, DType::f64},
        // K not a multiple of the chunks' passes: whole passes, then the last
        // chunk's rows one at a time
        Case{3, 45, 50, DType::f32}, Case{1, 1001, 20, DType::f64},
        Case{2, 2000, 37, DType::f64}}) {
    Array x = randomArray({c.rows, c.k}, c.dx, ++seed),
          wt = randomArray({c.n, c.k}, DType::f32, ++seed),
          w = randomArray({c.k, c.n}, DType::f32, ++seed);
    const std::string shape = std::to_string(c.rows) + "x" + std::to_string(c.k) + " " +
                              dtypeName(c.dx) + ", n " + std::to_string(c.n);
    Array viaTied = tied(x, wt), viaPlain = plain(x, w);
    EXPECT_TRUE(withinBound(viaTied, numpy("x @ w.T", {{"x", x}, {"w", wt}}),
                            productBound(x, wt.transposed({1, 0}).copy())))
        << "x @ w.T, " << shape;
    EXPECT_TRUE(withinBound(viaPlain, numpy("x @ w", {{"x", x}, {"w", w}}), productBound(x, w)))
        << "x @ w, " << shape;
    EXPECT_EQ(tied.compile(x, wt).blasCalls(), 0) << shape;
    EXPECT_EQ(plain.compile(x, w).blasCalls(), 0) << shape;
    for (int64_t r = 0; r < c.rows; ++r) {
      Array row = x.sliced(0, r, r + 1).contiguous(), tiedAlone = tied(row, wt),
            plainAlone = plain(row, w);
      EXPECT_EQ(tiedAlone.toDoubles(), viaTied.sliced(0, r, r + 1).contiguous().toDoubles())
          << "x @ w.T, row " << r << " of " << shape;
      EXPECT_EQ(plainAlone.toDoubles(), viaPlain.sliced(0, r, r + 1).contiguous().toDoubles())
          << "x @ w, row " << r << " of " << shape;
    }
  }
}

} // namespace
