// The serving engine: continuous batching of GPT-2 requests, with no HTTP
// (tools/gpt2/Server.cpp is its HTTP front end; test/gpt2/engine_test.cpp
// calls it directly).
//
// One engine thread owns a Decoder. Requests wait in a bounded queue, join the
// running batch as slots free up (their prompt computed alone, into their
// slot, one newcomer a step), advance one token per step together with every
// other sequence, and leave when they finish, stop at end-of-text, or are
// cancelled. Each request gets the tokens of the same prompt and settings
// generated alone. A prefix cache reuses the keys and values of recent
// sequences for prompts that start as they did. At start, a thread at the
// lowest priority compiles (or loads from the disk cache) every step and
// prompt the decoder's first capacity can call. drain() refuses new requests
// while the admitted ones finish.
#pragma once

#include "models/gpt2/Model.h"

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tinymlir::gpt2 {

/// What a client asks for: a prompt and how to continue it.
struct Request {
  std::vector<int32_t> prompt;
  int64_t maxTokens = 16; ///< tokens to generate at most (1 or more)
  SamplingOptions sampling;
  bool stopAtEnd = true; ///< end at end-of-text (false: generate past it)
};

/// A request's progress, shared by its client and the engine.
class Job {
public:
  explicit Job(Request request) : request(std::move(request)) {}
  const Request request;

  struct State {
    std::vector<int32_t> tokens;
    std::string finish; ///< "" while running; "length", "stop", "cancelled" or "error"
    std::string error;  ///< the message, for "error"
  };
  State state() const;
  /// Waits until more than `seen` tokens are chosen or the job is done, at
  /// most `timeout`; false if it timed out. `out` is the state then.
  bool wait(size_t seen, std::chrono::milliseconds timeout, State &out) const;
  /// The client no longer wants it: the engine finishes it as "cancelled"
  /// (waiting, or at its next step).
  void cancel() { cancelled_ = true; }
  bool cancelled() const { return cancelled_; }

private:
  friend class Engine;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  State state_;
  std::atomic<bool> cancelled_ = false;
  std::chrono::steady_clock::time_point admitted_ = std::chrono::steady_clock::now();
  bool started_ = false; ///< its first token was chosen (the engine's)
};

struct EngineOptions {
  int64_t slots = 8;  ///< sequences decoded together (1 to Decoder::kMaxSlots)
  int64_t queue = 64; ///< requests waiting for a slot; more are refused
  /// Positions of recent sequences' keys and values kept for prompts that
  /// start the same way (0: none). GPT-2 124M: about 144 KiB a position in
  /// reference precision, 72 KiB in float32.
  int64_t prefixCache = 2048;
  /// Compile every step and prompt of the first capacity in the background
  /// at start (lowest priority), so that no request waits for a compilation.
  bool warmUp = true;
};

class Engine {
public:
  /// Time-to-first-token histogram buckets, in seconds.
  static constexpr std::array<double, 12> kFirstTokenBuckets{0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                             0.5,   1,    2.5,   5,    10,  30};

  /// Throws tinymlir::Error for options out of range.
  Engine(const Model &model, EngineOptions options);
  ~Engine(); ///< stop(), then join()
  Engine(const Engine &) = delete;
  Engine &operator=(const Engine &) = delete;

  /// Starts the engine thread (and the warm-up, if asked). Once.
  void start();
  /// Stops it: waiting and running jobs finish with "error" (shutting down).
  /// Returns at once; join() waits for its threads.
  void stop();
  void join();

  enum class Refusal { None, QueueFull, Draining, WarmingUp };
  struct Admission {
    std::shared_ptr<Job> job; ///< null when refused
    Refusal refusal = Refusal::None;
  };
  /// Queues `request` (checked as Model::checkIds: tinymlir::Error if it is
  /// bad), or refuses it: a full queue, draining, or (if `whileWarming` is
  /// false) the warm-up still compiling.
  Admission submit(Request request, bool whileWarming = true);

  /// From now on, submit() refuses; the admitted jobs go on.
  void drain() { draining_ = true; }
  bool draining() const { return draining_; }
  bool warmingUp() const { return warming_; }
  const EngineOptions &options() const { return options_; }

  struct Stats {
    int64_t queued = 0, active = 0, tokens = 0;
    double tokensPerSecond = 0;              ///< over the last 10 s
    std::map<std::string, int64_t> finished; ///< jobs by finish reason
    int64_t refusedFull = 0, refusedDraining = 0, refusedWarming = 0;
    std::array<int64_t, kFirstTokenBuckets.size()> firstTokenCounts{}; ///< cumulative
    int64_t firstTokens = 0;
    double firstTokenSeconds = 0;
    PrefixCache::Stats prefix;
  };
  Stats stats() const;

private:
  struct Running;
  void run();
  void finish(Job &job, const std::string &reason, const std::string &error = "");
  bool choose(Running &r, const Array &row);
  void countTokens(int64_t n);
  int64_t firstCapacity() const;

  const Model &model_;
  EngineOptions options_;
  std::unique_ptr<PrefixCache> prefix_; ///< null: none; outlives the idle decoder resets

  mutable std::mutex mutex_; ///< the queue and the counters
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> pending_;
  bool stopping_ = false, started_ = false;
  int64_t active_ = 0;
  mutable std::deque<std::pair<std::chrono::steady_clock::time_point, int64_t>> recent_;
  Stats counts_; ///< the counters of stats()
  std::atomic<bool> warming_ = false;
  std::atomic<bool> draining_ = false;
  std::thread engine_;
  std::jthread warmUp_; ///< last: stopped and joined first
};

} // namespace tinymlir::gpt2
