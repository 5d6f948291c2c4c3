// GPT-2 written with the tinymlir frontend: plain functions per sublayer, each
// jitted, composed on the host. Formulas and dtypes are the NumPy reference's:
// float32 weights, float64 scores/GELU/residual stream (after the first
// attention) and logits.
#pragma once

#include "models/gpt2/Checkpoint.h"
#include "models/gpt2/Sampling.h"
#include "models/nn/Kernels.h"

#include <tinymlir/jit.h>

#include <array>
#include <functional>
#include <future>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

namespace tinymlir::gpt2 {

/// Intermediate values of one forward pass (for verification).
struct Trace {
  Array embed;             ///< (T, C) float32
  std::vector<Array> attn; ///< per block: residual after the attention sublayer
  std::vector<Array> ffn;  ///< per block: residual after the feed-forward sublayer
  Array logits;            ///< (T, V) float64
};

/// A block's attention sublayer with its residual: x + attention(layerNorm(x)),
/// (T, C) -> (T, C).
Tensor attend(const Tensor &x, const LayerNormParams &ln, const LinearParams &qkv,
              const LinearParams &out, int64_t heads, DType constants = DType::f64);
/// Its feed-forward sublayer with its residual: x + down(gelu(up(layerNorm(x)))),
/// (T, C) -> (T, 4C) -> (T, C).
Tensor feedforward(const Tensor &x, const LayerNormParams &ln, const LinearParams &up,
                   const LinearParams &down, DType constants = DType::f64);
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

/// The cache write of R rows: their keys (from qkv (R, 3C)) into keys
/// (S, H, D, P) at keys[slots[r], :, :, positions[r]], the transposed layout
/// the scores' product reads. Called into the cache: updates it in place.
Tensor storeKeys(const Tensor &keys, const Tensor &qkv, const Tensor &slots,
                 const Tensor &positions);
/// Their values into values (S, H, P, D) at values[slots[r], :, positions[r]].
Tensor storeValues(const Tensor &values, const Tensor &qkv, const Tensor &slots,
                   const Tensor &positions);

/// A decoding step of B sequences together, row b at position positions[b]
/// of the sequence whose cache is slot b of keys (S, H, D, P) and values
/// (S, H, P, D) (S >= B slots; rows past the active ones are padding): each
/// query attends to its own sequence's cached keys up to its position (of the
/// first `columns` <= P, which hold every position attended to), then
/// the residual and the feed-forward sublayer. `rowPositions` (B * H,) is each
/// (sequence, head) row's position. (B, C). Every weight read serves all B
/// rows; each row's numbers are those of the same step decoded alone (B = 1).
Tensor decodeBlock(const Tensor &x, const Tensor &qkv, const Tensor &keys, const Tensor &values,
                   const Tensor &rowPositions, const LinearParams &out, const LayerNormParams &ln2,
                   const LinearParams &up, const LinearParams &down, int64_t heads, int64_t columns,
                   DType constants);

/// The model's arithmetic. reference: the NumPy reference's dtypes (float32
/// weights; its float64 scalar constants make scores, GELU, the residual
/// stream after the first attention, and the logits float64): its tokens.
/// float32: float32 throughout (llm.c, ggml, PyTorch): faster, tokens may
/// differ where the reference's top two logits are close.
enum class Precision { Reference, Float32 };
/// "reference" or "float32"; parsePrecision throws on anything else.
const char *precisionName(Precision precision);
Precision parsePrecision(const std::string &name);

/// The rows a prompt of `length` tokens is computed in, at most `context`:
/// the smallest of 8, 12, 16, 24, 32, 48, ... (powers of two and 1.5 times
/// them) that holds it. Padding rows cost as much as the prompt's own
/// (prefill is compute-bound), and these steps waste at most a third of the
/// work where powers of two wasted up to half, for twice the buckets.
int64_t promptBucket(int64_t length, int64_t context);

class PrefixCache;

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
  /// Incremental decoding: prompts start from the keys and values of the
  /// longest prefix they share with a sequence this cache holds, and each
  /// sequence's are added to it when it ends. Not owned; null: none.
  PrefixCache *prefixCache = nullptr;
};

