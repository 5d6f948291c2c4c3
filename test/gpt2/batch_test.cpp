// Batched decoding: sequences decoded together (Model::generateBatch, and
// Decoder with sequences joining and leaving) get exactly -- bit for bit --
// the logits and tokens each gets decoded alone. That holds because every
// product of a step streams its weights with each row computed as a one-row
// product is (JitOptions::streamRows) and each row attends to its own slot.
#include "test_util.h"
#include "models/gpt2/RandomCheckpoint.h"
#include "models/gpt2/Model.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <unistd.h>

using namespace tinymlir;
using tinymlir::test::errorOf;
namespace fs = std::filesystem;

namespace {

/// Bitwise equality of two arrays (same dtype and shape).
bool identical(const Array &a, const Array &b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape())
    return false;
  Array x = a.contiguous(), y = b.contiguous();
  return std::memcmp(x.data(), y.data(), x.nbytes()) == 0;
}

/// Prompts of different lengths (buckets 16 and 32 after padding).
const std::vector<std::vector<int32_t>> kPrompts{
    {3, 1, 4}, {1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4}, {7}, {2, 7, 1, 8, 2, 8}};

class BatchTest : public ::testing::TestWithParam<gpt2::Precision> {
protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("tinymlir-batch-test-" + std::to_string(::getpid()));
    // 64 wide: products with K = 64, 256 (the streaming kernel's K-chunked
    // form); two layers: float32 into the first, float64 after (reference);
    // 160 positions: the cache grows past its first bucket of 128.
    gpt2::Config c;
    c.n_layer = 2;
    c.n_head = 4;
    c.n_embd = 64;
    c.n_positions = 160;
    c.vocab_size = 300;
    gpt2::writeRandomCheckpoint(dir_.string(), c, 11, /*weightScale=*/0.3);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static fs::path dir_;
};
fs::path BatchTest::dir_;

/// A generate callback keeping each token's logits row (1, V) in `into`.
gpt2::TokenCallback keepRows(std::vector<Array> &into) {
  return [&into](int64_t, int32_t, const Array &logits) {
    const int64_t T = logits.dim(0);
    into.push_back(logits.sliced(0, T - 1, T).contiguous());
  };
}

/// Every token's logits, per sequence.
using Logits = std::map<size_t, std::vector<Array>>;

TEST_P(BatchTest, EachSequenceGetsTheTokensAndLogitsItGetsAlone) {
  gpt2::Model model(gpt2::loadCheckpoint(dir_.string()), {}, GetParam());
  Logits batched;
  // 50 tokens: the batch's steps attend to 128 positions once its longest
  // sequence passes 64, those of shorter sequences alone to 64.
  auto together =
      model.generateBatch(kPrompts, 50, {}, [&](size_t i, int64_t, int32_t, const Array &logits) {
        batched[i].push_back(logits.copy());
      });
  ASSERT_EQ(together.size(), kPrompts.size());
  for (size_t i = 0; i < kPrompts.size(); ++i) {
    std::vector<Array> alone;
    auto tokens = model.generate(kPrompts[i], 50, {}, [&](int64_t, int32_t, const Array &logits) {
      alone.push_back(logits.copy());
    });
    EXPECT_EQ(together[i], tokens) << "sequence " << i;
    ASSERT_EQ(batched[i].size(), alone.size());
    for (size_t t = 0; t < alone.size(); ++t)
      EXPECT_TRUE(identical(batched[i][t], alone[t])) << "sequence " << i << ", token " << t;
  }
  // Not a degenerate model: the sequences differ from each other.
  EXPECT_NE(together[0], together[2]);
}

TEST_P(BatchTest, SampledSequencesUseTheirOwnSeeds) {
  gpt2::Model model(gpt2::loadCheckpoint(dir_.string()), {}, GetParam());
  gpt2::GenerateOptions how;
  how.sampling.temperature = 1.3;
  how.sampling.topK = 40;
  how.sampling.seed = 7;
  auto together = model.generateBatch(kPrompts, 12, how);
  for (size_t i = 0; i < kPrompts.size(); ++i) {
    gpt2::GenerateOptions alone = how;
    alone.sampling.seed = 7 + i;
    EXPECT_EQ(together[i], model.generate(kPrompts[i], 12, alone)) << "sequence " << i;
  }
}

