// tinymlir-gpt2: GPT-2 generation from a Hugging Face checkpoint, greedy or
// sampled.
//
//   tinymlir-gpt2 --model DIR (--prompt TEXT | --prompt-ids 1,2,3) --tokens N
//                 [--json] [--logits FILE.npy] [--threads N] [--dump DIR]
//                 [--temperature T [--top-k K] [--top-p P] [--seed S]]
//                 [--repeat-penalty R] [--ignore-eos]
//   tinymlir-gpt2 --model DIR --prompt-file FILE --tokens N [...]
//                 (one prompt per line, decoded together)
//   tinymlir-gpt2 --model DIR --serve [--host H] [--port N] [--slots S] [--queue Q]
//                 (an OpenAI-compatible /v1/completions server)
//
// Generation stops at <|endoftext|> (50256, when the vocabulary has it; it is
// not printed) unless --ignore-eos is given.
//
// Without --model it makes (once) a small random checkpoint under the user's
// cache directory and uses it.
#include "models/gpt2/RandomCheckpoint.h"
#include "gpt2/Server.h"
#include "models/gpt2/Model.h"
#include "models/gpt2/Tokenizer.h"
#include "OptionFlags.h"
#include "runtime/Settings.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cblas.h>

#include <chrono>
#include <climits>
#include <malloc.h>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <atomic>
#include <csignal>
#include <sstream>
#include <thread>

using namespace tinymlir;
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

fs::path cacheDir() {
  const std::string home = settings::userCacheHome();
  return home.empty() ? fs::temp_directory_path() / "tinymlir" : fs::path(home) / "tinymlir";
}

/// The default model: a small random checkpoint with the real vocabulary.
std::string defaultModel() {
  fs::path dir = cacheDir() / "gpt2-default";
  if (!fs::exists(dir / "model.safetensors") || !fs::exists(dir / "config.json")) {
    std::cerr << "tinymlir-gpt2: no --model given; writing a small random checkpoint to " << dir
              << " (once)\n";
    gpt2::writeRandomCheckpoint(dir.string(), gpt2::Config::tiny(), /*seed=*/0);
  }
  return dir.string();
}

std::vector<int32_t> parseIds(const std::string &text) {
  std::vector<int32_t> ids;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception &) {
      used = 0;
    }
    if (used == 0 || used != item.size() || v < INT32_MIN || v > INT32_MAX)
      throw Error("[gpt2] --prompt-ids: '" + item + "' is not a token id");
    ids.push_back(static_cast<int32_t>(v));
  }
  return ids;
}

void dumpTrace(const fs::path &dir, int64_t step, const gpt2::Trace &t) {
  std::string prefix = (dir / ("step" + std::to_string(step))).string();
  t.embed.saveNpy(prefix + "_embed.npy");
  for (size_t i = 0; i < t.attn.size(); ++i) {
    t.attn[i].saveNpy(prefix + "_block" + std::to_string(i) + "_attn.npy");
    t.ffn[i].saveNpy(prefix + "_block" + std::to_string(i) + "_ffn.npy");
  }
  t.logits.saveNpy(prefix + "_logits.npy");
}

volatile std::sig_atomic_t lastSignal = 0, signals = 0;

