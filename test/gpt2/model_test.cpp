// The GPT-2 model's input checks (numerics are checked against the NumPy
// reference by test/python/verify_gpt2.py, run from CTest).
#include "test_util.h"
#include "models/gpt2/RandomCheckpoint.h"
#include "models/gpt2/Model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <filesystem>
#include <unistd.h>

using namespace tinymlir;
using tinymlir::test::errorOf;
namespace fs = std::filesystem;

namespace {

/// Full-prefix and incremental decoding differ only in rounding: their float32
/// products (at most K = 4 * n_embd = 32 terms, each within gamma_K relative to
/// magnitudes below 4 with these weights) are blocked differently. Both err
/// (factor 2), amplified by at most 8 through one block and the tied
/// unembedding: 2 * 8 * 4 * gamma_32 = 1.2e-5, with unit roundoff 2^-24. A
/// wrong cache position or mask changes logits by 1e-2 or more.
const double kPathTolerance = 2 * 8 * 4 * (32 * std::ldexp(1.0, -24));

gpt2::GenerateOptions decoding(bool incremental) {
  gpt2::GenerateOptions how;
  how.incremental = incremental;
  return how;
}

/// A generate callback keeping each step's last row of logits in `into`.
gpt2::TokenCallback keepLastRows(std::vector<Array> &into) {
  return [&into](int64_t, int32_t, const Array &logits) {
    const int64_t T = logits.dim(0);
    into.push_back(logits.sliced(0, T - 1, T).contiguous());
  };
}

/// Full-prefix and incremental logits (vocabulary V) agree within rounding.
void expectSameLogits(const std::vector<Array> &full, const std::vector<Array> &cached, int64_t V) {
  ASSERT_EQ(full.size(), cached.size());
  for (size_t s = 0; s < full.size(); ++s)
    for (int64_t v = 0; v < V; ++v)
      EXPECT_NEAR(full[s].at({0, v}), cached[s].at({0, v}), kPathTolerance) << "step " << s;
}

class ModelTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("tinymlir-model-test-" + std::to_string(::getpid()));
    gpt2::Config c;
    c.n_layer = 2; // two: the first layer takes float32, the second float64
    c.n_head = 2;
    c.n_embd = 8;
    c.n_positions = 48;
    c.vocab_size = 20;
    gpt2::writeRandomCheckpoint(dir_.string(), c, 5);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static fs::path dir_;
};
fs::path ModelTest::dir_;

TEST_F(ModelTest, RejectsIdsOutsideTheVocabulary) {
  gpt2::Model model(gpt2::loadCheckpoint(dir_.string()));
  EXPECT_EQ(errorOf([&] { model.forward({1, 20, 3}); }),
            "[gpt2] token id 20 at position 1 is outside the vocabulary of 20");
  EXPECT_EQ(errorOf([&] { model.forward({-1}); }),
            "[gpt2] token id -1 at position 0 is outside the vocabulary of 20");
  EXPECT_EQ(errorOf([&] { model.forward({}); }),
            "[gpt2] the prompt is empty: give at least one token");
  EXPECT_EQ(model.compilations(), 0u) << "nothing is compiled for rejected input";
}

TEST_F(ModelTest, RejectsSequencesBeyondTheContext) {
  gpt2::Model model(gpt2::loadCheckpoint(dir_.string()));
  std::vector<int32_t> long_(49, 1);
  EXPECT_EQ(errorOf([&] { model.forward(long_); }),
            "[gpt2] 49 tokens exceed the context of 48 positions");
  for (bool incremental : {false, true})
    EXPECT_EQ(errorOf([&] { model.generate({1, 2, 3}, 46, decoding(incremental)); }),
              "[gpt2] a prompt of 3 tokens plus 46 new tokens exceeds the context of 48 positions");
  EXPECT_EQ(errorOf([&] { model.checkIds({1, 2, 3}, 46); }),
            "[gpt2] a prompt of 3 tokens plus 46 new tokens exceeds the context of 48 positions");
  EXPECT_NO_THROW(model.checkIds({1, 2, 3}, 45));
  EXPECT_EQ(model.compilations(), 0u) << "nothing is compiled for rejected input";
}

