// Type rules of the tracing frontend (no compilation involved).
#include "test_util.h"
#include <tinymlir/tinymlir.h>

#include <gtest/gtest.h>

using namespace tinymlir;
using tinymlir::test::errorOf;

namespace {

Tensor input(const Shape &shape, DType dtype) { return detail::placeholder(0, shape, dtype); }

TEST(Frontend, BroadcastShapes) {
  EXPECT_EQ((input({3, 7}, f32) + input({7}, f32)).shape(), (Shape{3, 7}));
  EXPECT_EQ((input({3, 1}, f32) * input({1, 7}, f32)).shape(), (Shape{3, 7}));
  EXPECT_EQ((input({2, 1, 4}, f32) - input({3, 1}, f32)).shape(), (Shape{2, 3, 4}));
  EXPECT_EQ((input({}, f32) / input({5}, f32)).shape(), (Shape{5}));
  EXPECT_EQ(errorOf([] { input({3, 7}, f32) + input({5}, f32); }),
            "[add] cannot broadcast shapes (3, 7) and (5,)");
}

TEST(Frontend, PromotionInsertsCastNodes) {
  Tensor r = input({3}, f32) * f64(2.0);
  EXPECT_EQ(r.dtype(), DType::f64);
  EXPECT_EQ((input({3}, f32) * 2.0).dtype(), DType::f32);
  EXPECT_EQ((input({3}, i32) * 2).dtype(), DType::i32);
  EXPECT_EQ((input({3}, i32) * 2.0).dtype(), DType::f64);
  EXPECT_EQ((input({3}, i32) + input({3}, f32)).dtype(), DType::f64);
  EXPECT_EQ((input({3}, f32) + input({3}, f32)).dtype(), DType::f32);
  EXPECT_EQ((input({3}, f32) + f32(1.0)).dtype(), DType::f32);
}

TEST(Frontend, ReductionShapes) {
  Tensor x = input({2, 3, 4}, f32);
  EXPECT_EQ(sum(x, 1).shape(), (Shape{2, 4}));
  EXPECT_EQ(sum(x, -1, true).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(mean(x).shape(), (Shape{}));
  EXPECT_EQ(var(x, std::nullopt, true).shape(), (Shape{1, 1, 1}));
  EXPECT_EQ(errorOf([&] { max(x, -4); }),
            "[max] axis -4 is out of bounds for array of dimension 3");
  EXPECT_EQ(errorOf([&] { var(x, 3); }), "[var] axis 3 is out of bounds for array of dimension 3");
  // Several axes, as NumPy's tuples: one reduction node, any order, negative too.
  EXPECT_EQ(sum(x, {2, 0}).shape(), (Shape{3}));
  EXPECT_EQ(mean(x, {-1, 1}, true).shape(), (Shape{2, 1, 1}));
  EXPECT_EQ(max(x, std::vector<int64_t>{}).shape(), (Shape{2, 3, 4})); // each value alone
  EXPECT_EQ(errorOf([&] { sum(x, {1, -2}); }), "[sum] duplicate value in 'axis'");
  try {
    min(x, {0, 5});
    ADD_FAILURE() << "no error";
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), ErrorKind::Axis) << e.what(); // numpy.exceptions.AxisError
  }
}

TEST(Frontend, IntegerArithmeticWhereFloatsAreRequired) {
  Tensor n = input({4}, i32);
  // As in NumPy: exp, sqrt and tanh of int32 and int32 / int32 are float64.
  EXPECT_EQ(exp(n).dtype(), DType::f64);
  EXPECT_EQ(sqrt(n).dtype(), DType::f64);
  EXPECT_EQ(tanh(n).dtype(), DType::f64);
  EXPECT_EQ((n / n).dtype(), DType::f64);
  EXPECT_EQ((n / 2).dtype(), DType::f64);
  EXPECT_EQ(pow(n, 2).dtype(), DType::i32);                  // integer powers, as NumPy's
  EXPECT_EQ(exp(input({4}, DType::i8)).dtype(), DType::f16); // the float that holds int8
  EXPECT_EQ(sum(n).dtype(), DType::i64); // as NumPy's: int32 sums accumulate in int64
  EXPECT_EQ(prod(n, 0).dtype(), DType::i64);
  EXPECT_EQ(var(n).dtype(), DType::f64); // as NumPy's: int32 averaged in float64
  EXPECT_EQ(mean(n, 0).dtype(), DType::f64);
}

TEST(Frontend, LayoutOpsCheckTheirArguments) {
  Tensor x = input({4, 6}, f32);
  EXPECT_EQ(reshape(x, {3, -1}).shape(), (Shape{3, 8}));
  EXPECT_EQ(errorOf([&] { reshape(x, {5, 5}); }),
            "[reshape] cannot reshape (4, 6) (24 elements) to (5, 5) (25 elements)");
  EXPECT_EQ(x.T().shape(), (Shape{6, 4}));
  EXPECT_NE(errorOf([&] { transpose(x, {0, 0}); }).find("[transpose] permutation (0, 0)"),
            std::string::npos);
  EXPECT_EQ(split(x, 3, 1).size(), 3u);
  EXPECT_EQ(split(x, 3, 1)[2].shape(), (Shape{4, 2}));
  EXPECT_EQ(errorOf([&] { split(x, 4, 1); }),
            "[split] axis 1 of shape (4, 6) cannot be split into 4 equal sections");
  EXPECT_EQ(slice(x, {1, -2}, {3, 6}).shape(), (Shape{2, 2}));
  EXPECT_NE(errorOf([&] { slice(x, {0}, {5}); }).find("[slice] range [0, 5) on axis 0"),
            std::string::npos);
  EXPECT_EQ(errorOf([&] { matmul(input({3, 5}, f32), input({4, 7}, f32)); }),
            "[matmul] inner dimensions differ: (3, 5) @ (4, 7)");
  EXPECT_EQ(errorOf([&] { matmul(input({2, 3, 5}, f32), input({3, 5, 7}, f32)); }),
            "[matmul] batch dimensions differ: (2, 3, 5) @ (3, 5, 7)");
  EXPECT_EQ(matmul(input({3, 5}, f32), input({5, 7}, f64)).dtype(), DType::f64);
  EXPECT_NE(errorOf([&] {
              gather(input({10, 4}, f32), input({3}, f32));
            }).find("[gather] ids must be integers"),
            std::string::npos);
}

TEST(Frontend, ConcreteAndTracedTensors) {
  Tensor c = Array::zeros({2}, f32);
  EXPECT_TRUE(c.isConcrete());
  Tensor t = c + 1;
  EXPECT_FALSE(t.isConcrete());
  EXPECT_NE(errorOf([&] { (void)t.array(); }).find("[array] this Tensor is a traced value"),
            std::string::npos);
  EXPECT_EQ(errorOf([] { Tensor() + 1; }),
            "[add] operand is an invalid (default-constructed) Tensor");
}

TEST(Frontend, AGraphMillionsOfNodesDeepIsFreedWithoutRecursion) {
  // An unrolled loop chains each update onto the last: npbench's seidel_2d
  // made 131,000 nested destructor calls and overflowed the stack. 2,000,000
  // nodes deep (a few hundred bytes of stack each, recursively: far more than
  // the 8 MiB of a main thread).
  Tensor x = input({2}, f32);
  for (int i = 0; i < 1000000; ++i)
    x = x * 0.5f + 1.0f;
  EXPECT_EQ(x.shape(), (Shape{2}));
  x = Tensor(); // the whole chain is freed here
}

} // namespace