class Decoder;

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
  /// lastRow: the last position's logits alone, (1, V): forward's last row
  /// within rounding (a one-row head product may take another path).
  Array forward(const std::vector<int32_t> &ids, Trace *trace = nullptr,
                bool lastRow = false) const;
  /// Decoding of `tokens` new tokens after `ids` (checked as by checkIds),
  /// greedy unless options.sampling says otherwise; fewer if it stops at
  /// end-of-text. `onToken(step, id, logits)` is called as each token is
  /// chosen, with the logits whose last row chose it.
  std::vector<int32_t> generate(std::vector<int32_t> ids, int64_t tokens,
                                const GenerateOptions &options = {},
                                const TokenCallback &onToken = {}) const;
  /// Several prompts decoded together (a Decoder with a slot each): each
  /// step's products have one row per sequence, so every weight read serves
  /// them all. Sequence i's tokens (and logits) are those generate(prompts[i])
  /// gives alone; each sequence samples with its own generator, seeded with
  /// options.sampling.seed + i. `onToken(sequence, step, id, logits)`.
  std::vector<std::vector<int32_t>> generateBatch(
      const std::vector<std::vector<int32_t>> &prompts, int64_t tokens,
      const GenerateOptions &options = {},
      const std::function<void(size_t, int64_t, int32_t, const Array &)> &onToken = {}) const;

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
  friend class Decoder;
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
  using DecodeBlock = Tensor (*)(const Tensor &, const Tensor &, const Tensor &, const Tensor &,
                                 const Tensor &, const LinearParams &, const LayerNormParams &,
                                 const LinearParams &, const LinearParams &, int64_t, int64_t,
                                 DType);
  using Store = Tensor (*)(const Tensor &, const Tensor &, const Tensor &, const Tensor &);
  /// Sum of a statistic over every compiled function.
  template <class Get> auto total(Get get) const {
    return get(embed_) + get(attend_) + get(feedforward_) + get(head_) + get(embedAt_) + get(qkv_) +
           get(block_) + get(stepQkv_) + get(stepBlock_) + get(stepHead_) + get(storeKeys_) +
           get(storeValues_);
  }

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
  // Decoding steps, B rows of B sequences: products of up to kMaxSlots rows
  // stream their weights, each row computed as a one-row product is.
  Jit<QkvProjection> stepQkv_;
  Jit<DecodeBlock> stepBlock_;
  Jit<Head> stepHead_;
  // The cache writes, into the caches (host arrays, whatever the target).
  Jit<Store> storeKeys_, storeValues_;
};

/// The keys and values of recent sequences (prompt and output), for prompts
/// that start as one of them did (chat-style requests resend the whole
/// conversation): Decoder::add copies the longest shared prefix's into its
/// slot and computes only the rest of the prompt. Bounded by the positions it
/// holds, least recently used first out; a sequence that extends an entry
/// replaces it. Thread-safe. A position costs 2 * layers * n_embd values of
/// the layers' dtype (GPT-2 124M, reference precision: about 144 KiB).
class PrefixCache {
public:
  /// Holds up to `positions` positions in all (0: holds nothing).
  explicit PrefixCache(int64_t positions);

