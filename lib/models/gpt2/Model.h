// GPT-2 written with the tinymlir frontend: plain functions per sublayer, each
// jitted, composed on the host. Formulas and dtypes are the NumPy reference's:
// float32 weights, float64 scores/GELU/residual stream (after the first
// attention) and logits.
#pragma once

#include "models/gpt2/Checkpoint.h"

#include <tinymlir/jit.h>
#include <tinymlir/kernels.h>

#include <functional>
#include <vector>

namespace tinymlir::gpt2 {

/// Intermediate values of one forward pass (for verification).
struct Trace {
  Array embed;              ///< (T, C) float32
  std::vector<Array> attn;  ///< per block: residual after the attention sublayer
  std::vector<Array> ffn;   ///< per block: residual after the feed-forward sublayer
  Array logits;             ///< (T, V) float64
};

/// wte[ids] + wpe[:T]: (T, C).
Tensor embed(const Tensor &wte, const Tensor &wpe, const Tensor &ids);
/// layer_norm(x) @ wte.T: (T, V), the tied output projection.
Tensor head(const Tensor &x, const LayerNormParams &ln, const Tensor &wte);

class Model {
public:
  explicit Model(Weights weights, JitOptions options = {});

  const Config &config() const { return weights_.config; }
  /// Logits of every position, (T, V) float64. Ids are checked against the
  /// vocabulary and the context length first.
  Array forward(const std::vector<int32_t> &ids, Trace *trace = nullptr) const;
  /// Greedy decoding, recomputing the whole prefix for each token as the
  /// reference does. `onToken(step, id, lastLogits)` is called as each token
  /// is chosen.
  std::vector<int32_t>
  generate(std::vector<int32_t> ids, int64_t tokens,
           const std::function<void(int64_t, int32_t, const Array &)> &onToken = {}) const;

  /// Seconds spent compiling and the number of specializations compiled.
  double compileSeconds() const;
  size_t compilations() const;
  void checkIds(const std::vector<int32_t> &ids) const;

private:
  using SublayerAttend = Tensor (*)(const Tensor &, const LayerNormParams &, const LinearParams &,
                                    const LinearParams &, int64_t);
  using SublayerFeedforward = Tensor (*)(const Tensor &, const LayerNormParams &,
                                         const LinearParams &, const LinearParams &);
  using Embed = Tensor (*)(const Tensor &, const Tensor &, const Tensor &);
  using Head = Tensor (*)(const Tensor &, const LayerNormParams &, const Tensor &);

  Weights weights_;
  Jit<Embed> embed_;
  Jit<SublayerAttend> attend_;
  Jit<SublayerFeedforward> feedforward_;
  Jit<Head> head_;
};

/// Index of the largest value of the last row of (T, V) logits (first on ties).
int32_t argmaxLast(const Array &logits);

} // namespace tinymlir::gpt2
