#include "models/gpt2/Model.h"

#include <string>

namespace tinymlir::gpt2 {

Tensor embed(const Tensor &wte, const Tensor &wpe, const Tensor &ids) {
  const int64_t T = ids.dim(0);
  return gather(wte, ids) + slice(wpe, {0}, {T});         // (T, C)
}

Tensor head(const Tensor &x, const LayerNormParams &ln, const Tensor &wte) {
  return matmul(layerNorm(x, ln.gain, ln.bias), wte.T()); // (T, C) @ (C, V) -> (T, V)
}

Model::Model(Weights weights, JitOptions options)
    : weights_(std::move(weights)), embed_(&gpt2::embed, options), attend_(&tinymlir::attend, options),
      feedforward_(&tinymlir::feedforward, options), head_(&gpt2::head, options) {}

void Model::checkIds(const std::vector<int32_t> &ids) const {
  const Config &c = config();
  if (ids.empty())
    throw Error("[gpt2] the prompt is empty: give at least one token");
  if (static_cast<int64_t>(ids.size()) > c.n_positions)
    throw Error("[gpt2] " + std::to_string(ids.size()) + " tokens exceed the context of " +
                std::to_string(c.n_positions) + " positions");
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] < 0 || ids[i] >= c.vocab_size)
      throw Error("[gpt2] token id " + std::to_string(ids[i]) + " at position " +
                  std::to_string(i) + " is outside the vocabulary of " +
                  std::to_string(c.vocab_size));
}

Array Model::forward(const std::vector<int32_t> &ids, Trace *trace) const {
  checkIds(ids);
  const Weights &w = weights_;
  const int64_t heads = w.config.n_head;
  Array tokens = Array::fromVector<int32_t>(ids, {static_cast<int64_t>(ids.size())});
  Array x = embed_(w.wte, w.wpe, tokens);                                   // (T, C) float32
  if (trace)
    *trace = Trace{x, {}, {}, {}};
  for (const LayerWeights &l : w.layers) {
    x = attend_(x, LayerNormParams{l.ln_1_w, l.ln_1_b}, LinearParams{l.attn_w, l.attn_b},
                LinearParams{l.proj_w, l.proj_b}, heads);                  // (T, C) float64
    if (trace)
      trace->attn.push_back(x);
    x = feedforward_(x, LayerNormParams{l.ln_2_w, l.ln_2_b}, LinearParams{l.fc_w, l.fc_b},
                     LinearParams{l.fc_proj_w, l.fc_proj_b});              // (T, C) float64
    if (trace)
      trace->ffn.push_back(x);
  }
  Array logits = head_(x, LayerNormParams{w.ln_f_w, w.ln_f_b}, w.wte);       // (T, V) float64
  if (trace)
    trace->logits = logits;
  return logits;
}

int32_t argmaxLast(const Array &logits) {
  const int64_t T = logits.dim(0), V = logits.dim(1);
  Array row = logits.sliced(0, T - 1, T).contiguous();
  std::vector<double> values = row.toDoubles();
  int64_t best = 0;
  for (int64_t v = 1; v < V; ++v)
    if (values[v] > values[best])
      best = v;
  return static_cast<int32_t>(best);
}

std::vector<int32_t>
Model::generate(std::vector<int32_t> ids, int64_t tokens,
                const std::function<void(int64_t, int32_t, const Array &)> &onToken) const {
  checkIds(ids);
  if (static_cast<int64_t>(ids.size()) + tokens > config().n_positions)
    throw Error("[gpt2] a prompt of " + std::to_string(ids.size()) + " tokens plus " +
                std::to_string(tokens) + " new tokens exceeds the context of " +
                std::to_string(config().n_positions) + " positions");
  std::vector<int32_t> out;
  for (int64_t step = 0; step < tokens; ++step) {
    Array logits = forward(ids);
    int32_t next = argmaxLast(logits);
    if (onToken)
      onToken(step, next, logits);
    ids.push_back(next);
    out.push_back(next);
  }
  return out;
}

double Model::compileSeconds() const {
  return embed_.stats().compileSeconds + attend_.stats().compileSeconds +
         feedforward_.stats().compileSeconds + head_.stats().compileSeconds;
}

size_t Model::compilations() const {
  return embed_.stats().compilations + attend_.stats().compilations +
         feedforward_.stats().compilations + head_.stats().compilations;
}

} // namespace tinymlir::gpt2