  struct Stats {
    int64_t hits = 0;        ///< prompts that started from an entry
    int64_t misses = 0;      ///< prompts that found no shared prefix
    int64_t tokensSaved = 0; ///< prompt positions not computed, in all
    int64_t positions = 0;   ///< held now
    int64_t entries = 0;
    int64_t evicted = 0; ///< entries dropped for room
  };
  Stats stats() const;
  int64_t limit() const { return limit_; }
  /// Drops every entry (the statistics stay).
  void clear();

private:
  friend class Decoder;
  struct Entry {
    std::vector<int32_t> ids;  ///< the positions held
    std::vector<Array> keys;   ///< per layer: (H, D, L)
    std::vector<Array> values; ///< per layer: (H, L, D)
  };
  /// The entry sharing the longest prefix with `ids` (at most `most`
  /// positions), moved to the front, and that length; 0 and none if none.
  std::pair<std::shared_ptr<const Entry>, int64_t> longest(const std::vector<int32_t> &ids,
                                                           int64_t most);
  void insert(std::shared_ptr<const Entry> entry);
  /// A prompt looked up: `saved` positions came from an entry (0: a miss).
  void count(int64_t saved);

  const int64_t limit_;
  mutable std::mutex mutex_;
  std::list<std::shared_ptr<const Entry>> entries_; ///< most recently used first
  Stats stats_;                                     ///< but entries: entries_.size()
};

/// Incremental decoding of up to `slots` sequences together, continuous
/// batching: a key/value cache slot per sequence; sequences join (their
/// prompt computed alone, into a free slot) and leave between steps, and
/// each step computes one row per slot in use (up to the highest, rounded up
/// to a power of two) with the compiled step functions. Each sequence's
/// logits are those it gets decoded alone. Not thread-safe: one caller.
class Decoder {
public:
  static constexpr int64_t kMaxSlots = 64;
  using Sequence = int64_t;

  /// Room for `slots` (1 to kMaxSlots) sequences of up to `capacity`
  /// positions (grown by reserve), at most the model's context.
  Decoder(const Model &model, int64_t slots, int64_t capacity);
  ~Decoder();
  Decoder(const Decoder &) = delete;
  Decoder &operator=(const Decoder &) = delete;

  int64_t slots() const { return static_cast<int64_t>(slot_.size()); }
  int64_t capacity() const { return capacity_; }
  /// Sequences decoding now, in slot order: the rows of step()'s logits.
  const std::vector<Sequence> &active() const { return active_; }
  bool full() const { return static_cast<int64_t>(active_.size()) == slots(); }
  /// Positions computed so far for a sequence (prompt and tokens).
  int64_t length(Sequence sequence) const;

  /// Room for sequences of `capacity` positions (rounded up to a bucket: 128,
  /// 256, ... the context); the caches are copied into larger ones. (Starting
  /// at 64 made short batches 5% faster but gave the server other
  /// specializations than those its clients' runs leave in the disk cache:
  /// p99 per token 290 -> 850 ms in bench/server_bench.py.)
  void reserve(int64_t capacity);
  /// Computes the prompt (checked as Model::checkIds, and against the
  /// capacity) in a free slot; returns the new sequence and the logits (1, V)
  /// of the prompt's last position. Throws if every slot is taken. With a
  /// prefix cache, the keys and values of the longest prefix it shares with
  /// an entry (all but the last position at most) are copied into the slot,
  /// and the rest is computed as rows at their positions that attend to the
  /// whole capacity: the same numbers as the prompt computed at once, within
  /// rounding (products of other shapes may sum in other orders).
  std::pair<Sequence, Array> add(const std::vector<int32_t> &ids, PrefixCache *cache = nullptr);
  /// Adds a sequence's keys and values to `cache`: `ids` are its tokens (the
  /// prompt and those chosen), of which the first length(sequence) were
  /// computed. Call before remove.
  void save(Sequence sequence, const std::vector<int32_t> &ids, PrefixCache &cache) const;
  /// One position more for every active sequence: tokens[i] is appended to
  /// active()[i]. Logits (active().size(), V), row i for active()[i].
  Array step(const std::vector<int32_t> &tokens);
  /// One step of every active sequence, the loop of every decoder's user:
  /// `last(q)` is sequence q's newest token, `keep(q, logits)` takes q's row
  /// (1, V) of the step's logits and says whether q goes on; if not, q is
  /// removed.
  void advance(const std::function<int32_t(Sequence)> &last,
               const std::function<bool(Sequence, const Array &)> &keep);
  /// Frees a sequence's slot.
  void remove(Sequence sequence);

