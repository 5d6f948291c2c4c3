#include "models/gpt2/Engine.h"

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <iostream>
#include <optional>

namespace tinymlir::gpt2 {

using Clock = std::chrono::steady_clock;

Job::State Job::state() const {
  std::lock_guard lock(mutex_);
  return state_;
}

bool Job::wait(size_t seen, std::chrono::milliseconds timeout, State &out) const {
  std::unique_lock lock(mutex_);
  const bool woke = changed_.wait_for(
      lock, timeout, [&] { return !state_.finish.empty() || state_.tokens.size() > seen; });
  out = state_;
  return woke;
}

Engine::Engine(const Model &model, EngineOptions options)
    : model_(model), options_(std::move(options)) {
  if (options_.slots < 1 || options_.slots > Decoder::kMaxSlots)
    throw Error("[engine] slots must be 1 to " + std::to_string(Decoder::kMaxSlots) + ", not " +
                std::to_string(options_.slots));
  if (options_.queue < 1)
    throw Error("[engine] the queue must hold at least 1 request, not " +
                std::to_string(options_.queue));
  if (options_.prefixCache < 0)
    throw Error("[engine] the prefix cache must hold at least 0 positions, not " +
                std::to_string(options_.prefixCache));
  if (options_.prefixCache > 0)
    prefix_ = std::make_unique<PrefixCache>(options_.prefixCache);
}

Engine::~Engine() {
  stop();
  join();
}

void Engine::join() {
  if (engine_.joinable())
    engine_.join();
  if (warmUp_.joinable())
    warmUp_.join();
}

/// Positions of the decoder's first caches (grown by longer sequences).
int64_t Engine::firstCapacity() const {
  return std::min<int64_t>(128, model_.config().n_positions);
}

void Engine::start() {
  if (options_.warmUp) {
    warming_ = true;
    warmUp_ = std::jthread([this](std::stop_token stop) {
      // At the lowest priority: on the cores that serving leaves idle.
      setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19);
      try {
        Decoder(model_, options_.slots, firstCapacity()).compileAll(stop);
      } catch (const std::exception &e) {
        std::cerr << "tinymlir-gpt2: warm-up: " << e.what() << "\n"; // the call itself throws it
      }
      warming_ = false;
    });
  }
  {
    std::lock_guard lock(mutex_);
    started_ = true;
  }
  engine_ = std::thread([this] { run(); });
}

void Engine::stop() {
  std::deque<std::shared_ptr<Job>> left; // never started: answered here
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    if (!started_)
      left.swap(pending_);
  }
  wake_.notify_all();
  warmUp_.request_stop();
  for (const std::shared_ptr<Job> &job : left)
    finish(*job, "error", "[engine] shutting down");
}

Engine::Admission Engine::submit(Request request, bool whileWarming) {
  if (request.maxTokens < 1)
    throw Error("[engine] maxTokens must be at least 1, not " + std::to_string(request.maxTokens));
  request.sampling.validate();
  model_.checkIds(request.prompt, request.maxTokens);
  std::lock_guard lock(mutex_);
  if (draining_) {
    ++counts_.refusedDraining;
    return {nullptr, Refusal::Draining};
  }
  if (warming_ && !whileWarming) {
    ++counts_.refusedWarming;
    return {nullptr, Refusal::WarmingUp};
  }
  if (static_cast<int64_t>(pending_.size()) >= options_.queue) {
    ++counts_.refusedFull;
    return {nullptr, Refusal::QueueFull};
  }
  auto job = std::make_shared<Job>(std::move(request));
  pending_.push_back(job);
  wake_.notify_one();
  return {job, Refusal::None};
}

Engine::Stats Engine::stats() const {
  std::lock_guard lock(mutex_);
  const auto now = Clock::now();
  while (!recent_.empty() && now - recent_.front().first > std::chrono::seconds(10))
    recent_.pop_front();
  Stats out = counts_;
  int64_t window = 0;
  for (const auto &[t, n] : recent_)
    window += n;
  out.tokensPerSecond = static_cast<double>(window) / 10.0;
  out.queued = static_cast<int64_t>(pending_.size());
  out.active = active_;
  if (prefix_)
    out.prefix = prefix_->stats();
  return out;
}

// --- the engine thread -------------------------------------------------------

struct Engine::Running {
  std::shared_ptr<Job> job;
  Sampler sampler;
  std::vector<int32_t> history;
};

void Engine::finish(Job &job, const std::string &reason, const std::string &error) {
  {
    std::lock_guard lock(job.mutex_);
    job.state_.finish = reason;
    job.state_.error = error;
  }
  job.changed_.notify_all();
  std::lock_guard lock(mutex_);
  ++counts_.finished[reason];
}

