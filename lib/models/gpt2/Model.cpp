#include "models/gpt2/Model.h"

#include <tinymlir/gpu.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <thread>

namespace tinymlir::gpt2 {

Tensor embed(const Tensor &wte, const Tensor &wpe, const Tensor &ids) {
  const int64_t T = ids.dim(0);
  return gather(wte, ids) + slice(wpe, {0}, {T});         // (T, C)
}

Tensor head(const Tensor &x, const LayerNormParams &ln, const Tensor &wte) {
  return matmul(layerNorm(x, ln.gain, ln.bias), wte.T()); // (T, C) @ (C, V) -> (T, V)
}

Tensor embedAt(const Tensor &wte, const Tensor &wpe, const Tensor &ids, const Tensor &positions) {
  return gather(wte, ids) + gather(wpe, positions);       // (T, C)
}

Tensor qkvProjection(const Tensor &x, const LayerNormParams &ln, const LinearParams &qkv) {
  return linear(layerNorm(x, ln.gain, ln.bias), qkv.w, qkv.b); // (T, 3C)
}

Tensor blockFromCache(const Tensor &x, const Tensor &qkv, const Tensor &keys, const Tensor &values,
                      const Tensor &start, const LinearParams &out, const LayerNormParams &ln2,
                      const LinearParams &up, const LinearParams &down, int64_t heads,
                      int64_t columns, DType constants) {
  const int64_t T = x.dim(0), C = x.dim(1), D = C / heads, P = columns;
  Tensor q = splitHeads(slice(qkv, {0, 0}, {T, C}), heads);         // (H, T, D)
  Tensor k = slice(keys, {0, 0, 0}, {heads, D, P});                 // (H, D, P)
  Tensor v = slice(values, {0, 0, 0}, {heads, P, D});               // (H, P, D)
  Tensor mask = causalMask(T, P, start, qkv.dtype());               // (T, P)
  Tensor attended = x + linear(attentionHeads(q, k, v, mask, constants), out.w, out.b);
  return feedforward(attended, ln2, up, down, constants);
}

const char *precisionName(Precision precision) {
  return precision == Precision::Float32 ? "float32" : "reference";
}

Precision parsePrecision(const std::string &name) {
  if (name == "reference")
    return Precision::Reference;
  if (name == "float32")
    return Precision::Float32;
  throw Error("[gpt2] precision must be 'reference' or 'float32', not '" + name + "'");
}

Model::Model(Weights weights, JitOptions options, Precision precision)
    : weights_(std::move(weights)), precision_(precision),
      constants_(precision == Precision::Float32 ? DType::f32 : DType::f64), embed_(&gpt2::embed, options), attend_(&tinymlir::attend, options),
      feedforward_(&tinymlir::feedforward, options), head_(&gpt2::head, options),
      embedAt_(&gpt2::embedAt, options), qkv_(&gpt2::qkvProjection, options),
      block_(&gpt2::blockFromCache, options) {
  resident_ = options.target == Target::GPU;
  if (resident_)
    for (const Array *a : allWeights())
      gpuKeepResident(*a);
}

Model::~Model() {
  if (resident_)
    for (const Array *a : allWeights())
      gpuReleaseResident(*a);
}

std::vector<const Array *> Model::allWeights() const {
  const Weights &w = weights_;
  std::vector<const Array *> all{&w.wte, &w.wpe, &w.ln_f_w, &w.ln_f_b};
  for (const LayerWeights &l : w.layers)
    for (const Array *a : {&l.ln_1_w, &l.ln_1_b, &l.attn_w, &l.attn_b, &l.proj_w, &l.proj_b,
                           &l.ln_2_w, &l.ln_2_b, &l.fc_w, &l.fc_b, &l.fc_proj_w, &l.fc_proj_b})
      all.push_back(a);
  return all;
}

void Model::checkIds(const std::vector<int32_t> &ids, int64_t newTokens) const {
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
  if (static_cast<int64_t>(ids.size()) + newTokens > c.n_positions)
    throw Error("[gpt2] a prompt of " + std::to_string(ids.size()) + " tokens plus " +
                std::to_string(newTokens) + " new tokens exceeds the context of " +
                std::to_string(c.n_positions) + " positions");
}

namespace {

int64_t nextPowerOfTwo(int64_t n) {
  int64_t p = 1;
  while (p < n)
    p *= 2;
  return p;
}

/// A length bucket: few specializations for any lengths.
int64_t bucket(int64_t length, int64_t smallest, int64_t context) {
  return std::min(context, std::max(smallest, nextPowerOfTwo(length)));
}

/// Rows [0, T) of a (rows, ...) array.
Array firstRows(const Array &a, int64_t T) { return a.sliced(0, 0, T).contiguous(); }

} // namespace

Array Model::forward(const std::vector<int32_t> &ids, Trace *trace) const {
  checkIds(ids);
  const Weights &w = weights_;
  const int64_t heads = w.config.n_head, T = static_cast<int64_t>(ids.size());
  // The prompt padded to a length bucket (so that recomputing a growing
  // prefix compiles a few specializations, not one per length): causal
  // attention keeps the padding rows out of the first T, which are returned.
  std::vector<int32_t> padded(ids);
  padded.resize(bucket(T, 16, w.config.n_positions), 0);
  Array tokens = Array::fromVector<int32_t>(padded, {static_cast<int64_t>(padded.size())});
  Array x = embed_(w.wte, w.wpe, tokens);                                   // (T, C) float32
  if (trace)
    *trace = Trace{firstRows(x, T), {}, {}, {}};
  for (const LayerWeights &l : w.layers) {
    x = attend_(x, LayerNormParams{l.ln_1_w, l.ln_1_b}, LinearParams{l.attn_w, l.attn_b},
                LinearParams{l.proj_w, l.proj_b}, heads, constants_);      // (T, C)
    if (trace)
      trace->attn.push_back(firstRows(x, T));
    x = feedforward_(x, LayerNormParams{l.ln_2_w, l.ln_2_b}, LinearParams{l.fc_w, l.fc_b},
                     LinearParams{l.fc_proj_w, l.fc_proj_b}, constants_);  // (T, C)
    if (trace)
      trace->ffn.push_back(firstRows(x, T));
  }
  // The head on the prompt's rows only: the (T, V) product is the costliest of
  // a step, and a specialization per length compiles in a fraction of a second.
  Array logits = head_(firstRows(x, T), LayerNormParams{w.ln_f_w, w.ln_f_b}, w.wte); // (T, V)
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

namespace {

/// Keys (H, D, P) and values (H, P, D) of one layer, in the dtype of its qkv.
struct LayerCache {
  Array keys, values;
};

/// Copies rows [0, rows) of qkv (T, 3C), at positions start..., into the cache.
template <class T>
void storeRows(const Array &qkv, int64_t rows, int64_t start, int64_t heads, LayerCache &cache) {
  const int64_t C = qkv.dim(1) / 3, D = C / heads, P = cache.values.dim(1);
  const T *src = qkv.data<T>();
  T *keys = cache.keys.data<T>(), *values = cache.values.data<T>();
  for (int64_t t = 0; t < rows; ++t) {
    const T *k = src + t * 3 * C + C, *v = src + t * 3 * C + 2 * C;
    const int64_t pos = start + t;
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t d = 0; d < D; ++d) {
        keys[(h * D + d) * P + pos] = k[h * D + d];
        values[(h * P + pos) * D + d] = v[h * D + d];
      }
  }
}

} // namespace

/// Incremental decoding of a prompt of T tokens and up to `tokens` more: the
/// key/value cache of every layer and the compiled steps around it.
struct Model::Decoder {
  Decoder(const Model &model, int64_t T, int64_t tokens)
      : m(model), w(model.weights_), T(T),
        // Capacity and prompt buckets: few specializations for any lengths.
        capacity(bucket(T + tokens, 128, w.config.n_positions)), padded(bucket(T, 16, capacity)) {}

