// The sampler (models/gpt2/Sampling.h): its distributions checked
// statistically, with fixed seeds, against probabilities computed here
// independently; its filters, greedy choice, penalty and option checks.
#include "test_util.h"
#include "models/gpt2/Model.h"
#include "models/gpt2/Sampling.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

using namespace tinymlir;
using tinymlir::test::errorOf;

namespace {

/// Twelve logits, distinct, none improbable: at 20000 draws every expected
/// count is above 5 (chi-square's condition) at temperatures 0.7 and 1.
const std::vector<double> kLogits = {1.3, -0.4, 2.1, 0.0, -1.2, 0.7,
                                     1.9, -0.8, 0.3, 1.1, -0.1, 2.4};

std::vector<double> softmax(const std::vector<double> &logits, double temperature) {
  double top = *std::max_element(logits.begin(), logits.end()), sum = 0;
  std::vector<double> p;
  for (double l : logits)
    sum += p.emplace_back(std::exp((l - top) / temperature));
  for (double &x : p)
    x /= sum;
  return p;
}

/// Ids by decreasing probability (the test's own ordering; logits distinct).
std::vector<int32_t> byProbability(const std::vector<double> &p) {
  std::vector<int32_t> order(p.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return p[a] > p[b]; });
  return order;
}

std::vector<int64_t> counts(gpt2::Sampler &sampler, const std::vector<double> &logits, int draws) {
  std::vector<int64_t> n(logits.size(), 0);
  for (int i = 0; i < draws; ++i)
    ++n.at(sampler.next(logits, {}));
  return n;
}

/// Pearson's statistic over the ids with a non-zero probability; every draw of
/// an id of probability zero fails the test.
double chiSquare(const std::vector<int64_t> &observed, const std::vector<double> &p, int draws) {
  double chi2 = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == 0) {
      EXPECT_EQ(observed[i], 0) << "id " << i << " has probability 0";
      continue;
    }
    const double expected = p[i] * draws;
    EXPECT_GE(expected, 5) << "too few draws for chi-square at id " << i;
    chi2 += (observed[i] - expected) * (observed[i] - expected) / expected;
  }
  return chi2;
}

/// Upper 0.001 points of chi-square (a statistics table, e.g. NIST/SEMATECH
/// e-Handbook 1.3.6.7.4), by degrees of freedom: a correct sampler fails
/// with probability 1/1000 per check, and the seeds are fixed.
double critical001(int dof) {
  static const double table[] = {0,      10.828, 13.816, 16.266, 18.467, 20.515, 22.458,
                                 24.322, 26.124, 27.877, 29.588, 31.264, 32.909};
  return table[dof];
}

int nonZero(const std::vector<double> &p) {
  return static_cast<int>(std::count_if(p.begin(), p.end(), [](double x) { return x > 0; }));
}

TEST(Sampling, FrequenciesMatchTheSoftmaxOfTheLogits) {
  const int draws = 20000;
  for (double temperature : {1.0, 0.7}) {
    gpt2::Sampler sampler({.temperature = temperature, .seed = 7});
    std::vector<double> p = softmax(kLogits, temperature);
    double chi2 = chiSquare(counts(sampler, kLogits, draws), p, draws);
    EXPECT_LT(chi2, critical001(nonZero(p) - 1)) << "temperature " << temperature;
  }
}

TEST(Sampling, TopKAndTopPRenormalizeWhatTheyKeep) {
  // top-k 6, then top-p 0.8 of those six's renormalized probabilities:
  // computed here from the sorted softmax, compared by chi-square.
  const int draws = 20000;
  gpt2::Sampler sampler({.temperature = 1.0, .topK = 6, .topP = 0.8, .seed = 11});
  std::vector<double> p = softmax(kLogits, 1.0);
  std::vector<int32_t> order = byProbability(p);
  double topK = 0;
  for (int i = 0; i < 6; ++i)
    topK += p[order[i]];
  std::vector<double> want(p.size(), 0.0);
  double mass = 0;
  for (int i = 0; i < 6 && mass < 0.8; ++i)
    mass += want[order[i]] = p[order[i]] / topK;
  for (double &x : want)
    x /= mass;
  ASSERT_EQ(nonZero(want), 4) << "the case meant: 4 of the 6 reach 0.8";
  EXPECT_LT(chiSquare(counts(sampler, kLogits, draws), want, draws), critical001(3));
  std::vector<double> got = sampler.distribution(kLogits, {});
  for (size_t i = 0; i < p.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-12) << "id " << i;
}