/// Chooses a sequence's next token from its logits row; false when it ends.
bool Engine::choose(Running &r, const Array &row) {
  Job &job = *r.job;
  if (!job.started_) {
    job.started_ = true;
    const double seconds = std::chrono::duration<double>(Clock::now() - job.admitted_).count();
    std::lock_guard lock(mutex_);
    for (size_t b = 0; b < kFirstTokenBuckets.size(); ++b)
      counts_.firstTokenCounts[b] += seconds <= kFirstTokenBuckets[b];
    ++counts_.firstTokens;
    counts_.firstTokenSeconds += seconds;
  }
  const int32_t next = r.sampler.next(row, r.history);
  if (job.request.stopAtEnd && next == kEndOfText && next < model_.config().vocab_size) {
    finish(job, "stop");
    return false;
  }
  r.history.push_back(next);
  size_t count;
  {
    std::lock_guard lock(job.mutex_);
    job.state_.tokens.push_back(next);
    count = job.state_.tokens.size();
  }
  job.changed_.notify_all();
  if (static_cast<int64_t>(count) >= job.request.maxTokens) {
    finish(job, "length");
    return false;
  }
  return true;
}

void Engine::countTokens(int64_t n) {
  std::lock_guard lock(mutex_);
  counts_.tokens += n;
  recent_.emplace_back(Clock::now(), n);
}

void Engine::run() {
  std::optional<Decoder> decoder;
  std::map<Decoder::Sequence, Running> running;
  // A sequence that ends leaves its keys and values in the prefix cache.
  auto keep = [&](Decoder::Sequence q, const Running &r) {
    if (prefix_)
      decoder->save(q, r.history, *prefix_);
  };
  auto failAll = [&](const std::string &message) {
    for (auto &[q, r] : running)
      finish(*r.job, "error", message);
    running.clear();
    decoder.reset();
  };
  for (;;) {
    std::shared_ptr<Job> joining; // at most one a step
    std::vector<std::shared_ptr<Job>> cancelledWaiting;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !pending_.empty() || !running.empty(); });
      if (stopping_)
        break;
      // A newcomer's prompt is computed alone, and the running sequences
      // wait for it (a prompt costs up to a few steps' time): one joins per
      // step, so that a running sequence's next token waits for at most one
      // prompt. Requests cancelled while waiting do not take that turn.
      while (!pending_.empty() && !joining &&
             static_cast<int64_t>(running.size()) < options_.slots) {
        std::shared_ptr<Job> job = pending_.front();
        pending_.pop_front();
        if (job->cancelled())
          cancelledWaiting.push_back(std::move(job));
        else
          joining = std::move(job);
      }
    }
    for (const std::shared_ptr<Job> &job : cancelledWaiting)
      finish(*job, "cancelled");
    try {
      if (joining && joining->cancelled()) {
        finish(*joining, "cancelled");
      } else if (joining) {
        if (!decoder)
          decoder.emplace(model_, options_.slots, firstCapacity());
        auto [q, logits] = decoder->add(joining->request.prompt, prefix_.get());
        Running r{joining, Sampler(joining->request.sampling), joining->request.prompt};
        countTokens(1);
        if (choose(r, logits)) {
          running.emplace(q, std::move(r));
        } else {
          keep(q, r);
          decoder->remove(q);
        }
        joining.reset(); // running, or finished
      }
      for (auto it = running.begin(); it != running.end();) {
        if (it->second.job->cancelled()) {
          finish(*it->second.job, "cancelled");
          keep(it->first, it->second);
          decoder->remove(it->first);
          it = running.erase(it);
        } else {
          ++it;
        }
      }
      if (!running.empty()) {
        const auto rows = static_cast<int64_t>(running.size());
        decoder->advance([&](Decoder::Sequence q) { return running.at(q).history.back(); },
                         [&](Decoder::Sequence q, const Array &row) {
                           if (choose(running.at(q), row))
                             return true;
                           keep(q, running.at(q));
                           running.erase(q);
                           return false;
                         });
        countTokens(rows);
      }
    } catch (const std::exception &e) {
      std::cerr << "tinymlir-gpt2: " << e.what() << "\n";
      if (joining) // its prompt failed: neither waiting nor running, answered here
        finish(*joining, "error", e.what());
      failAll(e.what());
    }
    if (running.empty() && decoder) {
      decoder.reset(); // idle: the caches go, and the memory back to the system
      releaseMemory();
      malloc_trim(0);
    }
    std::lock_guard lock(mutex_);
    active_ = static_cast<int64_t>(running.size());
  }
  failAll("[engine] shutting down");
  std::deque<std::shared_ptr<Job>> left;
  {
    std::lock_guard lock(mutex_);
    left.swap(pending_);
  }
  for (const std::shared_ptr<Job> &job : left)
    finish(*job, "error", "[engine] shutting down");
}

} // namespace tinymlir::gpt2
