#include "models/gpt2/Sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <string>

namespace tinymlir::gpt2 {

namespace {

std::string show(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

[[noreturn]] void invalid(const std::string &what, const std::string &value) {
  throw Error("[sampling] " + what + ", got " + value);
}

/// Index of the largest value (the first on ties).
int32_t argmax(const std::vector<double> &values) {
  return static_cast<int32_t>(std::max_element(values.begin(), values.end()) - values.begin());
}

void checkLogits(const std::vector<double> &logits) {
  if (logits.empty())
    throw Error("[sampling] no logits to choose from");
  for (size_t i = 0; i < logits.size(); ++i)
    if (std::isnan(logits[i]))
      throw Error("[sampling] logit " + std::to_string(i) + " is NaN");
}

/// The tokens a draw chooses from, most probable first, with their
/// unnormalized probabilities (the largest is 1).
struct Candidates {
  std::vector<int32_t> ids;
  std::vector<double> weights;
  double total = 0;
};

/// Temperature, top-k and top-p over penalized logits.
Candidates candidates(const std::vector<double> &logits, const SamplingOptions &o) {
  const size_t V = logits.size();
  const size_t k = o.topK > 0 ? std::min<size_t>(V, static_cast<size_t>(o.topK)) : V;
  std::vector<int32_t> order(V);
  std::iota(order.begin(), order.end(), 0);
  // A total order (larger logit first, then the smaller id): the same
  // candidates on every standard library.
  auto before = [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  std::partial_sort(order.begin(), order.begin() + static_cast<ptrdiff_t>(k), order.end(), before);
  order.resize(k);
  const double top = logits[order[0]];
  if (!std::isfinite(top))
    throw Error("[sampling] the largest logit is " + show(top));
  Candidates c;
  c.ids = std::move(order);
  c.weights.resize(k);
  for (size_t i = 0; i < k; ++i) {
    c.weights[i] = std::exp((logits[c.ids[i]] - top) / o.temperature); // softmax, max subtracted
    c.total += c.weights[i];
  }
  if (o.topP < 1) { // the smallest prefix whose probability reaches topP
    double mass = 0;
    size_t n = 0;
    while (n < k) {
      mass += c.weights[n++];
      if (mass >= o.topP * c.total)
        break;
    }
    c.ids.resize(n);
    c.weights.resize(n);
    c.total = mass;
  }
  return c;
}

} // namespace

void SamplingOptions::validate() const {
  if (!(temperature >= 0) || std::isinf(temperature))
    invalid("temperature must be a finite number >= 0 (0: greedy)", show(temperature));
  if (topK < 0)
    invalid("top_k must be >= 0 (0: off)", std::to_string(topK));
  if (!(topP > 0 && topP <= 1))
    invalid("top_p must be in (0, 1]", show(topP));
  if (!(repeatPenalty > 0) || std::isinf(repeatPenalty))
    invalid("repeat_penalty must be a finite number > 0 (1: off)", show(repeatPenalty));
}

void applyRepeatPenalty(std::vector<double> &logits, std::span<const int32_t> history,
                        double penalty) {
  std::vector<bool> seen(logits.size(), false);
  for (int32_t id : history) {
    if (id < 0 || static_cast<size_t>(id) >= logits.size() || seen[id])
      continue;
    seen[id] = true;
    double &l = logits[id];
    l = l > 0 ? l / penalty : l * penalty;
  }
}

uint64_t randomSeed() {
  std::random_device device;
  return (uint64_t{device()} << 32) | device();
}

double uniform01(std::mt19937_64 &rng) { return static_cast<double>(rng() >> 11) * 0x1p-53; }

Sampler::Sampler(const SamplingOptions &options) : options_(options), rng_(options.seed) {
  options_.validate();
}

int32_t Sampler::next(const Array &logits, std::span<const int32_t> history) {
  const int64_t rows = logits.rank() == 2 ? logits.dim(0) : 1;
  Array last = logits.rank() == 2 ? logits.sliced(0, rows - 1, rows) : logits;
  return next(last.contiguous().toDoubles(), history);
}

int32_t Sampler::next(std::vector<double> logits, std::span<const int32_t> history) {
  checkLogits(logits);
  if (options_.repeatPenalty != 1)
    applyRepeatPenalty(logits, history, options_.repeatPenalty);
  if (options_.greedy())
    return argmax(logits);
  Candidates c = candidates(logits, options_);
  const double target = uniform01(rng_) * c.total;
  double cumulative = 0;
  for (size_t i = 0; i < c.ids.size(); ++i) {
    cumulative += c.weights[i];
    if (target < cumulative)
      return c.ids[i];
  }
  return c.ids.back(); // rounding: target within an ulp of the total
}

std::vector<double> Sampler::distribution(std::vector<double> logits,
                                          std::span<const int32_t> history) const {
  checkLogits(logits);
  if (options_.repeatPenalty != 1)
    applyRepeatPenalty(logits, history, options_.repeatPenalty);
  std::vector<double> p(logits.size(), 0.0);
  if (options_.greedy()) {
    p[argmax(logits)] = 1;
    return p;
  }
  Candidates c = candidates(logits, options_);
  for (size_t i = 0; i < c.ids.size(); ++i)
    p[c.ids[i]] = c.weights[i] / c.total;
  return p;
}

} // namespace tinymlir::gpt2