  ~Decoder() {
    if (background.joinable())
      background.join();
  }

  /// Compiles the specializations of the prompt at once, on every core; then,
  /// in the background while the prompt runs, those of the decoding steps
  /// (if there are any). Errors are left for the calls themselves, which
  /// compile again and throw.
  void compileAhead(int64_t tokens) {
    runOnAllCores(specializations(padded, padded));
    if (tokens > 1)
      background = std::thread([steps = specializations(1, capacity)] { runOnAllCores(steps); });
  }

  /// Logits (1, V) of the prompt's last position. The prompt is padded to a
  /// bucket (rows past it are ignored: causal attention keeps them out of the
  /// prompt's rows).
  Array prefill(const std::vector<int32_t> &ids) {
    std::vector<int32_t> paddedIds(padded, 0), positions(padded);
    std::copy(ids.begin(), ids.end(), paddedIds.begin());
    for (int64_t t = 0; t < padded; ++t)
      positions[t] = static_cast<int32_t>(t);
    Array x = m.embedAt_(w.wte, w.wpe, Array::fromVector<int32_t>(paddedIds, {padded}),
                         Array::fromVector<int32_t>(positions, {padded}));
    return head(layers(x, padded, 0).sliced(0, T - 1, T).contiguous());
  }

  /// Logits (1, V) after token `id` at `position`.
  Array step(int32_t id, int64_t position) {
    if (background.joinable())
      background.join();
    if (++steps == 2 && profile)
      seconds.clear(); // from here on: decoding steps that compile nothing
    Array e = m.embedAt_(w.wte, w.wpe, Array::fromVector<int32_t>({id}, {1}),
                         Array::fromVector<int32_t>({static_cast<int32_t>(position)}, {1}));
    return head(layers(e, 1, position));
  }