/// --serve: SIGTERM drains (new requests get 503 while those in flight
/// finish, for at most --drain-timeout seconds), then stops; SIGINT, or a
/// second signal, stops at once. A watching thread turns the handler's flags
/// into Server calls.
int serveForever(const gpt2::Model &gpt, const gpt2::Tokenizer &tokenizer,
                 gpt2::ServerOptions options, const std::string &model, double drainSeconds) {
  options.modelName = fs::path(model).filename().string();
  if (options.modelName.empty())
    options.modelName = fs::path(model).parent_path().filename().string();
  gpt2::Server server(gpt, tokenizer, options);
  const int port = server.bind();
  std::cerr << "tinymlir-gpt2: serving " << options.modelName << " on http://" << options.host
            << ":" << port << " (" << options.slots << " slots, queue " << options.queue
            << "): POST /v1/completions, GET /health, GET /live, GET /metrics"
            << (options.warmUp ? "; compiling in the background" : "") << std::endl;
  for (int s : {SIGINT, SIGTERM})
    std::signal(s, [](int received) {
      lastSignal = received;
      signals = signals + 1;
    });
  std::atomic<bool> done = false;
  std::thread watcher([&] {
    auto name = [] { return lastSignal == SIGINT ? "SIGINT" : "SIGTERM"; };
    while (!done && !signals)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (done)
      return;
    if (lastSignal == SIGTERM && signals == 1) {
      std::cerr << "tinymlir-gpt2: SIGTERM: draining (new requests get 503; at most "
                << drainSeconds << " s for those in flight)" << std::endl;
      server.drain();
      const auto deadline =
          std::chrono::steady_clock::now() + std::chrono::duration<double>(drainSeconds);
      while (!server.idle() && signals == 1 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (!server.idle())
        std::cerr << "tinymlir-gpt2: "
                  << (signals > 1 ? std::string(name()) + " again"
                                  : "the drain timeout (" + std::to_string(drainSeconds) + " s)")
                  << ": stopping with requests in flight" << std::endl;
    }
    std::cerr << "tinymlir-gpt2: " << name() << ": stopping" << std::endl;
    server.stop();
  });
  server.run();
  done = true;
  watcher.join();
  return 0;
}

/// --prompt-file: every line a prompt, decoded together; the results in order.
int generateBatch(const gpt2::Model &gpt, const gpt2::Tokenizer &tokenizer, const std::string &file,
                  int64_t tokens, gpt2::SamplingOptions sampling, bool stopAtEnd, bool json) {
  std::ifstream in(file);
  std::vector<std::string> texts;
  std::vector<std::vector<int32_t>> prompts;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (line.empty())
      continue;
    texts.push_back(line);
    prompts.push_back(tokenizer.encode(line));
  }
  if (prompts.empty())
    throw Error("[gpt2] --prompt-file " + file + " has no prompt (one per line)");
  gpt2::GenerateOptions how;
  how.sampling = sampling;
  how.stopAtEndOfText = stopAtEnd;
  auto start = Clock::now();
  std::vector<std::vector<int32_t>> out = gpt.generateBatch(prompts, tokens, how);
  const double seconds = since(start);
  nlohmann::json results = nlohmann::json::array();
  size_t generated = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    std::string text;
    for (int32_t id : out[i])
      text += id < tokenizer.vocabSize() ? tokenizer.decodeToken(id) : "";
    generated += out[i].size();
    if (json)
      results.push_back({{"prompt_ids", prompts[i]}, {"output_ids", out[i]}, {"text", text}});
    else
      std::cout << texts[i] << text << "\n";
  }
  if (json)
    std::cout << nlohmann::json{{"results", results}}.dump(-1, ' ', false,
                                                           nlohmann::json::error_handler_t::replace)
              << "\n";
  std::cerr << "tinymlir-gpt2: " << prompts.size() << " prompts decoded together, " << generated
            << " tokens in " << seconds << " s (" << generated / std::max(seconds, 1e-9)
            << " tokens/s, compile " << gpt.compileSeconds() << " s)\n";
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  // Keep freed buffers in the heap: every step allocates the same large
  // temporaries, and fresh mmap'd pages cost a page fault each (measured:
  // prefill of 256 tokens 1.1 s -> 0.9 s).
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
  CLI::App app{"GPT-2 generation with tinymlir: greedy, or sampled with --temperature."};
  std::string model, prompt, promptIds, logitsFile, dumpDir;
  int64_t tokens = 10;
  int64_t repeat = 1;
  int threads = 0;
  bool json = false, recompute = false;
  std::string precision = "reference";
  app.add_option("--model", model, "directory with model.safetensors and config.json");
  auto *textOpt = app.add_option("--prompt", prompt, "prompt text");
  auto *idsOpt = app.add_option("--prompt-ids", promptIds, "prompt as token ids, e.g. 1,2,3")
                     ->excludes(textOpt);
  std::string promptFile;
  auto *fileOpt = app.add_option("--prompt-file", promptFile,
                                 "prompts, one per line, decoded together (a batch)")
                      ->excludes(textOpt, idsOpt)
                      ->check(CLI::ExistingFile);
  bool serve = false;
  gpt2::ServerOptions server;
  app.add_flag("--serve", serve, "serve /v1/completions (OpenAI-compatible), /health and /metrics")
      ->excludes(textOpt, idsOpt, fileOpt);
  app.add_option("--host", server.host, "--serve: address to listen on")->capture_default_str();
  app.add_option("--port", server.port, "--serve: port (0: any free one, printed)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  app.add_option("--slots", server.slots, "--serve: sequences decoded together")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, gpt2::Decoder::kMaxSlots));
  app.add_option("--queue", server.queue, "--serve: requests waiting for a slot; more get 503")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--max-tokens", server.maxTokens,
                 "--serve: most max_tokens a request may ask (default: the context)")
      ->check(CLI::PositiveNumber);
  double drainSeconds = 30;
  app.add_option("--drain-timeout", drainSeconds,
                 "--serve: on SIGTERM, seconds the requests in flight may take to finish while "
                 "new ones get 503")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--prefix-cache", server.prefixCache,
                 "--serve: positions of recent sequences' keys and values kept for prompts that "
                 "start the same way (0: none)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--replica", server.replica,
                 "--serve: this replica's name in every answer's X-Replica header (default: "
                 "host:port)");
  app.add_flag("!--refuse-while-warming-up", server.serveWhileWarming,
               "--serve: also answer completions with 503 while the warm-up compiles (behind a "
               "balancer: requests go to replicas that are ready)");
  app.add_flag("!--no-warm-up", server.warmUp,
               "--serve: do not compile every step and prompt of the first 128 positions in the "
               "background at start (they compile when a request first needs them)");
  app.add_option("--tokens", tokens, "tokens to generate")->check(CLI::NonNegativeNumber);
  app.add_flag("--json", json, "print one JSON object instead of streaming text");
  app.add_option("--logits", logitsFile, "write each step's last-position logits, (steps, vocab)");
  app.add_option("--threads", threads, "threads for compiled loops and BLAS (default: all cores)")
      ->check(CLI::PositiveNumber);
  app.add_option("--repeat", repeat,
                 "generate N times in this process (a benchmark: the runs after the first are "
                 "warm); the output and timings printed are the last run's")
      ->check(CLI::PositiveNumber);
  app.add_flag("--recompute", recompute,
               "recompute the whole prefix for every token (the reference's way) instead of "
               "decoding incrementally with a key/value cache");
  app.add_option("--dump", dumpDir,
                 "write every step's intermediates as .npy (verification; implies --recompute)");
  app.add_option("--precision", precision,
                 "reference: the NumPy reference's dtypes and tokens (float64 where its scalars "
                 "promote); float32: float32 throughout, faster")
      ->check(CLI::IsMember({"reference", "float32"}));
  bool gpu = false;
  app.add_flag("--gpu", gpu, "run on the NVIDIA GPU (weights stay resident on the device)");
  // The compiler's options: the environment's defaults, then the flags given
  // (tools/OptionFlags.h: --no-blas, --no-disk-cache, --cache-dir DIR...).
  std::optional<JitOptions> defaults;
  try {
    defaults.emplace();
  } catch (const std::exception &e) {
    std::cerr << "tinymlir-gpt2: " << e.what() << "\n";
    return 2;
  }
  JitOptions &options = *defaults;
  tools::addOptionFlags(app, options);
  gpt2::SamplingOptions sampling;
  bool ignoreEos = false;
  app.add_option("--temperature", sampling.temperature,
                 "sample with this temperature (default 0: greedy, the largest logit)");
  auto *topK = app.add_option("--top-k", sampling.topK,
                              "sample from the K most probable tokens only (default 0: all)");
  auto *topP = app.add_option("--top-p", sampling.topP,
                              "sample from the smallest set of most probable tokens whose "
                              "probability reaches P (default 1: all)");
  auto *seedOpt = app.add_option("--seed", sampling.seed,
                                 "seed of the sampler (default: a random one, printed on stderr)");
  app.add_option("--repeat-penalty", sampling.repeatPenalty,
                 "divide positive logits of tokens already in the text by R and multiply "
                 "negative ones (default 1: off; greedy too)");
  app.add_flag("--ignore-eos", ignoreEos,
               "do not stop at <|endoftext|> (50256): always generate --tokens tokens");
  CLI11_PARSE(app, argc, argv);

  try {
    if (prompt.empty() && promptIds.empty() && promptFile.empty() && !serve)
      throw Error("[gpt2] give a prompt: --prompt TEXT, --prompt-ids 1,2,3, --prompt-file FILE, "
                  "or --serve");
    sampling.validate();
    if (sampling.greedy()) {
      for (auto *opt : {topK, topP, seedOpt})
        if (opt->count())
          std::cerr << "tinymlir-gpt2: note: " << opt->get_name()
                    << " has no effect without --temperature > 0 (greedy decoding)\n";
    } else if (!serve) { // the server: a seed per request
      if (!seedOpt->count())
        sampling.seed = gpt2::randomSeed();
      std::cerr << "tinymlir-gpt2: sampling with --seed " << sampling.seed << "\n";
    }
    if (threads > 0)
      setThreads(threads);
    auto start = Clock::now();
    // The tokenizer (about 20 ms of parsing) loads on another thread while
    // the weights are mapped and the kernels are loaded; prompt ids and
    // --json need it only for the text of the answer, and then without the
    // merges (decoding only).
    const bool decodeOnly = !promptIds.empty() && !serve && promptFile.empty();
    std::future<gpt2::Tokenizer> loading = std::async(std::launch::async, [decodeOnly] {
      return decodeOnly ? gpt2::Tokenizer::loadForDecoding(gpt2::Tokenizer::defaultDataDir())
                        : gpt2::Tokenizer::loadDefault();
    });
    std::optional<gpt2::Tokenizer> loaded;
    auto tokenizer = [&]() -> const gpt2::Tokenizer & {
      if (!loaded)
        loaded.emplace(loading.get());
      return *loaded;
    };
    std::vector<int32_t> ids = promptIds.empty() ? tokenizer().encode(prompt) : parseIds(promptIds);
    if (model.empty())
      model = defaultModel();
    gpt2::Weights weights = gpt2::loadCheckpoint(model);
    if (!json && promptIds.empty() && weights.config.vocab_size > tokenizer().vocabSize())
      std::cerr << "tinymlir-gpt2: note: the model's vocabulary is larger than the tokenizer's\n";
    double loadSeconds = since(start);
    if (gpu)
      options.target = Target::GPU;
    gpt2::Model gpt(std::move(weights), options, gpt2::parsePrecision(precision));
    if (serve)
      return serveForever(gpt, tokenizer(), server, model, drainSeconds);
    if (!promptFile.empty())
      return generateBatch(gpt, tokenizer(), promptFile, tokens, sampling, !ignoreEos, json);
    gpt.checkIds(ids, tokens); // before the prompt is printed
    if (!dumpDir.empty())
      fs::create_directories(dumpDir);

    const int64_t V = gpt.config().vocab_size;
    // The logits' dtype: float64, or float32 in float32 precision.
    Array lastLogits = Array::empty(
        {tokens, V}, gpt.precision() == gpt2::Precision::Float32 ? DType::f32 : DType::f64);
    std::vector<double> stepSeconds;
    std::vector<int32_t> output;
    if (!json)
      std::cout << (promptIds.empty() ? prompt : tokenizer().decode(ids)) << std::flush;
    auto stepStart = Clock::now();
    auto onToken = [&](int64_t step, int32_t next, const Array &logits) {
      stepSeconds.push_back(since(stepStart));
      const int64_t T = logits.dim(0);
      Array last = logits.sliced(0, T - 1, T).astype(lastLogits.dtype()).contiguous();
      std::memcpy(static_cast<std::byte *>(lastLogits.data()) + step * last.nbytes(), last.data(),
                  last.nbytes());
      output.push_back(next);
      if (!json)
        std::cout << (next < tokenizer().vocabSize() ? tokenizer().decodeToken(next)
                                                     : "<" + std::to_string(next) + ">")
                  << std::flush;
      stepStart = Clock::now();
    };
    gpt2::GenerateOptions how;
    how.incremental = !recompute;
    how.sampling = sampling;
    how.stopAtEndOfText = !ignoreEos;
    if (!dumpDir.empty()) // implies full-prefix decoding
      how.onTrace = [&](int64_t step, const gpt2::Trace &t) { dumpTrace(dumpDir, step, t); };
    std::vector<double> firstTokens; // each run's
    for (int64_t run = 0; run < repeat; ++run) {
      stepSeconds.clear();
      output.clear();
      stepStart = Clock::now();
      gpt.generate(ids, tokens, how, onToken);
      if (!stepSeconds.empty())
        firstTokens.push_back(stepSeconds.front());
    }
    if (!json)
      std::cout << "\n";
    const auto generated = static_cast<int64_t>(output.size());
    const bool stopped = generated < tokens; // at end-of-text
    if (!logitsFile.empty())
      lastLogits.sliced(0, 0, generated).contiguous().saveNpy(logitsFile);
    std::string text;
    for (int32_t id : output)
      text += id < tokenizer().vocabSize() ? tokenizer().decodeToken(id) : "";
    nlohmann::json result = {{"prompt_ids", ids}, {"output_ids", output}, {"text", text}};
    if (!dumpDir.empty())
      std::ofstream(fs::path(dumpDir) / "output_ids.json")
          << nlohmann::json{{"prompt_ids", ids}, {"output_ids", output}}.dump() << "\n";
    if (json)
      std::cout << result.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";

    // Timings on stderr: the first step includes compilation of its shapes.
    double total = 0;
    for (double s : stepSeconds)
      total += s;
    std::cerr << "tinymlir-gpt2: load " << loadSeconds << " s; " << generated << " tokens"
              << (stopped ? " (stopped at end-of-text)" : "") << " in " << total << " s (compile "
              << gpt.compileSeconds() << " s, " << gpt.compilations()
              << " specializations compiled, " << gpt.diskHits() << " loaded from the disk cache)";
    if (!stepSeconds.empty()) {
      std::cerr << "; " << (recompute || !dumpDir.empty() ? "full-prefix" : "incremental")
                << "; first token " << stepSeconds.front() << " s";
      if (repeat > 1) {
        std::cerr << " (each run's:";
        for (double s : firstTokens)
          std::cerr << " " << s;
        std::cerr << ")";
      }
      std::cerr << "; per token:";
      for (double s : stepSeconds)
        std::cerr << " " << s;
      if (stepSeconds.size() > 1) // after the first: compiled ahead, or in the background meanwhile
        std::cerr << "; " << (stepSeconds.size() - 1) / std::max(total - stepSeconds.front(), 1e-9)
                  << " tokens/s after the first";
    }
    std::cerr << "\n";
  } catch (const Error &e) {
    std::cerr << "tinymlir-gpt2: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