  /// Compiles, in parallel, what a prompt of `promptLength` tokens needs and,
  /// in the background, the steps with `rows` rows from the prompt's length
  /// until a step's rows reach `positions` positions (the attention widths
  /// after the first one compiling while the first steps run).
  void compileAhead(int64_t promptLength, int64_t rows, int64_t positions);
  /// Compiles everything this decoder's steps (1, 2, 4, ... slots rows, at
  /// each attention width of its capacity) and prompts (each bucket up to the
  /// capacity, from position 0 or after a cached prefix) call, on every core at the calling
  /// thread's priority, until `stop` is requested: a server's warm-up, after which no request waits
  /// for a compilation while the capacity holds. Allocates no caches.
  void compileAll(std::stop_token stop = {}) const;
  /// Waits for the background compilation of the first steps.
  void wait();
  /// TINYMLIR_PROFILE=1: time per part of a decoding step on stderr.
  void printProfile(int64_t steps) const;

private:
  struct Layer; ///< a layer's key/value caches
  struct Slot {
    Sequence sequence = -1; ///< -1: free
    int64_t length = 0;
  };
  using Job = std::function<void()>;

  /// What a prompt of `rows` rows, or a step of `rows` rows, attending to
  /// each of `columns` (widths; a prompt's first is its rows), compiles; with
  /// `wider`, the steps' blocks past the first width go there instead.
  std::vector<Job> jobs(int64_t rows, bool step, const std::vector<int64_t> &columns,
                        std::vector<Job> *wider) const;
  /// The cache columns a step attends to when its rows reach `positions`
  /// positions: a power of two from 64 to the capacity (a step reads no more
  /// than twice the keys and values it needs, in few specializations).
  int64_t columnsFor(int64_t positions) const;
  /// Runs `job` on a thread of its own, once per `what` (rows, width, dtype).
  void compileLater(const std::array<int64_t, 3> &what, Job job);
  static void runOnAllCores(const std::vector<Job> &jobs, std::stop_token stop = {});
  template <class Call> auto timed(const char *part, Call &&call);
  int64_t slotOf(Sequence sequence) const;
  /// Layer l's caches, made (zeros of `dtype`) on first use.
  Layer &layer(size_t l, DType dtype);
  /// Copies an entry's first `length` positions into a slot's caches.
  void restore(int64_t slot, const PrefixCache::Entry &entry, int64_t length);
  /// The layers over x at rows of the slots [0, rows) (a step, row r at
  /// positions[r], -1 for a free slot), or the prompt's rows in one slot at
  /// positions start, start + 1, ... (positions unused): from 0, attending
  /// to their own rows; after a cached prefix, to the whole capacity.
  Array layers(Array x, int64_t rows, const std::vector<int64_t> &positions, int64_t promptSlot,
               int64_t start = 0);

  const Model &m_;
  const Weights &w_;
  int64_t capacity_;
  std::vector<Slot> slot_;
  std::vector<Sequence> active_;
  std::vector<Layer> layers_;
  Sequence next_ = 0;
  int64_t steps_ = 0;
  std::thread background_;
  std::future<void> firstSteps_;   ///< background_'s first steps compiled
  bool planned_ = false;           ///< compileAhead planned the steps' widths
  std::vector<std::thread> later_; ///< compileLater's
  std::set<std::array<int64_t, 3>> compiling_;
  const bool profile_;
  std::map<std::string, double> seconds_;
};

/// Index of the largest value of the last row of (T, V) logits (first on ties).
int32_t argmaxLast(const Array &logits);

} // namespace tinymlir::gpt2
