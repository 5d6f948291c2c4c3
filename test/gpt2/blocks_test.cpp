// GPT-2's blocks (models/gpt2/Model.h: attend, feedforward) against the
// NumPy reference's mha and ffn, causality, and the BLAS rewrite of their
// products.
#include "numpy_ref.h"
#include "test_util.h"

#include "models/gpt2/Model.h"

#include <gtest/gtest.h>

using namespace tinymlir;
using tinymlir::test::allClose;
using tinymlir::test::count;
using tinymlir::test::gamma;
using tinymlir::test::numpy;
using tinymlir::test::randomArray;

namespace {

JitOptions withoutBlas() {
  JitOptions o;
  o.blas = false;
  return o;
}

// --- Attention ------------------------------------------------------------------------

struct Block {
  Array x, g, b, wqkv, bqkv, wo, bo, wup, bup, wdown, bdown;
};
Block randomBlock(int64_t T, int64_t C, uint64_t seed) {
  Block k;
  k.x = randomArray({T, C}, DType::f32, seed);
  k.g = randomArray({C}, DType::f32, seed + 1);
  k.b = randomArray({C}, DType::f32, seed + 2);
  k.wqkv = randomArray({C, 3 * C}, DType::f32, seed + 3, 0.2);
  k.bqkv = randomArray({3 * C}, DType::f32, seed + 4, 0.2);
  k.wo = randomArray({C, C}, DType::f32, seed + 5, 0.2);
  k.bo = randomArray({C}, DType::f32, seed + 6, 0.2);
  k.wup = randomArray({C, 4 * C}, DType::f32, seed + 7, 0.2);
  k.bup = randomArray({4 * C}, DType::f32, seed + 8, 0.2);
  k.wdown = randomArray({4 * C, C}, DType::f32, seed + 9, 0.2);
  k.bdown = randomArray({C}, DType::f32, seed + 10, 0.2);
  return k;
}

/// The bound for one attention or feed-forward block on C channels, as rtol
/// and atol: the float32 parts (layer norm over C, products of C and 4C
/// terms, the scores over the head depth) each contribute at most gamma_K
/// relative to their magnitudes; the total K is at most 4C + 16. Both sides
/// err (factor 2), and the errors pass through the output projection and the
/// softmax (Lipschitz 2 in the scores), with weights of scale 0.2: an
/// amplification below 8 for these shapes. A wrong mask, scale or transpose
/// changes results by 1e-2 or more.
double blockTolerance(int64_t C) { return 2 * 8 * gamma(4 * C + 16, DType::f32); }

const std::string kReference = "import sys\nsys.path.insert(0, '" TINYMLIR_SOURCE_DIR
                               "/test/python')\nfrom gpt2_reference import mha, ffn, layer_norm\n";

auto attendFn = [](const Tensor &x, const LayerNormParams &ln, const LinearParams &qkv,
                   const LinearParams &out,
                   int64_t heads) { return gpt2::attend(x, ln, qkv, out, heads); };
auto feedforwardFn = [](const Tensor &x, const LayerNormParams &ln, const LinearParams &up,
                        const LinearParams &down) { return gpt2::feedforward(x, ln, up, down); };

TEST(Attention, AttendAndFeedforwardMatchTheReference) {
  Block k = randomBlock(7, 16, 40);
  std::map<std::string, Array> in{{"x", k.x},         {"g", k.g},        {"b", k.b},
                                  {"wqkv", k.wqkv},   {"bqkv", k.bqkv},  {"wo", k.wo},
                                  {"bo", k.bo},       {"wup", k.wup},    {"bup", k.bup},
                                  {"wdown", k.wdown}, {"bdown", k.bdown}};
  auto a = jit(attendFn);
  Array got = a(k.x, LayerNormParams{k.g, k.b}, LinearParams{k.wqkv, k.bqkv},
                LinearParams{k.wo, k.bo}, int64_t{4});
  Array want = numpy("x + mha(layer_norm(x, g, b), dict(w=wqkv, b=bqkv), dict(w=wo, b=bo), 4)", in,
                     kReference);
  EXPECT_EQ(got.dtype(), DType::f64);
  EXPECT_TRUE(allClose(got, want, blockTolerance(16), blockTolerance(16)));
  auto f = jit(feedforwardFn);
  Array ff =
      f(k.x, LayerNormParams{k.g, k.b}, LinearParams{k.wup, k.bup}, LinearParams{k.wdown, k.bdown});
  Array wantFf = numpy("x + ffn(layer_norm(x, g, b), dict(w=wup, b=bup), dict(w=wdown, b=bdown))",
                       in, kReference);
  EXPECT_EQ(ff.dtype(), DType::f64);
  EXPECT_TRUE(allClose(ff, wantFf, blockTolerance(16), blockTolerance(16)));
}

TEST(Attention, IsCausal) {
  Block k = randomBlock(6, 16, 60);
  auto a = jit(attendFn);
  auto run = [&](const Array &x) {
    return a(x, LayerNormParams{k.g, k.b}, LinearParams{k.wqkv, k.bqkv}, LinearParams{k.wo, k.bo},
             int64_t{2});
  };
  Array before = run(k.x);
  Array changed = k.x.copy();
  for (int64_t t = 4; t < 6; ++t)
    for (int64_t c = 0; c < 16; ++c)
      changed.set({t, c}, changed.at({t, c}) * -3 + 1);
  Array after = run(changed);
  for (int64_t t = 0; t < 4; ++t)
    for (int64_t c = 0; c < 16; ++c)
      EXPECT_EQ(before.at({t, c}), after.at({t, c})) << "row " << t << " saw the future";
  bool lastRowsDiffer = false;
  for (int64_t c = 0; c < 16; ++c)
    lastRowsDiffer = lastRowsDiffer || before.at({5, c}) != after.at({5, c});
  EXPECT_TRUE(lastRowsDiffer);
}

TEST(Attention, MatmulsSurviveFusionAndBecomeBlasCalls) {
  // 40 rows: more than the mixed-precision streaming kernel takes (32), so
  // every product is a GEMM.
  Block k = randomBlock(40, 32, 80);
  auto a = jit(attendFn);
  Compiled c = a.compile(k.x, LayerNormParams{k.g, k.b}, LinearParams{k.wqkv, k.bqkv},
                         LinearParams{k.wo, k.bo}, int64_t{4});
  EXPECT_EQ(count(c.optimized(), "linalg.matmul"), 2) << c.optimized();
  EXPECT_EQ(count(c.optimized(), "linalg.batch_matmul"), 2);
  EXPECT_EQ(count(c.bufferized(), "linalg.matmul"), 2) << c.bufferized();
  EXPECT_EQ(count(c.bufferized(), "linalg.batch_matmul"), 2);
  EXPECT_EQ(c.blasCalls(), 4);
  // float32: the QKV projection and the scores; float64 (promoted by the
  // float64 sqrt(depth)): weights @ values and the output projection.
  EXPECT_EQ(count(c.lowered(), "llvm.call @tinymlir_sgemm"), 2) << c.lowered();
  EXPECT_EQ(count(c.lowered(), "llvm.call @tinymlir_dgemm"), 2);
  auto loops = jit(attendFn, withoutBlas());
  auto args = std::make_tuple(k.x, LayerNormParams{k.g, k.b}, LinearParams{k.wqkv, k.bqkv},
                              LinearParams{k.wo, k.bo}, int64_t{4});
  Array viaBlas = std::apply(a, args), viaLoops = std::apply(loops, args);
  EXPECT_EQ(count(loops
                      .compile(k.x, LayerNormParams{k.g, k.b}, LinearParams{k.wqkv, k.bqkv},
                               LinearParams{k.wo, k.bo}, int64_t{4})
                      .lowered(),
                  "tinymlir_sgemm"),
            0);
  EXPECT_TRUE(allClose(viaBlas, viaLoops, blockTolerance(32), blockTolerance(32)));
}

} // namespace
