// The serving engine, called directly (no HTTP): each request gets the tokens
// its prompt and settings give alone, however requests join, wait, leave or
// are cancelled; a full queue, draining and bad requests are refused; stop()
// answers every job.
#include "test_util.h"
#include "models/gpt2/Engine.h"
#include "models/gpt2/RandomCheckpoint.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

using namespace tinymlir;
using tinymlir::test::errorOf;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

class EngineTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("tinymlir-engine-test-" + std::to_string(::getpid()));
    gpt2::Config c;
    c.n_layer = 2;
    c.n_head = 2;
    c.n_embd = 32;
    c.n_positions = 64;
    c.vocab_size = 200;
    gpt2::writeRandomCheckpoint(dir_.string(), c, 5, /*weightScale=*/0.3);
    model_ = std::make_unique<gpt2::Model>(gpt2::loadCheckpoint(dir_.string()));
  }
  static void TearDownTestSuite() {
    model_.reset();
    fs::remove_all(dir_);
  }

  /// The tokens of `r` generated alone.
  static std::vector<int32_t> alone(const gpt2::Request &r) {
    gpt2::GenerateOptions how;
    how.sampling = r.sampling;
    return model_->generate(r.prompt, r.maxTokens, how);
  }

  /// Waits for the job's end (at most a minute).
  static gpt2::Job::State done(const gpt2::Job &job) {
    gpt2::Job::State state;
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (!job.wait(std::numeric_limits<size_t>::max(), 100ms, state) &&
           std::chrono::steady_clock::now() < deadline) {
    }
    return state;
  }

  static fs::path dir_;
  static std::unique_ptr<gpt2::Model> model_;
};
fs::path EngineTest::dir_;
std::unique_ptr<gpt2::Model> EngineTest::model_;

gpt2::Request request(std::vector<int32_t> prompt, int64_t tokens, uint64_t seed = 0) {
  gpt2::Request r;
  r.prompt = std::move(prompt);
  r.maxTokens = tokens;
  if (seed) {
    r.sampling.temperature = 1.2;
    r.sampling.topK = 20;
    r.sampling.seed = seed;
  }
  return r;
}

TEST_F(EngineTest, EachRequestGetsTheTokensItGetsAlone) {
  // Two slots for five requests: they wait, join as others leave, and run
  // together, greedy and sampled, of different lengths.
  gpt2::Engine engine(*model_, {.slots = 2, .queue = 8, .prefixCache = 256, .warmUp = false});
  const std::vector<gpt2::Request> requests{request({3, 1, 4}, 9), request({1, 5, 9, 2, 6}, 4, 11),
                                            request({7}, 12), request({3, 1, 4, 1, 5}, 6, 12),
                                            request({3, 1, 4}, 5)};
  std::vector<std::shared_ptr<gpt2::Job>> jobs;
  for (const gpt2::Request &r : requests) {
    auto admitted = engine.submit(r);
    ASSERT_TRUE(admitted.job);
    jobs.push_back(admitted.job);
  }
  engine.start();
  for (size_t i = 0; i < jobs.size(); ++i) {
    const gpt2::Job::State state = done(*jobs[i]);
    EXPECT_EQ(state.finish, "length") << "request " << i << ": " << state.error;
    EXPECT_EQ(state.tokens, alone(requests[i])) << "request " << i;
  }
  const gpt2::Engine::Stats stats = engine.stats();
  EXPECT_EQ(stats.finished.at("length"), 5);
  EXPECT_EQ(stats.firstTokens, 5);
  EXPECT_EQ(stats.tokens, 9 + 4 + 12 + 6 + 5);
  // The last prompt starts as the first did: from the prefix cache.
  EXPECT_GE(stats.prefix.hits, 1);
}

TEST_F(EngineTest, AFullQueueAndDrainingRefuseAndTheAdmittedFinish) {
  gpt2::Engine engine(*model_, {.slots = 1, .queue = 2, .prefixCache = 0, .warmUp = false});
  auto first = engine.submit(request({1, 2}, 3)), second = engine.submit(request({2, 3}, 3));
  ASSERT_TRUE(first.job && second.job);
  auto third = engine.submit(request({3, 4}, 3));
  EXPECT_FALSE(third.job);
  EXPECT_EQ(third.refusal, gpt2::Engine::Refusal::QueueFull);
  engine.drain();
  auto fourth = engine.submit(request({4, 5}, 3));
  EXPECT_EQ(fourth.refusal, gpt2::Engine::Refusal::Draining);
  engine.start();
  EXPECT_EQ(done(*first.job).tokens, alone(first.job->request));
  EXPECT_EQ(done(*second.job).tokens, alone(second.job->request));
  const gpt2::Engine::Stats stats = engine.stats();
  EXPECT_EQ(stats.refusedFull, 1);
  EXPECT_EQ(stats.refusedDraining, 1);
}

TEST_F(EngineTest, ACancelledJobStopsAndTheOthersGoOn) {
  gpt2::Engine engine(*model_, {.slots = 2, .queue = 4, .prefixCache = 0, .warmUp = false});
  engine.start();
  auto waiting = engine.submit(request({9, 9}, 50)).job;
  waiting->cancel(); // possibly before it joins: either way, "cancelled"
  auto running = engine.submit(request({5, 6, 7}, 60)).job;
  auto other = engine.submit(request({8}, 10)).job;
  gpt2::Job::State seen;
  while (running->wait(0, 1000ms, seen) && seen.tokens.empty() && seen.finish.empty()) {
  }
  running->cancel();
  const gpt2::Job::State cancelled = done(*running);
  EXPECT_EQ(cancelled.finish, "cancelled");
  EXPECT_LT(cancelled.tokens.size(), 60u);
  const std::vector<int32_t> whole = alone(running->request);
  EXPECT_TRUE(std::equal(cancelled.tokens.begin(), cancelled.tokens.end(), whole.begin()));
  EXPECT_EQ(done(*waiting).finish, "cancelled");
  EXPECT_EQ(done(*other).tokens, alone(other->request));
}

TEST_F(EngineTest, BadRequestsAndOptionsAreErrorsAndStopAnswersEveryJob) {
  gpt2::Engine engine(*model_, {.slots = 1, .queue = 4, .prefixCache = 0, .warmUp = false});
  EXPECT_NE(errorOf([&] { engine.submit(request({1, 200}, 3)); }).find("200"), std::string::npos);
  EXPECT_NE(errorOf([&] { engine.submit(request({1}, 0)); }).find("maxTokens"), std::string::npos);
  EXPECT_NE(errorOf([&] { gpt2::Engine(*model_, {.slots = 0}); }).find("slots must be 1 to"),
            std::string::npos);
  // Never started: stop() answers the waiting job.
  auto job = engine.submit(request({1, 2}, 3)).job;
  engine.stop();
  const gpt2::Job::State state = done(*job);
  EXPECT_EQ(state.finish, "error");
  EXPECT_NE(state.error.find("shutting down"), std::string::npos);
  EXPECT_TRUE(state.tokens.empty());
}

} // namespace
