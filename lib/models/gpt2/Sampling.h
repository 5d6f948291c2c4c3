// Choosing the next token from a row of logits: greedy (the default, and what
// verification uses) or sampling, in the order of Hugging Face's generate and
// llama.cpp: repetition penalty, temperature, top-k, top-p, then one draw.
#pragma once

#include <tinymlir/array.h>

#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace tinymlir::gpt2 {

/// GPT-2's <|endoftext|>.
inline constexpr int32_t kEndOfText = 50256;

struct SamplingOptions {
  /// 0: greedy (the largest logit, the first on ties); > 0: logits / temperature.
  double temperature = 0;
  /// Keep the k most probable tokens (ties: the smaller id first); 0: all.
  int64_t topK = 0;
  /// Keep the smallest set of most probable tokens whose probability reaches
  /// topP (at least one token); in (0, 1], 1: all.
  double topP = 1;
  /// CTRL's repetition penalty on every id already in the sequence (prompt
  /// and generated): a positive logit is divided by it, a negative one
  /// multiplied. 1: off. Applies to greedy decoding too.
  double repeatPenalty = 1;
  /// The draws' generator (std::mt19937_64) is seeded with it.
  uint64_t seed = 0;

  bool greedy() const { return temperature == 0; }
  /// Throws naming the option and its value unless every option is in range.
  void validate() const;
};

/// The repetition penalty, in place, on the logits of the distinct ids of
/// `history` (ids outside the logits are ignored).
void applyRepeatPenalty(std::vector<double> &logits, std::span<const int32_t> history,
                        double penalty);

/// A seed from std::random_device (64 bits), for runs not given one.
uint64_t randomSeed();

/// A uniform double in [0, 1) from the top 53 bits of one 64-bit draw (the
/// same on every standard library, unlike std::uniform_real_distribution).
double uniform01(std::mt19937_64 &rng);

/// Picks tokens with the options' generator: one draw per sampled token,
/// none for greedy ones, so a seed gives the same ids whatever the threads.
class Sampler {
public:
  /// Validates the options.
  explicit Sampler(const SamplingOptions &options);

  /// The next id from the last row of (T, V) or (V,) float64 logits, given
  /// the ids so far (for the repetition penalty).
  int32_t next(const Array &logits, std::span<const int32_t> history);
  int32_t next(std::vector<double> logits, std::span<const int32_t> history);

  /// The probabilities the next draw uses: penalty, temperature, top-k and
  /// top-p applied, zero outside the kept tokens, summing to 1. Greedy: one
  /// at the argmax.
  std::vector<double> distribution(std::vector<double> logits,
                                   std::span<const int32_t> history) const;

private:
  SamplingOptions options_;
  std::mt19937_64 rng_;
};

} // namespace tinymlir::gpt2