TEST(Sampling, TopKNeverEmitsATokenOutsideTheKLargest) {
  // Flat logits: a (k+1)-th token would be drawn often.
  std::vector<double> logits(20);
  for (int i = 0; i < 20; ++i)
    logits[i] = 0.05 * ((i * 7) % 20); // a permutation of 0, 0.05, ... 0.95
  for (int64_t k : {1, 5, 19}) {
    std::vector<int32_t> order = byProbability(logits);
    std::set<int32_t> allowed(order.begin(), order.begin() + k), seen;
    gpt2::Sampler sampler({.temperature = 1.0, .topK = k, .seed = 3});
    for (int i = 0; i < 5000; ++i) {
      int32_t id = sampler.next(logits, {});
      ASSERT_TRUE(allowed.count(id)) << "top-k " << k << " drew id " << id;
      seen.insert(id);
    }
    EXPECT_EQ(seen, allowed) << "top-k " << k << ": every kept token is drawn";
  }
}

TEST(Sampling, TopPNeverEmitsATokenOutsideTheNucleus) {
  for (double temperature : {1.0, 0.7})
    for (double topP : {0.05, 0.3, 0.5, 0.9, 0.97}) {
      // The nucleus: the fewest most probable tokens whose mass reaches topP.
      std::vector<double> p = softmax(kLogits, temperature);
      std::vector<int32_t> order = byProbability(p);
      std::set<int32_t> nucleus, seen;
      double mass = 0;
      for (int32_t id : order) {
        nucleus.insert(id);
        mass += p[id];
        ASSERT_GT(std::abs(mass - topP), 1e-6) << "a case on the boundary tells nothing";
        if (mass >= topP)
          break;
      }
      gpt2::Sampler sampler({.temperature = temperature, .topP = topP, .seed = 5});
      for (int i = 0; i < 5000; ++i) {
        int32_t id = sampler.next(kLogits, {});
        ASSERT_TRUE(nucleus.count(id)) << "top-p " << topP << " drew id " << id;
        seen.insert(id);
      }
      EXPECT_EQ(seen, nucleus) << "top-p " << topP << ": every token of the nucleus is drawn";
    }
}

TEST(Sampling, TemperatureZeroIsGreedy) {
  gpt2::Sampler greedy({.temperature = 0, .topK = 3, .topP = 0.5, .seed = 1});
  EXPECT_EQ(greedy.next(kLogits, {}), 11);
  EXPECT_EQ(greedy.next({0.5, 2.0, -1.0, 2.0, 2.0}, {}), 1) << "ties: the first";
  // The last row of (T, V) logits, as argmaxLast.
  Array logits = Array::fromVector<double>({9, 0, 0, /**/ 1, 3, 3}, {2, 3});
  EXPECT_EQ(greedy.next(logits, {}), 1);
  EXPECT_EQ(gpt2::argmaxLast(logits), 1);
  std::vector<double> p = greedy.distribution(kLogits, {});
  EXPECT_EQ(p[11], 1.0);
  EXPECT_EQ(std::accumulate(p.begin(), p.end(), 0.0), 1.0);
}