TEST_P(BatchTest, SequencesJoinAndLeaveBetweenSteps) {
  gpt2::Model model(gpt2::loadCheckpoint(dir_.string()), {}, GetParam());
  // What each prompt's greedy continuation looks like alone: its logits.
  auto aloneLogits = [&](const std::vector<int32_t> &prompt, int64_t tokens) {
    std::vector<Array> out;
    model.generate(prompt, tokens, {},
                   [&](int64_t, int32_t, const Array &l) { out.push_back(l.copy()); });
    return out;
  };
  gpt2::Decoder decoder(model, 4, 16);
  std::map<gpt2::Decoder::Sequence, std::vector<int32_t>> ids;
  std::map<gpt2::Decoder::Sequence, std::vector<Array>> seen;
  auto join = [&](size_t p) {
    auto [q, logits] = decoder.add(kPrompts[p]);
    ids[q] = kPrompts[p];
    ids[q].push_back(gpt2::argmaxLast(logits));
    seen[q].push_back(logits);
    return q;
  };
  auto step = [&] {
    std::vector<int32_t> last;
    for (auto q : decoder.active())
      last.push_back(ids[q].back());
    Array logits = decoder.step(last);
    ASSERT_EQ(logits.dim(0), static_cast<int64_t>(decoder.active().size()));
    for (size_t r = 0; r < decoder.active().size(); ++r) {
      auto q = decoder.active()[r];
      Array row = logits.sliced(0, r, r + 1).contiguous();
      ids[q].push_back(gpt2::argmaxLast(row));
      seen[q].push_back(row);
    }
  };
  auto a = join(0), b = join(1);
  for (int i = 0; i < 3; ++i)
    step();
  auto c = join(2); // joins mid-way, into slot 2
  step();
  decoder.remove(a); // leaves a hole in slot 0...
  step();
  auto d = join(3); // ...which the next sequence takes
  EXPECT_EQ(decoder.active(), (std::vector<gpt2::Decoder::Sequence>{d, b, c}));
  for (int i = 0; i < 120; ++i) // b passes 128 positions: the caches grow
    step();
  EXPECT_GT(decoder.capacity(), 128);
  std::map<gpt2::Decoder::Sequence, size_t> prompt{{a, 0}, {b, 1}, {c, 2}, {d, 3}};
  for (auto [q, p] : prompt) {
    std::vector<Array> alone = aloneLogits(kPrompts[p], static_cast<int64_t>(seen[q].size()));
    ASSERT_EQ(alone.size(), seen[q].size());
    for (size_t t = 0; t < alone.size(); ++t)
      ASSERT_TRUE(identical(seen[q][t], alone[t])) << "prompt " << p << ", token " << t;
  }
  // At the context's end a step is refused, naming the limit.
  EXPECT_EQ(errorOf([&] {
              for (int i = 0; i < 200; ++i)
                step();
            }),
            "[gpt2] 161 positions exceed the context of 160 positions");
}

TEST_P(BatchTest, AnUnplannedDecoderStepsAtTheCapacityWhileItsWidthCompiles) {
  // Alone, planned (compileAhead): steps attend to 64 columns.
  gpt2::Model planned(gpt2::loadCheckpoint(dir_.string()), {}, GetParam());
  std::vector<Array> alone;
  std::vector<int32_t> tokens = planned.generate(
      kPrompts[1], 8, {}, [&](int64_t, int32_t, const Array &l) { alone.push_back(l.copy()); });
  // A server's decoder has no plan: its first step compiles the capacity's
  // width (128) and attends to it while 64 compiles in the background.
  gpt2::Model model(gpt2::loadCheckpoint(dir_.string()), {}, GetParam());
  {
    gpt2::Decoder decoder(model, 1, 16);
    auto [q, logits] = decoder.add(kPrompts[1]);
    EXPECT_TRUE(identical(logits, alone[0]));
    for (size_t t = 1; t < alone.size(); ++t)
      EXPECT_TRUE(identical(decoder.step({tokens[t - 1]}), alone[t])) << "token " << t;
  } // joins the background compilation
  // The same compilations as planned decoding, and a step's block at the
  // other width for each input dtype (float32 into the first layer, float64
  // after in reference precision; float32 into both otherwise).
  const size_t dtypes = GetParam() == gpt2::Precision::Reference ? 2 : 1;
  EXPECT_EQ(model.compilations() + model.diskHits(),
            planned.compilations() + planned.diskHits() + dtypes);
}

/// A prompt after a cached prefix is computed as rows at their positions
/// attending to the whole capacity, in other products than the prompt at once:
/// the logits agree within rounding. Both paths' float32 products (K <= 4 *
/// n_embd = 256 terms) err within gamma_256 relative to magnitudes below 16
/// (the logits' bound with these weights, checked), amplified by at most 8:
/// 2 * 8 * 16 * gamma_256 = 3.9e-3. A key or value copied from a wrong
/// position changes them by 1 or more (one missing key: 9.4).
const double kPrefixTolerance = 2 * 8 * 16 * (256 * std::ldexp(1.0, -24));