  void printProfile(int64_t tokens) const {
    if (profile)
      for (const auto &[part, total] : seconds)
        std::fprintf(stderr, "tinymlir-gpt2: %-6s %8.3f ms per decoded token\n", part.c_str(),
                     total * 1e3 / std::max<int64_t>(1, tokens - 2));
  }

private:
  using Job = std::function<void()>;

  /// The compilations a pass over the layers with `rows` rows attending to
  /// `columns` cached positions needs, with their argument types found by
  /// tracing (layers whose input type repeats share a specialization).
  std::vector<Job> specializations(int64_t rows, int64_t columns) const {
    const int64_t H = w.config.n_head, D = w.config.headDim();
    const LayerWeights &lw = w.layers[0];
    const LayerNormParams ln1{lw.ln_1_w, lw.ln_1_b}, ln2{lw.ln_2_w, lw.ln_2_b};
    const LinearParams attn{lw.attn_w, lw.attn_b}, proj{lw.proj_w, lw.proj_b},
        fc{lw.fc_w, lw.fc_b}, fcProj{lw.fc_proj_w, lw.fc_proj_b};
    Array ids = Array::zeros({rows}, DType::i32), position = Array::scalar(0, DType::i32);
    std::vector<Job> jobs{[=, this] { m.embedAt_.compile(w.wte, w.wpe, ids, ids); }};
    auto [shape, dtype] = m.embedAt_.resultType(w.wte, w.wpe, ids, ids);
    std::vector<DType> seen;
    for (size_t l = 0; l < w.layers.size() && std::ranges::find(seen, dtype) == seen.end(); ++l) {
      seen.push_back(dtype);
      Array x = Array::zeros(shape, dtype);
      auto [qkvShape, qkvType] = m.qkv_.resultType(x, ln1, attn);
      Array qkv = Array::zeros(qkvShape, qkvType);
      Array keys = Array::zeros({H, D, capacity}, qkvType), values = Array::zeros({H, capacity, D}, qkvType);
      jobs.push_back([=, this] { m.qkv_.compile(x, ln1, attn); });
      jobs.push_back([=, this] {
        m.block_.compile(x, qkv, keys, values, position, proj, ln2, fc, fcProj, H, columns,
                         m.constants_);
      });
      std::tie(shape, dtype) =
          m.block_.resultType(x, qkv, keys, values, position, proj, ln2, fc, fcProj, H, columns,
                              m.constants_);
    }
    Array last = Array::zeros({1, shape[1]}, dtype);
    jobs.push_back([=, this] { m.head_.compile(last, LayerNormParams{w.ln_f_w, w.ln_f_b}, w.wte); });
    return jobs;
  }