TEST_F(ModelTest, ForwardGivesFloat64LogitsAndFloat64Residuals) {
  gpt2::Model model(gpt2::loadCheckpoint(dir_.string()));
  gpt2::Trace trace;
  Array logits = model.forward({3, 1, 4}, &trace);
  EXPECT_EQ(logits.shape(), (Shape{3, 20}));
  EXPECT_EQ(logits.dtype(), DType::f64);
  EXPECT_EQ(trace.embed.dtype(), DType::f32);
  ASSERT_EQ(trace.attn.size(), 2u);
  ASSERT_EQ(trace.ffn.size(), 2u);
  for (const Array &a : {trace.attn[0], trace.attn[1], trace.ffn[0], trace.ffn[1]}) {
    EXPECT_EQ(a.dtype(), DType::f64);
    EXPECT_EQ(a.shape(), (Shape{3, 8})); // the prompt's rows, not the padded bucket's
  }
  std::vector<int32_t> out = model.generate({3, 1, 4}, 3, decoding(false));
  EXPECT_EQ(out.size(), 3u);
  for (int32_t id : out)
    EXPECT_TRUE(id >= 0 && id < 20);
}

TEST_F(ModelTest, IncrementalDecodingMatchesFullPrefixRecomputation) {
  gpt2::Model model(gpt2::loadCheckpoint(dir_.string()));
  for (const std::vector<int32_t> &prompt :
       {std::vector<int32_t>{7}, std::vector<int32_t>{3, 1, 4, 1, 5}}) {
    std::vector<Array> full, cached;
    std::vector<int32_t> a = model.generate(prompt, 12, decoding(false), keepLastRows(full));
    std::vector<int32_t> b = model.generate(prompt, 12, decoding(true), keepLastRows(cached));
    EXPECT_EQ(a, b);
    expectSameLogits(full, cached, 20);
  }
}

