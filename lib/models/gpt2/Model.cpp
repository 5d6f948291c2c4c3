#include "models/gpt2/Model.h"
#include "models/gpt2/Settings.h"

#include <tinymlir/gpu.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include <sys/resource.h>
#include <unistd.h>

namespace tinymlir::gpt2 {

Tensor attend(const Tensor &x, const LayerNormParams &ln, const LinearParams &qkv,
              const LinearParams &out, int64_t heads, DType constants) {
  return x + attention(layerNorm(x, ln.gain, ln.bias), qkv, out, heads, constants); // (T, C)
}

Tensor feedforward(const Tensor &x, const LayerNormParams &ln, const LinearParams &up,
                   const LinearParams &down, DType constants) {
  Tensor h = layerNorm(x, ln.gain, ln.bias);                                     // (T, C)
  return x + linear(geluWith(linear(h, up.w, up.b), constants), down.w, down.b); // (T, C)
}

Tensor embed(const Tensor &wte, const Tensor &wpe, const Tensor &ids) {
  const int64_t T = ids.dim(0);
  return gather(wte, ids) + slice(wpe, {0}, {T}); // (T, C)
}

Tensor head(const Tensor &x, const LayerNormParams &ln, const Tensor &wte) {
  return matmul(layerNorm(x, ln.gain, ln.bias), wte.T()); // (T, C) @ (C, V) -> (T, V)
}

Tensor embedAt(const Tensor &wte, const Tensor &wpe, const Tensor &ids, const Tensor &positions) {
  return gather(wte, ids) + gather(wpe, positions); // (T, C)
}

Tensor qkvProjection(const Tensor &x, const LayerNormParams &ln, const LinearParams &qkv) {
  return linear(layerNorm(x, ln.gain, ln.bias), qkv.w, qkv.b); // (T, 3C)
}

Tensor blockFromCache(const Tensor &x, const Tensor &qkv, const Tensor &keys, const Tensor &values,
                      const Tensor &start, const LinearParams &out, const LayerNormParams &ln2,
                      const LinearParams &up, const LinearParams &down, int64_t heads,
                      int64_t columns, DType constants) {
  const int64_t T = x.dim(0), C = x.dim(1), D = C / heads, P = columns;
  Tensor q = splitHeads(slice(qkv, {0, 0}, {T, C}), heads); // (H, T, D)
  Tensor k = slice(keys, {0, 0, 0}, {heads, D, P});         // (H, D, P)
  Tensor v = slice(values, {0, 0, 0}, {heads, P, D});       // (H, P, D)
  Tensor mask = causalMask(T, P, start, qkv.dtype());       // (T, P)
  Tensor attended = x + linear(attentionHeads(q, k, v, mask, constants), out.w, out.b);
  return feedforward(attended, ln2, up, down, constants);
}

namespace {
/// Row r's key (or value, `part` 1 or 2) of qkv (R, 3C), as (R, H, D).
Tensor rowsOf(const Tensor &qkv, int part, int64_t heads) {
  const int64_t R = qkv.dim(0), C = qkv.dim(1) / 3;
  return reshape(slice(qkv, {0, part * C}, {R, (part + 1) * C}), {R, heads, C / heads});
}
} // namespace

Tensor storeKeys(const Tensor &keys, const Tensor &qkv, const Tensor &slots,
                 const Tensor &positions) {
  return indexPut(keys, {slots, std::nullopt, std::nullopt, positions},
                  rowsOf(qkv, 1, keys.dim(1))); // keys[s, :, :, p] = k: (R, H, D)
}

Tensor storeValues(const Tensor &values, const Tensor &qkv, const Tensor &slots,
                   const Tensor &positions) {
  return indexPut(values, {slots, std::nullopt, positions},
                  rowsOf(qkv, 2, values.dim(1))); // values[s, :, p] = v: (R, H, D)
}

Tensor decodeBlock(const Tensor &x, const Tensor &qkv, const Tensor &keys, const Tensor &values,
                   const Tensor &rowPositions, const LinearParams &out, const LayerNormParams &ln2,
                   const LinearParams &up, const LinearParams &down, int64_t heads, int64_t columns,
                   DType constants) {
  const int64_t B = x.dim(0), C = x.dim(1), H = heads, D = C / H, S = keys.dim(0), P = keys.dim(3),
                W = columns;
  // Sequences and heads as one batch dimension: (B * H) one-row attentions
  // over the first W positions (sliced after the reshape, which is then of
  // whole arrays and copies nothing).
  Tensor q = reshape(slice(qkv, {0, 0}, {B, C}), {B * H, 1, D});              // (BH, 1, D)
  Tensor k = slice(reshape(keys, {S * H, D, P}), {0, 0, 0}, {B * H, D, W});   // (BH, D, W)
  Tensor v = slice(reshape(values, {S * H, P, D}), {0, 0, 0}, {B * H, W, D}); // (BH, W, D)
  Tensor mask = reshape(causalMask(B * H, W, rowPositions, qkv.dtype()), {B * H, 1, W});
  Tensor heads1 = attentionHeads(q, k, v, mask, constants);            // (1, BH * D)
  Tensor attended = x + linear(reshape(heads1, {B, C}), out.w, out.b); // (B, C)
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

namespace {
/// Every kernel's options: the model's loops and products share the OpenMP
/// team. On NumPy's OpenBLAS (loaded by Python), its pool's idle workers spin
/// against the loops (GPT-2 124M from Python, 256-token prefill: 0.85 ->
/// 1.05 s; decoding 50 -> 46.5 tokens/s).
JitOptions teamOptions(JitOptions options) {
  options.numpyBlas = false;
  return options;
}
/// The decoding steps' options: their products have a row per sequence.
JitOptions stepOptions(JitOptions options) {
  options.streamRows = Decoder::kMaxSlots;
  return teamOptions(options);
}
/// The cache writes' options: they update the host caches in place.
JitOptions storeOptions(JitOptions options) {
  options.target = Target::CPU;
  return teamOptions(options);
}
} // namespace

Model::Model(Weights weights, JitOptions options, Precision precision)
    : weights_(std::move(weights)), precision_(precision),
      constants_(precision == Precision::Float32 ? DType::f32 : DType::f64),
      embed_(&gpt2::embed, teamOptions(options)), attend_(&gpt2::attend, teamOptions(options)),
      feedforward_(&gpt2::feedforward, teamOptions(options)),
      head_(&gpt2::head, teamOptions(options)), embedAt_(&gpt2::embedAt, teamOptions(options)),
      qkv_(&gpt2::qkvProjection, teamOptions(options)),
      block_(&gpt2::blockFromCache, teamOptions(options)),
      stepQkv_(&gpt2::qkvProjection, stepOptions(options)),
      stepBlock_(&gpt2::decodeBlock, stepOptions(options)),
      stepHead_(&gpt2::head, stepOptions(options)),
      storeKeys_(&gpt2::storeKeys, storeOptions(options)),
      storeValues_(&gpt2::storeValues, storeOptions(options)) {
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

int64_t promptBucket(int64_t length, int64_t context) {
  int64_t rows = 8;
  while (rows < length)
    rows = (rows & (rows - 1)) == 0 ? rows + rows / 2 : rows / 3 * 4; // 8, 12, 16, 24, 32, ...
  return std::min(context, rows);
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

Array Model::forward(const std::vector<int32_t> &ids, Trace *trace, bool lastRow) const {
  checkIds(ids);
  const Weights &w = weights_;
  const int64_t heads = w.config.n_head, T = static_cast<int64_t>(ids.size());
  // The prompt padded to a length bucket (so that recomputing a growing
  // prefix compiles a few specializations, not one per length): causal
  // attention keeps the padding rows out of the first T, which are returned.
  std::vector<int32_t> padded(ids);
  padded.resize(bucket(T, 16, w.config.n_positions), 0);
  Array tokens = Array::fromVector<int32_t>(padded, {static_cast<int64_t>(padded.size())});
  Array x = embed_(w.wte, w.wpe, tokens); // (T, C) float32
  if (trace)
    *trace = Trace{firstRows(x, T), {}, {}, {}};
  for (const LayerWeights &l : w.layers) {
    x = attend_(x, LayerNormParams{l.ln_1_w, l.ln_1_b}, LinearParams{l.attn_w, l.attn_b},
                LinearParams{l.proj_w, l.proj_b}, heads, constants_); // (T, C)
    if (trace)
      trace->attn.push_back(firstRows(x, T));
    x = feedforward_(x, LayerNormParams{l.ln_2_w, l.ln_2_b}, LinearParams{l.fc_w, l.fc_b},
                     LinearParams{l.fc_proj_w, l.fc_proj_b}, constants_); // (T, C)
    if (trace)
      trace->ffn.push_back(firstRows(x, T));
  }
  // The head on the prompt's rows only (the (T, V) product is the costliest of
  // a step), or on the last: one specialization for every length.
  Array rows = lastRow ? x.sliced(0, T - 1, T).contiguous() : firstRows(x, T);
  Array logits = head_(rows, LayerNormParams{w.ln_f_w, w.ln_f_b}, w.wte); // (T or 1, V)
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

/// A layer's caches: keys (S, H, D, P) and values (S, H, P, D), a slot per
/// sequence, in the dtype of the layer's qkv.
struct Decoder::Layer {
  Array keys, values;
};

Decoder::Decoder(const Model &model, int64_t slots, int64_t capacity)
    : m_(model), w_(model.weights_), capacity_(0), profile_(settings::profile()) {
  if (slots < 1 || slots > kMaxSlots)
    throw Error("[gpt2] a decoder has 1 to " + std::to_string(kMaxSlots) + " slots, not " +
                std::to_string(slots));
  slot_.resize(slots);
  reserve(std::max<int64_t>(capacity, 1));
}

Decoder::~Decoder() {
  if (background_.joinable())
    background_.join();
  for (std::thread &t : later_)
    t.join();
}

void Decoder::compileLater(const std::array<int64_t, 3> &what, Job job) {
  if (compiling_.insert(what).second)
    later_.emplace_back([job = std::move(job)] {
      // At the lowest priority: on the cores the steps leave idle.
      setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19);
      try {
        job();
      } catch (...) {
        // Left for the call itself: a failed compilation is not cached.
      }
    });
}

void Decoder::wait() {
  if (firstSteps_.valid())
    firstSteps_.get();
}

int64_t Decoder::slotOf(Sequence sequence) const {
  for (size_t s = 0; s < slot_.size(); ++s)
    if (slot_[s].sequence == sequence)
      return static_cast<int64_t>(s);
  throw Error("[gpt2] no sequence " + std::to_string(sequence) + " in this decoder");
}

int64_t Decoder::length(Sequence sequence) const { return slot_[slotOf(sequence)].length; }

namespace {
/// Copies positions [0, n) of `slots` slots' keys (slots, H, D, P) and values
/// (slots, H, P, D), `e` bytes an element, from caches of `fromP` positions to
/// caches of `toP` (growing caches, and the prefix cache's entries of one slot).
void copyPositions(char *keysTo, char *valuesTo, int64_t toP, const void *keysFrom,
                   const void *valuesFrom, int64_t fromP, int64_t slots, int64_t H, int64_t D,
                   int64_t n, size_t e) {
  const auto *keys = static_cast<const char *>(keysFrom);
  const auto *values = static_cast<const char *>(valuesFrom);
  for (int64_t row = 0; row < slots * H * D; ++row) // keys: (rows, P), positions contiguous
    std::memcpy(keysTo + row * toP * e, keys + row * fromP * e, n * e);
  for (int64_t row = 0; row < slots * H; ++row) // values: (P, D) per slot and head
    std::memcpy(valuesTo + row * toP * D * e, values + row * fromP * D * e, n * D * e);
}
} // namespace

Decoder::Layer &Decoder::layer(size_t l, DType dtype) {
  if (layers_.size() <= l) {
    const int64_t S = slots(), H = w_.config.n_head, D = w_.config.headDim(), P = capacity_;
    layers_.push_back({Array::zeros({S, H, D, P}, dtype), Array::zeros({S, H, P, D}, dtype)});
  }
  return layers_[l];
}

void Decoder::reserve(int64_t capacity) {
  const int64_t context = w_.config.n_positions;
  if (capacity > context)
    throw Error("[gpt2] " + std::to_string(capacity) + " positions exceed the context of " +
                std::to_string(context) + " positions");
  const int64_t P = bucket(capacity, 128, context), old = capacity_;
  if (P <= old)
    return;
  const int64_t S = slots(), H = w_.config.n_head, D = w_.config.headDim();
  for (Layer &l : layers_) {
    const size_t e = dtypeSize(l.keys.dtype());
    Layer grown{Array::zeros({S, H, D, P}, l.keys.dtype()),
                Array::zeros({S, H, P, D}, l.keys.dtype())};
    copyPositions(static_cast<char *>(grown.keys.data()), static_cast<char *>(grown.values.data()),
                  P, l.keys.data(), l.values.data(), old, S, H, D, old, e);
    l = std::move(grown);
  }
  capacity_ = P;
}

namespace {
/// The slots and positions rows' keys and values are stored at (Decoder::layers).
std::pair<Array, Array> cacheRows(int64_t rows, const std::vector<int64_t> &positions,
                                  int64_t promptSlot, int64_t start) {
  std::vector<int32_t> slots(rows), at(rows);
  for (int64_t r = 0; r < rows; ++r) {
    slots[r] = static_cast<int32_t>(promptSlot >= 0 ? promptSlot : r);
    at[r] = static_cast<int32_t>(promptSlot >= 0 ? start + r : std::max<int64_t>(positions[r], 0));
  }
  return {Array::fromVector<int32_t>(slots, {rows}), Array::fromVector<int32_t>(at, {rows})};
}
} // namespace

template <class Call> auto Decoder::timed(const char *part, Call &&call) {
  if (!profile_)
    return call();
  auto t0 = std::chrono::steady_clock::now();
  auto result = call();
  seconds_[part] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

Array Decoder::layers(Array x, int64_t rows, const std::vector<int64_t> &positions,
                      int64_t promptSlot, int64_t promptStart) {
  // The prompt (from position 0, in one slot) attends to its own rows; a
  // step's rows, each to its own slot's cache.
  const bool prompt = promptSlot >= 0;
  const int64_t H = w_.config.n_head, D = w_.config.headDim(), P = capacity_;
  std::vector<int32_t> perHead;
  for (int64_t r = 0; r < (prompt ? 0 : rows); ++r)
    perHead.insert(perHead.end(), H, static_cast<int32_t>(std::max<int64_t>(positions[r], 0)));
  Array rowPositions = Array::fromVector<int32_t>(perHead, {static_cast<int64_t>(perHead.size())});
  Array start = Array::scalar(static_cast<double>(promptStart), DType::i32);
  const int64_t columns = !prompt           ? columnsFor(*std::ranges::max_element(positions) + 1)
                          : promptStart > 0 ? P
                                            : rows;
  // Where each row's key and value go: the prompt's to its slot, padding rows
  // too (at positions its own rows never attend to, written again before any
  // step attends to them); a step's row r to slot r, a free slot's padding
  // row at position 0 (written again by that slot's next prompt).
  auto [slots, cachePositions] = cacheRows(rows, positions, promptSlot, promptStart);
  for (size_t l = 0; l < w_.layers.size(); ++l) {
    const LayerWeights &lw = w_.layers[l];
    const LayerNormParams ln1{lw.ln_1_w, lw.ln_1_b}, ln2{lw.ln_2_w, lw.ln_2_b};
    const LinearParams attn{lw.attn_w, lw.attn_b}, proj{lw.proj_w, lw.proj_b}, fc{lw.fc_w, lw.fc_b},
        fcProj{lw.fc_proj_w, lw.fc_proj_b};
    Array qkv = timed("qkv", [&] { return (prompt ? m_.qkv_ : m_.stepQkv_)(x, ln1, attn); });
    Layer &cache = layer(l, qkv.dtype());
    timed("cache", [&] {
      m_.storeKeys_.into(cache.keys, cache.keys, qkv, slots, cachePositions);
      m_.storeValues_.into(cache.values, cache.values, qkv, slots, cachePositions);
      return 0;
    });
    x = timed("block", [&] {
      if (prompt) {
        Array keys = cache.keys.sliced(0, promptSlot, promptSlot + 1).reshaped({H, D, P});
        Array values = cache.values.sliced(0, promptSlot, promptSlot + 1).reshaped({H, P, D});
        return m_.block_(x, qkv, keys, values, start, proj, ln2, fc, fcProj, H, columns,
                         m_.constants_);
      }
      // The step's width or, while it compiles in the background, a wider
      // one compiled already (the same numbers: columns past every row's
      // position are masked). Without a plan (compileAhead) and nothing
      // compiled, the whole capacity, which serves every step until the
      // capacity grows: a server compiles one width before answering, as
      // many as its sequences need while it does.
      auto ready = [&](int64_t w) {
        return m_.stepBlock_.compiled(x, qkv, cache.keys, cache.values, rowPositions, proj, ln2, fc,
                                      fcProj, H, w, m_.constants_);
      };
      int64_t width = columns;
      if (!ready(width)) {
        int64_t wider = width;
        while (wider < capacity_ && !ready(wider))
          wider = columnsFor(wider + 1);
        if (wider != width && (!planned_ || ready(wider))) {
          compileLater({rows, width, static_cast<int64_t>(x.dtype())},
                       [=, &m = m_, keys = cache.keys, values = cache.values] {
                         m.stepBlock_.compile(x, qkv, keys, values, rowPositions, proj, ln2, fc,
                                              fcProj, H, width, m.constants_);
                       });
          width = wider;
        }
      }
      return m_.stepBlock_(x, qkv, cache.keys, cache.values, rowPositions, proj, ln2, fc, fcProj, H,
                           width, m_.constants_);
    });
  }
  return x;
}

std::pair<Decoder::Sequence, Array> Decoder::add(const std::vector<int32_t> &ids,
                                                 PrefixCache *cache) {
  m_.checkIds(ids);
  auto free = std::ranges::find_if(slot_, [](const Slot &s) { return s.sequence < 0; });
  if (free == slot_.end())
    throw Error("[gpt2] every one of the decoder's " + std::to_string(slots()) + " slots is taken");
  const int64_t slot = free - slot_.begin(), T = static_cast<int64_t>(ids.size());
  reserve(T);
  // A cached prefix (all but the last position at most: its logits are
  // needed), shortened where the rest's bucket of rows would pass the
  // capacity.
  std::shared_ptr<const PrefixCache::Entry> entry;
  int64_t start = 0;
  if (cache) {
    std::tie(entry, start) = cache->longest(ids, T - 1);
    while (start > 0 && start + promptBucket(T - start, capacity_) > capacity_)
      --start;
    if (start > 0)
      restore(slot, *entry, start);
    cache->count(start);
  }
  // The prompt (or its rest) padded to a bucket: rows past it are ignored
  // (causal attention keeps them out of the prompt's rows); their keys and
  // values are cached at positions written again before any step attends to
  // them.
  const int64_t rest = T - start, padded = promptBucket(rest, capacity_);
  std::vector<int32_t> paddedIds(padded, 0), positionIds(padded);
  std::copy(ids.begin() + start, ids.end(), paddedIds.begin());
  for (int64_t t = 0; t < padded; ++t)
    positionIds[t] = static_cast<int32_t>(start + t);
  Array x = m_.embedAt_(w_.wte, w_.wpe, Array::fromVector<int32_t>(paddedIds, {padded}),
                        Array::fromVector<int32_t>(positionIds, {padded}));
  x = layers(x, padded, {}, slot, start).sliced(0, rest - 1, rest).contiguous();
  Array logits =
      timed("head", [&] { return m_.stepHead_(x, LayerNormParams{w_.ln_f_w, w_.ln_f_b}, w_.wte); });
  *free = Slot{next_, T};
  active_.clear();
  for (const Slot &s : slot_)
    if (s.sequence >= 0)
      active_.push_back(s.sequence);
  return {next_++, logits};
}

void Decoder::restore(int64_t slot, const PrefixCache::Entry &entry, int64_t length) {
  const int64_t H = w_.config.n_head, D = w_.config.headDim(), P = capacity_,
                L = static_cast<int64_t>(entry.ids.size());
  for (size_t l = 0; l < entry.keys.size(); ++l) {
    Layer &cache = layer(l, entry.keys[l].dtype());
    const size_t e = dtypeSize(cache.keys.dtype());
    copyPositions(static_cast<char *>(cache.keys.data()) + slot * H * D * P * e,
                  static_cast<char *>(cache.values.data()) + slot * H * P * D * e, P,
                  entry.keys[l].data(), entry.values[l].data(), L, 1, H, D, length, e);
  }
}

void Decoder::save(Sequence sequence, const std::vector<int32_t> &ids, PrefixCache &cache) const {
  const int64_t slot = slotOf(sequence),
                L = std::min<int64_t>(slot_[slot].length, static_cast<int64_t>(ids.size()));
  if (L <= 0 || L > cache.limit() || layers_.empty())
    return;
  const int64_t H = w_.config.n_head, D = w_.config.headDim(), P = capacity_;
  auto entry = std::make_shared<PrefixCache::Entry>();
  entry->ids.assign(ids.begin(), ids.begin() + L);
  for (const Layer &layer : layers_) {
    const DType dtype = layer.keys.dtype();
    const size_t e = dtypeSize(dtype);
    Array keys = Array::empty({H, D, L}, dtype), values = Array::empty({H, L, D}, dtype);
    copyPositions(static_cast<char *>(keys.data()), static_cast<char *>(values.data()), L,
                  static_cast<const char *>(layer.keys.data()) + slot * H * D * P * e,
                  static_cast<const char *>(layer.values.data()) + slot * H * P * D * e, P, 1, H, D,
                  L, e);
    entry->keys.push_back(std::move(keys));
    entry->values.push_back(std::move(values));
  }
  cache.insert(std::move(entry));
}

PrefixCache::PrefixCache(int64_t positions) : limit_(std::max<int64_t>(positions, 0)) {}

PrefixCache::Stats PrefixCache::stats() const {
  std::lock_guard lock(mutex_);
  Stats out = stats_;
  out.entries = static_cast<int64_t>(entries_.size());
  return out;
}

void PrefixCache::clear() {
  std::lock_guard lock(mutex_);
  entries_.clear();
  stats_.positions = 0;
}

void PrefixCache::count(int64_t saved) {
  std::lock_guard lock(mutex_);
  ++(saved > 0 ? stats_.hits : stats_.misses);
  stats_.tokensSaved += saved;
}

std::pair<std::shared_ptr<const PrefixCache::Entry>, int64_t>
PrefixCache::longest(const std::vector<int32_t> &ids, int64_t most) {
  std::lock_guard lock(mutex_);
  auto best = entries_.end();
  int64_t length = 0;
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    const std::vector<int32_t> &held = (*it)->ids;
    const int64_t n = std::min<int64_t>(
        {most, static_cast<int64_t>(held.size()), static_cast<int64_t>(ids.size())});
    int64_t shared = 0;
    while (shared < n && held[shared] == ids[shared])
      ++shared;
    if (shared > length) {
      length = shared;
      best = it;
    }
  }
  if (best == entries_.end())
    return {nullptr, 0};
  entries_.splice(entries_.begin(), entries_, best); // most recently used
  return {entries_.front(), length};
}

void PrefixCache::insert(std::shared_ptr<const Entry> entry) {
  std::lock_guard lock(mutex_);
  const std::vector<int32_t> &ids = entry->ids;
  // An entry that this one extends (or repeats) goes: this one serves its
  // prefixes too. One that extends this one makes it redundant.
  for (auto it = entries_.begin(); it != entries_.end();) {
    const std::vector<int32_t> &held = (*it)->ids;
    if (held.size() <= ids.size() && std::equal(held.begin(), held.end(), ids.begin())) {
      stats_.positions -= static_cast<int64_t>(held.size());
      it = entries_.erase(it);
    } else if (held.size() > ids.size() && std::equal(ids.begin(), ids.end(), held.begin())) {
      entries_.splice(entries_.begin(), entries_, it);
      return;
    } else {
      ++it;
    }
  }
  stats_.positions += static_cast<int64_t>(ids.size());
  entries_.push_front(std::move(entry));
  while (stats_.positions > limit_) {
    stats_.positions -= static_cast<int64_t>(entries_.back()->ids.size());
    ++stats_.evicted;
    entries_.pop_back();
  }
}

void Decoder::advance(const std::function<int32_t(Sequence)> &last,
                      const std::function<bool(Sequence, const Array &)> &keep) {
  std::vector<int32_t> tokens;
  for (Sequence q : active_)
    tokens.push_back(last(q));
  Array logits = step(tokens);
  const std::vector<Sequence> rows = active_;
  for (size_t i = 0; i < rows.size(); ++i)
    if (!keep(rows[i], logits.sliced(0, i, i + 1).contiguous()))
      remove(rows[i]);
}

void Decoder::remove(Sequence sequence) {
  slot_[slotOf(sequence)] = Slot{};
  std::erase(active_, sequence);
}

Array Decoder::step(const std::vector<int32_t> &tokens) {
  wait();
  if (tokens.size() != active_.size())
    throw Error("[gpt2] a step takes a token for each of the " + std::to_string(active_.size()) +
                " active sequences, not " + std::to_string(tokens.size()));
  if (active_.empty())
    throw Error("[gpt2] a step needs an active sequence: add one first");
  if (++steps_ == 2 && profile_)
    seconds_.clear(); // from here on: decoding steps that compile nothing
  int64_t highest = 0, longest = 0;
  for (size_t s = 0; s < slot_.size(); ++s)
    if (slot_[s].sequence >= 0) {
      highest = static_cast<int64_t>(s);
      longest = std::max(longest, slot_[s].length);
    }
  reserve(longest + 1); // throws at the context's end
  // Rows up to the highest slot in use, rounded up: few specializations.
  const int64_t rows = std::min(nextPowerOfTwo(highest + 1), slots());
  std::vector<int32_t> ids(rows, 0), positionIds(rows, 0);
  std::vector<int64_t> positions(rows, -1); // -1: a free slot's padding row
  for (size_t i = 0; i < active_.size(); ++i) {
    const int64_t s = slotOf(active_[i]);
    const int32_t id = tokens[i];
    if (id < 0 || id >= w_.config.vocab_size)
      throw Error("[gpt2] token id " + std::to_string(id) + " is outside the vocabulary of " +
                  std::to_string(w_.config.vocab_size));
    ids[s] = id;
    positionIds[s] = static_cast<int32_t>(slot_[s].length);
    positions[s] = slot_[s].length;
  }
  Array e = m_.embedAt_(w_.wte, w_.wpe, Array::fromVector<int32_t>(ids, {rows}),
                        Array::fromVector<int32_t>(positionIds, {rows}));
  // Padding rows attend to position 0 of a free slot (finite, ignored), where
  // their keys and values are stored until that slot's next prompt.
  Array x = layers(e, rows, positions, -1);
  Array logits = timed("head", [&] {
    return m_.stepHead_(x, LayerNormParams{w_.ln_f_w, w_.ln_f_b}, w_.wte); // (rows, V)
  });
  for (Slot &s : slot_)
    if (s.sequence >= 0)
      ++s.length;
  // Active slots are 0..n-1 when nobody left: the logits as they are.
  const int64_t n = static_cast<int64_t>(active_.size());
  if (n == rows && highest == n - 1)
    return logits;
  Array out = Array::empty({n, logits.dim(1)}, logits.dtype());
  const size_t row = static_cast<size_t>(logits.dim(1)) * dtypeSize(logits.dtype());
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(static_cast<char *>(out.data()) + i * row,
                static_cast<const char *>(logits.data()) + slotOf(active_[i]) * row, row);
  return out;
}

int64_t Decoder::columnsFor(int64_t positions) const { return bucket(positions, 64, capacity_); }

/// The compilations a prompt padded to `rows` rows, or a step of `rows` rows,
/// needs, with their argument types found by tracing (layers whose input type
/// repeats share one). A step of one row uses the prompt's head.
std::vector<Decoder::Job> Decoder::jobs(int64_t rows, bool step,
                                        const std::vector<int64_t> &columns,
                                        std::vector<Job> *wider) const {
  const int64_t S = slots(), H = w_.config.n_head, D = w_.config.headDim(), P = capacity_;
  const LayerWeights &lw = w_.layers[0];
  const LayerNormParams ln1{lw.ln_1_w, lw.ln_1_b}, ln2{lw.ln_2_w, lw.ln_2_b};
  const LinearParams attn{lw.attn_w, lw.attn_b}, proj{lw.proj_w, lw.proj_b}, fc{lw.fc_w, lw.fc_b},
      fcProj{lw.fc_proj_w, lw.fc_proj_b};
  const Model &m = m_;
  const Weights &w = w_;
  const auto &project = step ? m.stepQkv_ : m.qkv_;
  Array ids = Array::zeros({rows}, DType::i32), start = Array::scalar(0, DType::i32),
        perHead = Array::zeros({rows * H}, DType::i32);
  std::vector<Job> jobs{[=, &m, &w] { m.embedAt_.compile(w.wte, w.wpe, ids, ids); }};
  auto [shape, dtype] = m.embedAt_.resultType(w.wte, w.wpe, ids, ids);
  std::vector<DType> seen;
  for (size_t l = 0; l < w.layers.size() && std::ranges::find(seen, dtype) == seen.end(); ++l) {
    seen.push_back(dtype);
    Array x = Array::empty(shape, dtype);
    auto [qkvShape, qkvType] = project.resultType(x, ln1, attn);
    Array qkv = Array::empty(qkvShape, qkvType);
    // Caches of every slot: allocated, never touched (no memory used).
    Array keys = Array::empty({S, H, D, P}, qkvType), values = Array::empty({S, H, P, D}, qkvType);
    jobs.push_back([=, &project] { project.compile(x, ln1, attn); });
    jobs.push_back([=, &m] { m.storeKeys_.compileInto(keys, keys, qkv, ids, ids); });
    jobs.push_back([=, &m] { m.storeValues_.compileInto(values, values, qkv, ids, ids); });
    if (step) {
      for (size_t c = 0; c < columns.size(); ++c)
        (c > 0 && wider ? *wider : jobs).push_back([=, &m, n = columns[c]] {
          m.stepBlock_.compile(x, qkv, keys, values, perHead, proj, ln2, fc, fcProj, H, n,
                               m.constants_);
        });
      std::tie(shape, dtype) = m.stepBlock_.resultType(x, qkv, keys, values, perHead, proj, ln2, fc,
                                                       fcProj, H, columns.at(0), m.constants_);
    } else { // one slot's caches; from position 0 (rows wide), or after a cached prefix
      Array key = keys.sliced(0, 0, 1).reshaped({H, D, P}),
            value = values.sliced(0, 0, 1).reshaped({H, P, D});
      for (int64_t n : columns.empty() ? std::vector<int64_t>{rows} : columns)
        jobs.push_back([=, &m] {
          m.block_.compile(x, qkv, key, value, start, proj, ln2, fc, fcProj, H, n, m.constants_);
        });
      std::tie(shape, dtype) = m.block_.resultType(x, qkv, key, value, start, proj, ln2, fc, fcProj,
                                                   H, rows, m.constants_);
    }
  }
  if (!step || rows > 1) {
    Array last = Array::empty({step ? rows : 1, shape[1]}, dtype);
    jobs.push_back(
        [=, &m, &w] { m.stepHead_.compile(last, LayerNormParams{w.ln_f_w, w.ln_f_b}, w.wte); });
  }
  return jobs;
}

void Decoder::runOnAllCores(const std::vector<Job> &jobs, std::stop_token stop) {
  std::atomic<size_t> next = 0;
  auto worker = [&] {
    for (size_t i; !stop.stop_requested() && (i = next++) < jobs.size();) {
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

void Decoder::compileAhead(int64_t promptLength, int64_t rows, int64_t positions) {
  if (background_.joinable())
    background_.join();
  if (promptLength > 0) {
    reserve(promptLength);
    runOnAllCores(jobs(promptBucket(promptLength, capacity_), false, {}, nullptr));
  }
  if (rows > 0) {
    planned_ = true;
    // The first step's attention width, then the wider ones up to `positions`
    // while the first steps run.
    reserve(positions);
    rows = std::min(nextPowerOfTwo(rows), slots());
    std::vector<int64_t> widths{columnsFor(std::max<int64_t>(promptLength, 0) + 1)};
    while (widths.back() < columnsFor(positions))
      widths.push_back(columnsFor(widths.back() + 1));
    std::vector<Job> later;
    std::vector<Job> steps = jobs(rows, true, widths, &later);
    std::promise<void> firstDone;
    firstSteps_ = firstDone.get_future();
    background_ = std::thread([firstDone = std::move(firstDone), steps = std::move(steps),
                               later = std::move(later)]() mutable {
      runOnAllCores(steps);
      firstDone.set_value();
      runOnAllCores(later);
    });
  }
}

void Decoder::compileAll(std::stop_token stop) const {
  std::vector<int64_t> widths{columnsFor(1)};
  while (widths.back() < capacity_)
    widths.push_back(columnsFor(widths.back() + 1));
  std::vector<Job> all;
  auto add = [&](std::vector<Job> more) { std::ranges::move(more, std::back_inserter(all)); };
  for (int64_t rows = 1;; rows = std::min(rows * 2, slots())) {
    add(jobs(rows, true, widths, nullptr));
    if (rows == slots())
      break;
  }
  for (int64_t rows = promptBucket(1, capacity_);; rows = promptBucket(rows + 1, capacity_)) {
    // From position 0, and the rest of a prompt after a cached prefix.
    add(jobs(rows, false,
             rows < capacity_ ? std::vector<int64_t>{rows, capacity_} : std::vector<int64_t>{rows},
             nullptr));
    if (rows == capacity_)
      break;
  }
  runOnAllCores(all, stop);
}

void Decoder::printProfile(int64_t steps) const {
  if (profile_)
    for (const auto &[part, total] : seconds_)
      std::fprintf(stderr, "tinymlir-gpt2: %-6s %8.3f ms per decoded token\n", part.c_str(),
                   total * 1e3 / std::max<int64_t>(1, steps - 2));
}

void Model::compileAhead(int64_t promptLength, int64_t tokens) const {
  if (tokens <= 0)
    throw Error("[gpt2] compileAhead: give at least one new token, not " + std::to_string(tokens));
  checkIds(std::vector<int32_t>(std::max<int64_t>(promptLength, 0), 0), tokens); // the lengths
  Decoder decoder(*this, 1, promptLength + tokens);
  // The destructor joins the steps' compilations.
  decoder.compileAhead(promptLength, tokens > 1 ? 1 : 0, promptLength + tokens - 1);
}

std::vector<std::vector<int32_t>> Model::generateBatch(
    const std::vector<std::vector<int32_t>> &prompts, int64_t tokens,
    const GenerateOptions &options,
    const std::function<void(size_t, int64_t, int32_t, const Array &)> &onToken) const {
  if (prompts.empty() || static_cast<int64_t>(prompts.size()) > Decoder::kMaxSlots)
    throw Error("[gpt2] a batch has 1 to " + std::to_string(Decoder::kMaxSlots) + " prompts, not " +
                std::to_string(prompts.size()));
  size_t longest = 0;
  for (const std::vector<int32_t> &ids : prompts) {
    checkIds(ids, tokens);
    longest = std::max(longest, ids.size());
  }
  const int64_t n = static_cast<int64_t>(prompts.size());
  std::vector<Sampler> samplers; // each validates the options before anything is compiled
  for (int64_t i = 0; i < n; ++i) {
    SamplingOptions s = options.sampling;
    s.seed += static_cast<uint64_t>(i);
    samplers.emplace_back(s);
  }
  const SamplingOptions &s = options.sampling;
  const bool plainGreedy = s.greedy() && s.repeatPenalty == 1;
  const bool stopAtEnd =
      options.stopAtEndOfText && options.endOfText >= 0 && options.endOfText < config().vocab_size;
  std::vector<std::vector<int32_t>> out(n), ids(prompts);
  if (tokens <= 0)
    return out;
  Decoder decoder(*this, n, static_cast<int64_t>(longest) + tokens);
  decoder.compileAhead(static_cast<int64_t>(longest), tokens > 1 ? n : 0,
                       static_cast<int64_t>(longest) + tokens - 1);
  std::map<Decoder::Sequence, size_t> which; // sequence -> prompt
  // Chooses sequence i's next token from its logits row; false when it ends.
  auto choose = [&](size_t i, const Array &row) {
    int32_t next = plainGreedy ? argmaxLast(row) : samplers[i].next(row, ids[i]);
    if (stopAtEnd && next == options.endOfText)
      return false;
    if (onToken)
      onToken(i, static_cast<int64_t>(out[i].size()), next, row);
    ids[i].push_back(next);
    out[i].push_back(next);
    return static_cast<int64_t>(out[i].size()) < tokens;
  };
  PrefixCache *cache = options.prefixCache;
  for (size_t i = 0; i < prompts.size(); ++i) {
    auto [sequence, logits] = decoder.add(prompts[i], cache);
    if (choose(i, logits)) {
      which[sequence] = i;
    } else {
      if (cache)
        decoder.save(sequence, ids[i], *cache);
      decoder.remove(sequence);
    }
  }
  int64_t steps = 1;
  for (; !decoder.active().empty(); ++steps)
    decoder.advance([&](Decoder::Sequence q) { return ids[which[q]].back(); },
                    [&](Decoder::Sequence q, const Array &row) {
                      if (choose(which[q], row))
                        return true;
                      if (cache) // it ends: its keys and values for later prompts
                        decoder.save(q, ids[which[q]], *cache);
                      return false;
                    });
  decoder.printProfile(steps);
  return out;
}

std::vector<int32_t> Model::generate(std::vector<int32_t> ids, int64_t tokens,
                                     const GenerateOptions &options,
                                     const TokenCallback &onToken) const {
  checkIds(ids, tokens);
  if (options.incremental && !options.onTrace) // a batch of one
    return generateBatch({ids}, tokens, options,
                         [&](size_t, int64_t step, int32_t id, const Array &logits) {
                           if (onToken)
                             onToken(step, id, logits);
                         })[0];
  Sampler sampler(options.sampling); // validates the options
  const SamplingOptions &s = options.sampling;
  const bool plainGreedy = s.greedy() && s.repeatPenalty == 1;
  const bool stopAtEnd =
      options.stopAtEndOfText && options.endOfText >= 0 && options.endOfText < config().vocab_size;
  std::vector<int32_t> out;
  for (int64_t step = 0; step < tokens; ++step) {
    // The whole prefix again, as the reference does.
    Trace trace;
    Array logits = options.onTrace ? forward(ids, &trace) : forward(ids, nullptr, true);
    if (options.onTrace)
      options.onTrace(step, trace);
    int32_t next = plainGreedy ? argmaxLast(logits) : sampler.next(logits, ids);
    if (stopAtEnd && next == options.endOfText)
      break;
    if (onToken)
      onToken(step, next, logits);
    ids.push_back(next);
    out.push_back(next);
  }
  return out;
}

double Model::compileSeconds() const {
  return total([](const auto &jit) { return jit.stats().compileSeconds; });
}

size_t Model::diskHits() const {
  return total([](const auto &jit) { return jit.stats().diskHits; });
}

size_t Model::compilations() const {
  return total([](const auto &jit) { return jit.stats().compilations; });
}

} // namespace tinymlir::gpt2