TEST_P(BatchTest, APrefixCacheGivesTheTokensOfThePromptComputedAtOnce) {
  gpt2::Model model(gpt2::loadCheckpoint(dir_.string()), {}, GetParam());
  gpt2::PrefixCache cache(1000);
  gpt2::GenerateOptions how;
  how.prefixCache = &cache;
  std::vector<int32_t> first;
  for (int32_t i = 0; i < 40; ++i)
    first.push_back(i * 7 % 300);
  std::vector<int32_t> out = model.generate(first, 20, how);
  // The first prompt found nothing; the cache holds what was computed: the
  // prompt and the 19 tokens fed back (the 20th was chosen, never computed).
  gpt2::PrefixCache::Stats s = cache.stats();
  EXPECT_EQ(s.misses, 1);
  EXPECT_EQ(s.hits, 0);
  EXPECT_EQ(s.positions, 59);
  auto agree = [&](const std::vector<int32_t> &prompt, const gpt2::GenerateOptions &plain,
                   int64_t saved) {
    gpt2::GenerateOptions cached = plain;
    cached.prefixCache = &cache;
    std::vector<Array> alone, reused;
    const int64_t before = cache.stats().tokensSaved;
    EXPECT_EQ(model.generate(prompt, 10, plain, keepRows(alone)),
              model.generate(prompt, 10, cached, keepRows(reused)));
    EXPECT_EQ(cache.stats().tokensSaved - before, saved);
    ASSERT_EQ(alone.size(), reused.size());
    for (size_t t = 0; t < alone.size(); ++t) {
      std::vector<double> a = alone[t].toDoubles(), b = reused[t].toDoubles();
      for (size_t v = 0; v < a.size(); ++v) {
        ASSERT_LT(std::abs(a[v]), 16) << "the tolerance's premise";
        ASSERT_NEAR(a[v], b[v], kPrefixTolerance) << "token " << t << ", logit " << v;
      }
    }
  };
  // A chat-style follow-up: the conversation so far, and more; greedy, then
  // sampled with a seed.
  std::vector<int32_t> follow(first);
  follow.insert(follow.end(), out.begin(), out.end());
  follow.insert(follow.end(), {5, 6, 7});
  agree(follow, {}, 59);
  gpt2::GenerateOptions sampled;
  sampled.sampling.temperature = 0.8;
  sampled.sampling.topK = 20;
  sampled.sampling.seed = 9;
  agree(follow, sampled, 62); // all but the last of the greedy follow-up's prompt
  // A prompt inside an entry: all but its last position come from the cache.
  agree(std::vector<int32_t>(follow.begin(), follow.begin() + 30), {}, 29);
  // Past the decoder's first capacity (128 positions, then 160): the copy
  // goes into the grown caches.
  std::vector<int32_t> longer(first);
  for (int32_t i = 0; i < 100; ++i)
    longer.push_back((i * 13 + 1) % 300);
  std::vector<int32_t> more = model.generate(longer, 5, how);
  longer.insert(longer.end(), more.begin(), more.end());
  longer.insert(longer.end(), {8, 9});
  agree(longer, {}, 144); // 140 of the prompt, 4 tokens fed back
  s = cache.stats();
  EXPECT_EQ(s.hits, 5);
  EXPECT_LE(s.positions, 1000);
}

TEST_P(BatchTest, BadUseIsRejected) {
  gpt2::Model model(gpt2::loadCheckpoint(dir_.string()), {}, GetParam());
  EXPECT_EQ(errorOf([&] { gpt2::Decoder(model, 0, 16); }),
            "[gpt2] a decoder has 1 to 64 slots, not 0");
  gpt2::Decoder decoder(model, 1, 16);
  EXPECT_EQ(errorOf([&] { decoder.step({1}); }),
            "[gpt2] a step takes a token for each of the 0 active sequences, not 1");
  auto [q, logits] = decoder.add({1, 2});
  EXPECT_EQ(logits.shape(), (Shape{1, 300}));
  EXPECT_EQ(errorOf([&] { decoder.add({3}); }),
            "[gpt2] every one of the decoder's 1 slots is taken");
  EXPECT_EQ(errorOf([&] { decoder.step({300}); }),
            "[gpt2] token id 300 is outside the vocabulary of 300");
  EXPECT_EQ(errorOf([&] { decoder.remove(q + 1); }), "[gpt2] no sequence 1 in this decoder");
  EXPECT_EQ(errorOf([&] { model.generateBatch({}, 3); }),
            "[gpt2] a batch has 1 to 64 prompts, not 0");
  EXPECT_EQ(errorOf([&] { model.generateBatch({{1}, {}}, 3); }),
            "[gpt2] the prompt is empty: give at least one token");
}

INSTANTIATE_TEST_SUITE_P(Precisions, BatchTest,
                         ::testing::Values(gpt2::Precision::Reference, gpt2::Precision::Float32),
                         [](const auto &info) {
                           return std::string(gpt2::precisionName(info.param));
                         });

} // namespace