  static void runOnAllCores(const std::vector<Job> &jobs) {
    std::atomic<size_t> next = 0;
    auto worker = [&] {
      for (size_t i; (i = next++) < jobs.size();) {
        try {
          jobs[i]();
        } catch (...) {
          // Left for the call itself: a failed compilation is not cached.
        }
      }
    };
    const size_t n = std::min<size_t>(jobs.size(), std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::thread> team;
    for (size_t t = 1; t < n; ++t)
      team.emplace_back(worker);
    worker();
    for (std::thread &t : team)
      t.join();
  }

  /// TINYMLIR_PROFILE=1: seconds per part of the decoding loop, on stderr.
  template <class Call> auto timed(const char *part, Call &&call) {
    if (!profile)
      return call();
    auto t0 = std::chrono::steady_clock::now();
    auto result = call();
    seconds[part] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return result;
  }

  Array layers(Array x, int64_t rows, int64_t start) {
    // The prompt (from position 0) attends to its own rows; a step, to the cache.
    const int64_t columns = rows > 1 ? rows : capacity;
    const int64_t H = w.config.n_head, D = w.config.headDim();
    Array position = Array::scalar(static_cast<double>(start), DType::i32);
    for (size_t l = 0; l < w.layers.size(); ++l) {
      const LayerWeights &lw = w.layers[l];
      Array qkv = timed("qkv", [&] {
        return m.qkv_(x, LayerNormParams{lw.ln_1_w, lw.ln_1_b}, LinearParams{lw.attn_w, lw.attn_b});
      });
      if (caches.size() <= l)
        caches.push_back({Array::zeros({H, D, capacity}, qkv.dtype()),
                          Array::zeros({H, capacity, D}, qkv.dtype())});
      timed("cache", [&] {
        if (qkv.dtype() == DType::f32)
          storeRows<float>(qkv, rows, start, H, caches[l]);
        else
          storeRows<double>(qkv, rows, start, H, caches[l]);
        return 0;
      });
      x = timed("block", [&] {
        return m.block_(x, qkv, caches[l].keys, caches[l].values, position,
                        LinearParams{lw.proj_w, lw.proj_b}, LayerNormParams{lw.ln_2_w, lw.ln_2_b},
                        LinearParams{lw.fc_w, lw.fc_b}, LinearParams{lw.fc_proj_w, lw.fc_proj_b},
                        H, columns, m.constants_);
      });
    }
    return x;
  }

  Array head(const Array &lastRow) {
    return timed("head", [&] {
      return m.head_(lastRow, LayerNormParams{w.ln_f_w, w.ln_f_b}, w.wte); // (1, V)
    });
  }

  const Model &m;
  const Weights &w;
  const int64_t T, capacity, padded;
  const bool profile = std::getenv("TINYMLIR_PROFILE") != nullptr;
  std::map<std::string, double> seconds;
  std::vector<LayerCache> caches;
  int64_t steps = 0;
  std::thread background;
};

void Model::compileAhead(int64_t promptLength, int64_t tokens) const {
  if (tokens <= 0)
    throw Error("[gpt2] compileAhead: give at least one new token, not " + std::to_string(tokens));
  checkIds(std::vector<int32_t>(std::max<int64_t>(promptLength, 0), 0), tokens); // the lengths
  Decoder(*this, promptLength, tokens).compileAhead(tokens); // joins the steps' compilations
}

std::vector<int32_t> Model::generate(std::vector<int32_t> ids, int64_t tokens,
                                     const GenerateOptions &options,
                                     const TokenCallback &onToken) const {
  checkIds(ids, tokens);
  Sampler sampler(options.sampling); // validates the options before anything is compiled
  const SamplingOptions &s = options.sampling;
  const bool plainGreedy = s.greedy() && s.repeatPenalty == 1;
  const bool stopAtEnd = options.stopAtEndOfText && options.endOfText >= 0 &&
                         options.endOfText < config().vocab_size;
  std::optional<Decoder> decoder;
  if (options.incremental && !options.onTrace && tokens > 0) {
    decoder.emplace(*this, static_cast<int64_t>(ids.size()), tokens);
    decoder->compileAhead(tokens);
  }
  std::vector<int32_t> out;
  for (int64_t step = 0; step < tokens; ++step) {
    Array logits;
    if (decoder) {
      logits = step == 0 ? decoder->prefill(ids)
                         : decoder->step(ids.back(), static_cast<int64_t>(ids.size()) - 1);
    } else {
      Trace trace;
      logits = forward(ids, options.onTrace ? &trace : nullptr);
      if (options.onTrace)
        options.onTrace(step, trace);
    }
    int32_t next = plainGreedy ? argmaxLast(logits) : sampler.next(logits, ids);
    if (stopAtEnd && next == options.endOfText)
      break;
    if (onToken)
      onToken(step, next, logits);
    ids.push_back(next);
    out.push_back(next);
  }
  if (decoder)
    decoder->printProfile(static_cast<int64_t>(out.size()));
  return out;
}

double Model::compileSeconds() const {
  return embed_.stats().compileSeconds + attend_.stats().compileSeconds +
         feedforward_.stats().compileSeconds + head_.stats().compileSeconds +
         embedAt_.stats().compileSeconds + qkv_.stats().compileSeconds +
         block_.stats().compileSeconds;
}

size_t Model::diskHits() const {
  return embed_.stats().diskHits + attend_.stats().diskHits + feedforward_.stats().diskHits +
         head_.stats().diskHits + embedAt_.stats().diskHits + qkv_.stats().diskHits +
         block_.stats().diskHits;
}

size_t Model::compilations() const {
  return embed_.stats().compilations + attend_.stats().compilations +
         feedforward_.stats().compilations + head_.stats().compilations +
         embedAt_.stats().compilations + qkv_.stats().compilations + block_.stats().compilations;
}

} // namespace tinymlir::gpt2
