// GPT-2 written with the tinymlir frontend: plain functions per sublayer, each
// jitted, composed on the host. Formulas and dtypes are the NumPy reference's:
// float32 weights, float64 scores/GELU/residual stream (after the first
// attention) and logits.
#pragma once

#include "models/gpt2/Checkpoint.h"
#include "models/gpt2/Sampling.h"

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

// Incremental decoding: the same formulas, split around a key/value cache.
/// wte[ids] + wpe[positions]: (T, C).
Tensor embedAt(const Tensor &wte, const Tensor &wpe, const Tensor &ids, const Tensor &positions);
/// layer_norm(x) @ w_qkv + b_qkv: (T, 3C), whose keys and values go to the cache.
Tensor qkvProjection(const Tensor &x, const LayerNormParams &ln, const LinearParams &qkv);
/// The rest of a block for T rows at positions start..start+T-1: attention of
/// their queries (from qkv) against the first `columns` cached keys (H, D, P)
/// and values (H, P, D) -- future and unused positions masked -- then the
/// residual, and the feed-forward sublayer with its residual. (T, C).
/// Decoding attends to the whole capacity (columns = P, one compiled function
/// for every position); the prompt, at positions 0..T-1, needs only T columns.
Tensor blockFromCache(const Tensor &x, const Tensor &qkv, const Tensor &keys, const Tensor &values,
                      const Tensor &start, const LinearParams &out, const LayerNormParams &ln2,
                      const LinearParams &up, const LinearParams &down, int64_t heads,
                      int64_t columns, DType constants);

/// The model's arithmetic. reference: the NumPy reference's dtypes (float32
/// weights; its float64 scalar constants make scores, GELU, the residual
/// stream after the first attention, and the logits float64): its tokens.
/// float32: float32 throughout (llm.c, ggml, PyTorch): faster, tokens may
/// differ where the reference's top two logits are close.
enum class Precision { Reference, Float32 };
/// "reference" or "float32"; parsePrecision throws on anything else.
const char *precisionName(Precision precision);
Precision parsePrecision(const std::string &name);

/// Token choices of Model::generate: onToken(step, id, logits).
using TokenCallback = std::function<void(int64_t, int32_t, const Array &)>;

struct GenerateOptions {
  /// true: with a key/value cache. The prompt is computed once (padded to a
  /// bucket of lengths), then each new token only at its own position. The
  /// cache holds a bucket of capacity (a power of two, at least 128, at most
  /// the context), so every step reuses the same compiled code.
  /// false: the whole prefix again for each token, as the reference does.
  bool incremental = true;
  /// Each step's intermediates, before onToken (verification). Implies
  /// full-prefix decoding.
  std::function<void(int64_t step, const Trace &)> onTrace;
  /// How each token is chosen; the default is greedy (argmaxLast).
  SamplingOptions sampling;
  /// Stop when `endOfText` is chosen (if the vocabulary has it): that token
  /// ends generation and is not part of the output (not returned, no
  /// onToken). Off by default: the library makes `tokens` tokens. The CLI
  /// and the Python module turn it on unless told to ignore end-of-text.
  bool stopAtEndOfText = false;
  int32_t endOfText = kEndOfText;
};

class Model {
public:
  /// With the GPU target, the weights are kept resident on the device
  /// (gpuKeepResident) for the model's lifetime.
  explicit Model(Weights weights, JitOptions options = {},
                 Precision precision = Precision::Reference);
  ~Model();
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;

  const Config &config() const { return weights_.config; }
  Precision precision() const { return precision_; }
  /// Logits of every position, (T, V) float64. Ids are checked against the
  /// vocabulary and the context length first. The sequence is computed padded
  /// to a length bucket (16, 32, 64...: a few specializations for any length).
  Array forward(const std::vector<int32_t> &ids, Trace *trace = nullptr) const;
  /// Decoding of `tokens` new tokens after `ids` (checked as by checkIds),
  /// greedy unless options.sampling says otherwise; fewer if it stops at
  /// end-of-text. `onToken(step, id, logits)` is called as each token is
  /// chosen, with the logits whose last row chose it.
  std::vector<int32_t> generate(std::vector<int32_t> ids, int64_t tokens,
                                const GenerateOptions &options = {},
                                const TokenCallback &onToken = {}) const;

  /// Compiles, in parallel, what incremental decoding of `tokens` tokens
  /// after a prompt of `promptLength` needs (generate does it itself).
  void compileAhead(int64_t promptLength, int64_t tokens) const;

  /// Seconds spent compiling and the number of specializations compiled.
  double compileSeconds() const;
  size_t compilations() const;
  /// Specializations whose code was loaded from the disk cache.
  size_t diskHits() const;
  /// Throws unless `ids` is a non-empty prompt of ids in the vocabulary and,
  /// with `newTokens` more, fits in the context.
  void checkIds(const std::vector<int32_t> &ids, int64_t newTokens = 0) const;

private:
  struct Decoder; ///< incremental decoding: the key/value cache and its steps
  using SublayerAttend = Tensor (*)(const Tensor &, const LayerNormParams &, const LinearParams &,
                                    const LinearParams &, int64_t, DType);
  using SublayerFeedforward = Tensor (*)(const Tensor &, const LayerNormParams &,
                                         const LinearParams &, const LinearParams &, DType);
  using Embed = Tensor (*)(const Tensor &, const Tensor &, const Tensor &);
  using Head = Tensor (*)(const Tensor &, const LayerNormParams &, const Tensor &);
  using EmbedAt = Tensor (*)(const Tensor &, const Tensor &, const Tensor &, const Tensor &);
  using QkvProjection = Tensor (*)(const Tensor &, const LayerNormParams &, const LinearParams &);
  using BlockFromCache = Tensor (*)(const Tensor &, const Tensor &, const Tensor &, const Tensor &,
                                    const Tensor &, const LinearParams &, const LayerNormParams &,
                                    const LinearParams &, const LinearParams &, int64_t, int64_t,
                                    DType);

  /// Every weight array (for device residency).
  std::vector<const Array *> allWeights() const;

  Weights weights_;
  Precision precision_;
  DType constants_; ///< the dtype of the reference's float64 scalar constants
  bool resident_ = false;
  Jit<Embed> embed_;
  Jit<SublayerAttend> attend_;
  Jit<SublayerFeedforward> feedforward_;
  Jit<Head> head_;
  Jit<EmbedAt> embedAt_;
  Jit<QkvProjection> qkv_;
  Jit<BlockFromCache> block_;
};

/// Index of the largest value of the last row of (T, V) logits (first on ties).
int32_t argmaxLast(const Array &logits);

} // namespace tinymlir::gpt2
