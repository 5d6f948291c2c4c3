// tinymlir-gpt2 --serve: an HTTP server with OpenAI's /v1/completions
// (streamed as server-sent events, or one JSON answer), /health and /metrics,
// in front of the serving engine (models/gpt2/Engine.h: the queue, continuous
// batching, the prefix cache and the warm-up). A full queue answers 503; bad
// requests get a 400 naming the field and the value at fault. A client that
// goes away cancels its request.
//
// Behind a balancer (docs/serving.md): /health is readiness (503 with
// Retry-After while the warm-up compiles or while draining), /live is
// liveness. drain() (SIGTERM in tinymlir-gpt2) answers new requests with 503
// while the requests in flight finish. A non-streamed answer is sent whole,
// headers and body together, when it is done, so that a balancer can retry it
// elsewhere if this replica dies first. Every answer names the replica
// (X-Replica). A prefix cache reuses the keys and values of recent sequences
// for prompts that start as they did.
#pragma once

#include "models/gpt2/Model.h"
#include "models/gpt2/Tokenizer.h"

#include <cstdint>
#include <memory>
#include <string>

namespace tinymlir::gpt2 {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;       ///< 0: any free port (printed, and returned by bind)
  int64_t slots = 8;     ///< sequences decoded together
  int64_t queue = 64;    ///< requests waiting for a slot; more get 503
  int64_t maxTokens = 0; ///< most max_tokens a request may ask (0: the context)
  int connections = 64;  ///< HTTP worker threads (open connections served at once)
  /// Compiles every step and prompt of the first capacity in the background
  /// at start (lowest priority), so that no request waits for a compilation.
  bool warmUp = true;
  /// false: /v1/completions also answers 503 (Retry-After) while the warm-up
  /// compiles, so that a balancer sends requests to replicas that are ready.
  bool serveWhileWarming = true;
  /// Positions of recent sequences' keys and values kept for prompts that
  /// start the same way (0: none). GPT-2 124M: about 144 KiB a position in
  /// reference precision, 72 KiB in float32.
  int64_t prefixCache = 2048;
  std::string replica;            ///< the X-Replica header ("": host:port)
  std::string modelName = "gpt2"; ///< the "model" of responses
};

class Server {
public:
  Server(const Model &model, const Tokenizer &tokenizer, ServerOptions options);
  ~Server();
  Server(const Server &) = delete;
  Server &operator=(const Server &) = delete;

  /// Binds the socket; returns the port. Throws tinymlir::Error if it cannot.
  int bind();
  /// Serves until stop() (from another thread or a signal handler's thread).
  void run();
  void stop();
  /// From now on, new requests and /health get 503 with Retry-After; the
  /// requests in flight (waiting or decoding) go on. Then stop() when idle().
  void drain();
  /// No request is waiting, decoding or being answered.
  bool idle() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace tinymlir::gpt2