TEST_F(ModelTest, TracesComeFromFullPrefixDecoding) {
  gpt2::Model model(gpt2::loadCheckpoint(dir_.string()));
  std::vector<int64_t> traced, rows;
  std::vector<double> traceLogit;
  gpt2::GenerateOptions how; // incremental, but traces need every prefix
  how.onTrace = [&](int64_t step, const gpt2::Trace &t) {
    traced.push_back(step);
    traceLogit.push_back(t.logits.at({t.logits.dim(0) - 1, 0}));
    EXPECT_EQ(t.attn.size(), 2u);
  };
  std::vector<double> tokenLogit;
  std::vector<int32_t> out =
      model.generate({3, 1, 4}, 4, how, [&](int64_t, int32_t, const Array &logits) {
        rows.push_back(logits.dim(0));
        tokenLogit.push_back(logits.at({logits.dim(0) - 1, 0}));
      });
  EXPECT_EQ(out, model.generate({3, 1, 4}, 4, decoding(false)));
  EXPECT_EQ(traced, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(rows, (std::vector<int64_t>{3, 4, 5, 6})) << "the whole prefix at every step";
  EXPECT_EQ(traceLogit, tokenLogit);
}

TEST(Gpt2PromptBucket, PowersOfTwoAndOneAndAHalfTimesThem) {
  const std::vector<std::pair<int64_t, int64_t>> cases = {
      {1, 8},     {8, 8},     {9, 12},    {12, 12},    {13, 16},    {16, 16},  {17, 24},
      {24, 24},   {25, 32},   {33, 48},   {49, 64},    {65, 96},    {97, 128}, {129, 192},
      {257, 384}, {385, 512}, {700, 768}, {769, 1024}, {1024, 1024}};
  for (auto [length, rows] : cases)
    EXPECT_EQ(gpt2::promptBucket(length, 1024), rows) << length << " tokens";
  // Never past the context, whatever it is.
  EXPECT_EQ(gpt2::promptBucket(40, 48), 48);
  EXPECT_EQ(gpt2::promptBucket(33, 40), 40);
  EXPECT_EQ(gpt2::promptBucket(3, 5), 5);
}

TEST_F(ModelTest, DecodingCompilesNothingPerToken) {
  auto compilationsFor = [&](int64_t tokens) {
    gpt2::Model model(gpt2::loadCheckpoint(dir_.string()));
    model.generate({3, 1, 4, 1, 5, 9, 2, 6}, tokens);
    return model.compilations();
  };
  size_t four = compilationsFor(4), thirtyTwo = compilationsFor(32);
  EXPECT_EQ(thirtyTwo, four) << "32 tokens compiled " << thirtyTwo << " specializations, 4 tokens "
                             << four;
  // Compiled ahead, from traced types: the prompt's embedding, head, and a
  // projection, a block and the two cache writes for each input dtype
  // (float32 into the first layer, float64 after), and the same for the steps
  // but the head: 19, none planned in vain.
  EXPECT_EQ(four, 19u);
  // One token needs only the prompt's 10.
  EXPECT_EQ(compilationsFor(1), 10u);
  // Compiled ahead, decoding compiles nothing more: the planned types are
  // those the steps use.
  gpt2::Model model(gpt2::loadCheckpoint(dir_.string()));
  model.compileAhead(8, 4);
  EXPECT_EQ(model.compilations(), 19u);
  model.generate({3, 1, 4, 1, 5, 9, 2, 6}, 4);
  EXPECT_EQ(model.compilations(), 19u);
  EXPECT_EQ(errorOf([&] { model.compileAhead(40, 9); }),
            "[gpt2] a prompt of 40 tokens plus 9 new tokens exceeds the context of 48 positions");
  EXPECT_EQ(errorOf([&] { model.compileAhead(0, 4); }),
            "[gpt2] the prompt is empty: give at least one token");
  EXPECT_EQ(errorOf([&] { model.compileAhead(8, 0); }),
            "[gpt2] compileAhead: give at least one new token, not 0");
}

TEST(Gpt2Decoding, StepsAttendToAWidthThatGrowsWithTheSequences) {
  // The model of ModelTest (the same tolerance holds) with 160 positions:
  // decoding steps attend to the first 64 cached positions, then 128.
  const fs::path dir =
      fs::temp_directory_path() / ("tinymlir-widths-test-" + std::to_string(::getpid()));
  gpt2::Config c;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_embd = 8;
  c.n_positions = 160;
  c.vocab_size = 20;
  gpt2::writeRandomCheckpoint(dir.string(), c, 5);
  gpt2::Model model(gpt2::loadCheckpoint(dir.string()));
  // Compiled ahead: the prompt's 10, and steps at widths 64 and 128 (a block
  // each for float32 and float64 input, 2 x 2) with their projections, cache
  // writes and embedding (7): 21. Decoding compiles nothing more.
  model.compileAhead(60, 12);
  EXPECT_EQ(model.compilations(), 21u);
  std::vector<int32_t> prompt(60);
  for (size_t i = 0; i < prompt.size(); ++i)
    prompt[i] = static_cast<int32_t>(i * 7 % 20);
  // Steps at positions 60 to 70: a width's last column (63, of 64) and the
  // first steps past it, within rounding of recomputing the whole prefix.
  std::vector<Array> full, cached;
  std::vector<int32_t> a = model.generate(prompt, 12, decoding(true), keepLastRows(cached));
  EXPECT_EQ(model.compilations(), 21u);
  std::vector<int32_t> b = model.generate(prompt, 12, decoding(false), keepLastRows(full));
  EXPECT_EQ(a, b);
  expectSameLogits(full, cached, 20);
  fs::remove_all(dir);
}

TEST_F(ModelTest, RecomputingAGrowingPrefixCompilesPerLengthBucket) {
  gpt2::Model model(gpt2::loadCheckpoint(dir_.string()));
  gpt2::GenerateOptions recompute;
  recompute.incremental = false;
  // Prefix lengths 10 to 19: buckets 16 and 32, each with an embedding, the
  // attention sublayer for each input dtype (float32 into the first layer,
  // float64 after) and the feed-forward one (float64): 2 x 4, not 10 x 4;
  // and one head, on the last row, for every length.
  std::vector<int32_t> tokens = model.generate({3, 1, 4, 1, 5, 9, 2, 6, 5, 3}, 10, recompute);
  EXPECT_EQ(model.compilations(), 2 * 4 + 1u);
  // The same tokens as incremental decoding.
  EXPECT_EQ(tokens, model.generate({3, 1, 4, 1, 5, 9, 2, 6, 5, 3}, 10));
}

TEST_F(ModelTest, APrefixCacheHoldsAtMostItsPositions) {
  gpt2::Model model(gpt2::loadCheckpoint(dir_.string()));
  gpt2::PrefixCache cache(30);
  gpt2::GenerateOptions how;
  how.prefixCache = &cache;
  model.generate({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 6, how); // 15 positions
  model.generate({2, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 6, how); // 15: 30 in all
  EXPECT_EQ(cache.stats().positions, 30);
  EXPECT_EQ(cache.stats().entries, 2);
  model.generate({3, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 6, how); // the least recently used goes
  gpt2::PrefixCache::Stats s = cache.stats();
  EXPECT_EQ(s.positions, 30);
  EXPECT_EQ(s.evicted, 1);
  // The second prompt's entry is there; the first's went.
  model.generate({2, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 1, how);
  EXPECT_EQ(cache.stats().tokensSaved, 9);
  model.generate({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 1, how);
  EXPECT_EQ(cache.stats().tokensSaved, 9);
  // A sequence longer than the whole cache is not kept.
  gpt2::PrefixCache small(5);
  how.prefixCache = &small;
  model.generate({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 2, how);
  EXPECT_EQ(small.stats().entries, 0);
  cache.clear();
  EXPECT_EQ(cache.stats().positions, 0);
}

TEST_F(ModelTest, LastRowLogitsAreTheLastRowOfAll) {
  // Full-prefix decoding computes the head on the last row only: in reference
  // mode a head of at most 16 rows streams every row alike, so that row is bit
  // for bit the last row of every position's logits (checked against NumPy
  // by the verification tests).
  gpt2::Model model(gpt2::loadCheckpoint(dir_.string()));
  for (const std::vector<int32_t> &ids :
       {std::vector<int32_t>{7}, std::vector<int32_t>{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9}}) {
    const int64_t T = static_cast<int64_t>(ids.size());
    Array all = model.forward(ids), last = model.forward(ids, nullptr, true);
    ASSERT_EQ(last.shape(), (Shape{1, all.dim(1)}));
    EXPECT_EQ(last.toDoubles(), all.sliced(0, T - 1, T).contiguous().toDoubles()) << T << " ids";
  }
}

gpt2::GenerateOptions sampled(double temperature, uint64_t seed) {
  gpt2::GenerateOptions how;
  how.sampling.temperature = temperature;
  how.sampling.seed = seed;
  return how;
}

TEST_F(ModelTest, ASeedGivesTheSameTokensWhateverTheThreads) {
  gpt2::Model model(gpt2::loadCheckpoint(dir_.string()));
  const std::vector<int32_t> prompt{3, 1, 4};
  std::vector<std::vector<int32_t>> runs;
  for (int threads : {1, 2, 1}) {
    setThreads(threads);
    runs.push_back(model.generate(prompt, 24, sampled(1.5, 42)));
  }
  setThreads(0);
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_EQ(runs[0], runs[2]);
  EXPECT_EQ(runs[0], model.generate(prompt, 24, sampled(1.5, 42))) << "the default threads";
  std::vector<int32_t> other = model.generate(prompt, 24, sampled(1.5, 43));
  EXPECT_NE(runs[0], other) << "another seed, other tokens";
  EXPECT_NE(runs[0], model.generate(prompt, 24)) << "sampled, not greedy";
  // Full-prefix decoding draws the same tokens (its logits differ only in rounding).
  gpt2::GenerateOptions recompute = sampled(1.5, 42);
  recompute.incremental = false;
  EXPECT_EQ(runs[0], model.generate(prompt, 24, recompute));
  // Temperature 0 is greedy whatever the seed and filters.
  gpt2::GenerateOptions zero = sampled(0, 99);
  zero.sampling.topK = 2;
  zero.sampling.topP = 0.5;
  EXPECT_EQ(model.generate(prompt, 12, zero), model.generate(prompt, 12));
  // Bad options: rejected before anything is compiled.
  gpt2::Model fresh(gpt2::loadCheckpoint(dir_.string()));
  gpt2::GenerateOptions bad = sampled(1, 0);
  bad.sampling.topP = 1.5;
  EXPECT_EQ(errorOf([&] { fresh.generate(prompt, 4, bad); }),
            "[sampling] top_p must be in (0, 1], got 1.5");
  EXPECT_EQ(fresh.compilations(), 0u);
}

TEST_F(ModelTest, EndOfTextStopsGenerationAndIsNotEmitted) {
  gpt2::Model model(gpt2::loadCheckpoint(dir_.string()));
  const std::vector<int32_t> prompt{3, 1, 4};
  std::vector<int32_t> all = model.generate(prompt, 10); // off by default: 10 tokens
  ASSERT_EQ(all.size(), 10u);
  EXPECT_EQ(gpt2::GenerateOptions{}.endOfText, 50256);
  for (bool incremental : {true, false}) {
    // The small vocabulary has no 50256: a stop id of ours, the greedy
    // output's first occurrence of its third token.
    const int32_t stop = all[2];
    const auto first = std::find(all.begin(), all.end(), stop) - all.begin();
    gpt2::GenerateOptions how = decoding(incremental);
    how.stopAtEndOfText = true;
    how.endOfText = stop;
    std::vector<int32_t> seen;
    std::vector<int32_t> out = model.generate(
        prompt, 10, how, [&](int64_t, int32_t id, const Array &) { seen.push_back(id); });
    EXPECT_EQ(out, std::vector<int32_t>(all.begin(), all.begin() + first));
    EXPECT_EQ(seen, out) << "the stop token is not reported";
    how.endOfText = 20; // outside the vocabulary: never chosen, no stop
    EXPECT_EQ(model.generate(prompt, 10, how), all);
    how.endOfText = stop;
    how.stopAtEndOfText = false;
    EXPECT_EQ(model.generate(prompt, 10, how), all);
  }
}

} // namespace
