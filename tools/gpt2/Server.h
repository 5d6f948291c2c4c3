// tinymlir-gpt2 --serve: an HTTP server with OpenAI's /v1/completions
// (streamed as server-sent events, or one JSON answer), /health and /metrics.
//
// One engine thread owns a gpt2::Decoder and runs continuous batching:
// requests wait in a bounded queue, join the running batch as slots free up
// (their prompt computed alone, into their slot), advance one token per step
// together with every other sequence, and leave when they finish, stop at
// end-of-text, or their client goes away. A full queue answers 503; bad
// requests get a 400 naming the field and the value at fault. Each request's
// tokens are those of the same prompt and settings generated alone. At start,
// a thread at the lowest priority compiles (or loads from the disk cache)
// every step and prompt the decoder's first capacity can call.
#pragma once

#include "models/gpt2/Model.h"
#include "models/gpt2/Tokenizer.h"

#include <cstdint>
#include <memory>
#include <string>

namespace tinymlir::gpt2 {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080; ///< 0: any free port (printed, and returned by bind)
  int64_t slots = 8;      ///< sequences decoded together
  int64_t queue = 64;     ///< requests waiting for a slot; more get 503
  int64_t maxTokens = 0;  ///< most max_tokens a request may ask (0: the context)
  int connections = 64;   ///< HTTP worker threads (open connections served at once)
  /// Compiles every step and prompt of the first capacity in the background
  /// at start (lowest priority), so that no request waits for a compilation.
  bool warmUp = true;
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

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace tinymlir::gpt2