TEST(Sampling, TheSameSeedGivesTheSameDrawsAndAnotherSeedOthers) {
  std::vector<double> flat(16, 0.0);
  auto draws = [&](uint64_t seed) {
    gpt2::Sampler sampler({.temperature = 1.0, .seed = seed});
    std::vector<int32_t> ids;
    for (int i = 0; i < 32; ++i)
      ids.push_back(sampler.next(flat, {}));
    return ids;
  };
  EXPECT_EQ(draws(42), draws(42));
  EXPECT_NE(draws(42), draws(43));
  // The generator and its uniform doubles are specified: the same stream on
  // every standard library (std::mt19937_64's 10000th output is fixed by the
  // C++ standard).
  std::mt19937_64 rng(5489);
  rng.discard(9999);
  EXPECT_EQ(rng(), 9981545732273789042ull);
  std::mt19937_64 one(1);
  const double u = gpt2::uniform01(one);
  EXPECT_EQ(u, static_cast<double>(std::mt19937_64(1)() >> 11) / 9007199254740992.0);
  EXPECT_TRUE(u >= 0 && u < 1);
}

TEST(Sampling, RepeatPenaltyLowersTheLogitsOfRepeatedIds) {
  std::vector<double> logits = {2.0, -2.0, 0.0, 3.0, 1.0};
  // Id 0 twice: penalized once. Id 7 is outside the logits: ignored.
  gpt2::applyRepeatPenalty(logits, std::vector<int32_t>{0, 1, 2, 0, 7}, 2.0);
  EXPECT_EQ(logits, (std::vector<double>{1.0, -4.0, 0.0, 3.0, 1.0}));
  // Through the sampler: repeated ids lose probability, the others gain.
  std::vector<double> base = {1.0, 0.5, -0.5, 0.2};
  std::vector<int32_t> history = {0, 2};
  std::vector<double> without = gpt2::Sampler({.temperature = 1.0}).distribution(base, history);
  std::vector<double> with =
      gpt2::Sampler({.temperature = 1.0, .repeatPenalty = 1.5}).distribution(base, history);
  EXPECT_LT(with[0], without[0]);
  EXPECT_LT(with[2], without[2]);
  EXPECT_GT(with[1], without[1]);
  EXPECT_GT(with[3], without[3]);
  std::vector<double> expected = softmax({1.0 / 1.5, 0.5, -0.5 * 1.5, 0.2}, 1.0);
  for (size_t i = 0; i < 4; ++i)
    EXPECT_NEAR(with[i], expected[i], 1e-15);
  // Greedy decoding is penalized too: 0 was the largest, 1 is now.
  EXPECT_EQ(gpt2::Sampler({.repeatPenalty = 2.5}).next(base, history), 1);
  EXPECT_EQ(gpt2::Sampler({}).next(base, history), 0);
}

TEST(Sampling, BadOptionsAreRejectedByName) {
  auto error = [](gpt2::SamplingOptions o) { return errorOf([&] { gpt2::Sampler s(o); }); };
  EXPECT_EQ(error({.temperature = -0.5}),
            "[sampling] temperature must be a finite number >= 0 (0: greedy), got -0.5");
  EXPECT_EQ(error({.temperature = NAN}),
            "[sampling] temperature must be a finite number >= 0 (0: greedy), got nan");
  EXPECT_EQ(error({.topK = -1}), "[sampling] top_k must be >= 0 (0: off), got -1");
  EXPECT_EQ(error({.topP = 1.5}), "[sampling] top_p must be in (0, 1], got 1.5");
  EXPECT_EQ(error({.topP = 0}), "[sampling] top_p must be in (0, 1], got 0");
  EXPECT_EQ(error({.repeatPenalty = 0}),
            "[sampling] repeat_penalty must be a finite number > 0 (1: off), got 0");
  EXPECT_EQ(error({.repeatPenalty = INFINITY}),
            "[sampling] repeat_penalty must be a finite number > 0 (1: off), got inf");
  EXPECT_EQ(error({.temperature = 1, .topK = 2, .topP = 1, .repeatPenalty = 1.2}), "<no error>");
  gpt2::Sampler sampler({.temperature = 1});
  EXPECT_EQ(errorOf([&] { sampler.next({0.0, NAN}, {}); }), "[sampling] logit 1 is NaN");
  EXPECT_EQ(errorOf([&] { sampler.next(std::vector<double>{}, {}); }),
            "[sampling] no logits to choose from");
}

} // namespace
