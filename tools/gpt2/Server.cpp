#include "gpt2/Server.h"

#include "models/gpt2/Engine.h"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <sys/types.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <limits>
#include <mutex>
#include <set>
#include <sstream>

namespace tinymlir::gpt2 {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

/// The bytes of `text` up to the last complete UTF-8 character (a token may
/// end inside one; the rest waits for the next token).
size_t completeUtf8(const std::string &text) {
  const size_t n = text.size();
  for (size_t back = 1; back <= std::min<size_t>(3, n); ++back) {
    const auto c = static_cast<unsigned char>(text[n - back]);
    if ((c & 0xC0) == 0x80)
      continue; // a continuation byte: look further back
    const size_t length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return length > back ? n - back : n;
  }
  return n;
}

json errorBody(const std::string &message, const std::string &type) {
  return {{"error", {{"message", message}, {"type", type}}}};
}

std::string dump(const json &j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

/// The socket of a request's connection: the one whose ends are the
/// request's (httplib does not hand it to handlers). -1 if none is found.
int connectionOf(const httplib::Request &req) {
  std::error_code error;
  for (const auto &entry : std::filesystem::directory_iterator("/proc/self/fd", error)) {
    int fd;
    try {
      fd = std::stoi(entry.path().filename().string());
    } catch (const std::exception &) {
      continue;
    }
    sockaddr_storage peer{}, local{};
    socklen_t peerSize = sizeof(peer), localSize = sizeof(local);
    if (::getpeername(fd, reinterpret_cast<sockaddr *>(&peer), &peerSize) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr *>(&local), &localSize) != 0)
      continue;
    auto port = [](const sockaddr_storage &a) {
      return a.ss_family == AF_INET    ? ntohs(reinterpret_cast<const sockaddr_in &>(a).sin_port)
             : a.ss_family == AF_INET6 ? ntohs(reinterpret_cast<const sockaddr_in6 &>(a).sin6_port)
                                       : -1;
    };
    if (port(peer) == req.remote_port && port(local) == req.local_port)
      return fd;
  }
  return -1;
}

/// The client closed the connection (a read would find its end).
bool clientGone(int connection) {
  if (connection < 0)
    return false;
  char byte;
  const ssize_t n = ::recv(connection, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

} // namespace

struct Server::Impl {
  Impl(const Model &model, const Tokenizer &tokenizer, ServerOptions options)
      : model(model), tokenizer(tokenizer), options(std::move(options)),
        engine(model, EngineOptions{this->options.slots, this->options.queue,
                                    this->options.prefixCache, this->options.warmUp}) {
    const int64_t context = model.config().n_positions;
    if (this->options.maxTokens <= 0 || this->options.maxTokens > context)
      this->options.maxTokens = context;
    routes();
  }

  const Model &model;
  const Tokenizer &tokenizer;
  ServerOptions options;
  httplib::Server http;
  Engine engine;

  mutable std::mutex mutex; ///< the counters below
  int64_t rejectedBad = 0;
  int64_t inFlight = 0; ///< requests let in and not yet answered
  std::atomic<int64_t> requests = 0;

  // --- HTTP ------------------------------------------------------------------

  /// The request, or a 400 reason.
  Request parse(const std::string &body, bool &stream) {
    json j;
    try {
      j = json::parse(body);
    } catch (const json::exception &e) {
      throw Error(std::string("[completions] the body is not valid JSON: ") + e.what());
    }
    if (!j.is_object())
      throw Error("[completions] the body must be a JSON object, not " +
                  std::string(j.type_name()));
    static const std::set<std::string> known{
        "model",          "prompt", "max_tokens", "temperature", "top_p", "top_k", "seed",
        "repeat_penalty", "stream", "ignore_eos", "n",           "echo",  "user"};
    for (const auto &[key, value] : j.items())
      if (!known.contains(key)) {
        std::string list;
        for (const std::string &k : known)
          list += (list.empty() ? "" : ", ") + k;
        throw Error("[completions] unknown field '" + key + "' (known: " + list + ")");
      }
    auto field = [&](const char *name, auto fallback, auto check) {
      using T = decltype(fallback);
      if (!j.contains(name) || j[name].is_null())
        return fallback;
      const json &v = j[name];
      if (!check(v))
        throw Error(std::string("[completions] '") + name + "' must be " +
                    (std::is_same_v<T, bool>          ? "true or false"
                     : std::is_same_v<T, std::string> ? "a string"
                     : std::is_integral_v<T>          ? "an integer"
                                                      : "a number") +
                    ", not " + v.dump());
      return v.template get<T>();
    };
    auto isInt = [](const json &v) { return v.is_number_integer(); };
    auto isNumber = [](const json &v) { return v.is_number(); };
    auto isBool = [](const json &v) { return v.is_boolean(); };
    auto isString = [](const json &v) { return v.is_string(); };
    Request request;
    field("model", std::string(), isString);
    field("user", std::string(), isString);
    if (field("n", int64_t{1}, isInt) != 1)
      throw Error("[completions] 'n' must be 1: one completion per request");
    if (field("echo", false, isBool))
      throw Error("[completions] 'echo' is not supported: it must be false");
    stream = field("stream", false, isBool);
    request.stopAtEnd = !field("ignore_eos", false, isBool);
    request.maxTokens = field("max_tokens", int64_t{16}, isInt);
    SamplingOptions &s = request.sampling;
    s.temperature = field("temperature", 0.0, isNumber);
    s.topP = field("top_p", 1.0, isNumber);
    s.topK = field("top_k", int64_t{0}, isInt);
    s.repeatPenalty = field("repeat_penalty", 1.0, isNumber);
    const bool seeded = j.contains("seed") && !j["seed"].is_null();
    if (seeded && !(j["seed"].is_number_unsigned() ||
                    (j["seed"].is_number_integer() && j["seed"].get<int64_t>() >= 0)))
      throw Error("[completions] 'seed' must be a non-negative integer, not " + j["seed"].dump());
    s.seed = seeded ? j["seed"].get<uint64_t>() : randomSeed();
    try {
      s.validate();
    } catch (const Error &e) {
      throw Error(std::string("[completions] ") + e.what());
    }
    if (!j.contains("prompt"))
      throw Error("[completions] 'prompt' is missing: give a string or a list of token ids");
    const json &p = j["prompt"];
    if (p.is_array() && p.size() == 1 && p[0].is_string()) {
      request.prompt = tokenizer.encode(p[0].get<std::string>());
    } else if (p.is_string()) {
      request.prompt = tokenizer.encode(p.get<std::string>());
    } else if (p.is_array() &&
               std::ranges::all_of(p, [](const json &v) { return v.is_number_integer(); })) {
      for (const json &v : p) {
        const auto id = v.get<int64_t>();
        if (id < 0 || id >= model.config().vocab_size)
          throw Error("[completions] token id " + std::to_string(id) +
                      " is outside the vocabulary of " + std::to_string(model.config().vocab_size));
        request.prompt.push_back(static_cast<int32_t>(id));
      }
    } else {
      throw Error("[completions] 'prompt' must be a string, a list of one string or a list of "
                  "token ids, not " +
                  p.dump().substr(0, 80));
    }
    if (request.maxTokens < 1 || request.maxTokens > options.maxTokens)
      throw Error("[completions] 'max_tokens' must be 1 to " + std::to_string(options.maxTokens) +
                  ", not " + std::to_string(request.maxTokens));
    model.checkIds(request.prompt, request.maxTokens);
    return request;
  }

  /// A completion object; `ids`, the tokens its text covers (an extension:
  /// the text of a token ending inside a UTF-8 character waits for the next).
  json completion(const std::string &id, const std::string &text, const char *finish,
                  const std::vector<int32_t> &ids, const json &usage = nullptr) const {
    json choice = {{"text", text},
                   {"index", 0},
                   {"logprobs", nullptr},
                   {"finish_reason", finish ? json(finish) : json(nullptr)},
                   {"token_ids", ids}};
    json out = {{"id", id},
                {"object", "text_completion"},
                {"created", std::time(nullptr)},
                {"model", options.modelName},
                {"choices", json::array({choice})}};
    if (!usage.is_null())
      out["usage"] = usage;
    return out;
  }

  std::string text(const std::vector<int32_t> &ids, size_t from, size_t to) const {
    std::string out;
    for (size_t i = from; i < to; ++i)
      if (ids[i] < tokenizer.vocabSize())
        out += tokenizer.decodeToken(ids[i]);
    return out;
  }

  /// A 503 with Retry-After: the balancer (or the client) tries again.
  static void unavailable(httplib::Response &res, const std::string &message,
                          const std::string &type, int retryAfter) {
    res.status = 503;
    res.set_header("Retry-After", std::to_string(retryAfter));
    res.set_content(dump(errorBody(message, type)), "application/json");
  }

  /// One request admitted fewer in flight (its answer is sent, or its client gone).
  void answered() {
    std::lock_guard lock(mutex);
    --inFlight;
  }

  /// The final body: the whole answer, or a stream's last event.
  std::string finalBody(const Job &job, const Job::State &state, const std::string &id, bool stream,
                        const std::string &held) const {
    const std::vector<int32_t> &tokens = state.tokens;
    const size_t prompt = job.request.prompt.size();
    json usage = {{"prompt_tokens", prompt},
                  {"completion_tokens", tokens.size()},
                  {"total_tokens", prompt + tokens.size()}};
    if (state.finish == "error")
      return dump(errorBody(state.error, "server_error"));
    if (stream)
      return dump(completion(id, held, state.finish.c_str(), {}, usage));
    return dump(
        completion(id, text(tokens, 0, tokens.size()), state.finish.c_str(), tokens, usage));
  }

  void completions(const httplib::Request &req, httplib::Response &res) {
    bool stream = false;
    Request request;
    try {
      request = parse(req.body, stream);
    } catch (const Error &e) {
      {
        std::lock_guard lock(mutex);
        ++rejectedBad;
      }
      res.status = 400;
      res.set_content(dump(errorBody(e.what(), "invalid_request_error")), "application/json");
      return;
    }
    {
      std::lock_guard lock(mutex);
      ++inFlight; // before the engine has it: idle() is never true while it waits
    }
    Engine::Admission admitted;
    try {
      admitted = engine.submit(std::move(request), options.serveWhileWarming);
    } catch (const Error &e) { // parse() checked what the engine checks
      answered();
      res.status = 400;
      res.set_content(dump(errorBody(e.what(), "invalid_request_error")), "application/json");
      return;
    }
    if (!admitted.job) {
      answered();
      switch (admitted.refusal) {
      case Engine::Refusal::Draining:
        return unavailable(res, "[server] this replica is shutting down: try another",
                           "server_draining", 1);
      case Engine::Refusal::WarmingUp:
        return unavailable(res, "[server] this replica is still compiling: try again shortly",
                           "server_warming_up", 2);
      default:
        return unavailable(res,
                           "[server] the queue is full (" + std::to_string(options.queue) +
                               " requests waiting): try again later",
                           "server_busy", 1);
      }
    }
    std::shared_ptr<Job> job = std::move(admitted.job);
    const std::string id = "cmpl-" + std::to_string(++requests);
    if (!stream) {
      // Headers and body together, once the answer is done: a balancer can
      // send the request elsewhere if this replica dies before. A client that
      // goes away meanwhile cancels it (checked every 250 ms).
      struct Answered {
        Impl &s;
        ~Answered() { s.answered(); }
      } answered{*this};
      const int connection = connectionOf(req);
      Job::State state;
      constexpr size_t kDoneOnly = std::numeric_limits<size_t>::max(); // no token count wakes it
      while (!job->wait(kDoneOnly, std::chrono::milliseconds(250), state))
        if (!job->cancelled() && clientGone(connection))
          job->cancel();
      if (state.finish == "error")
        res.status = 500;
      res.set_content(finalBody(*job, state, id, false, ""), "application/json");
      return;
    }
    // Streamed: the provider runs on this connection's thread until the job
    // is done; a failed write (the client went away) cancels the job.
    auto sent = std::make_shared<size_t>(0);
    auto held = std::make_shared<std::string>(); // bytes of an incomplete UTF-8 character
    auto provider = [this, job, id, sent, held](size_t, httplib::DataSink &sink) {
      auto write = [&](const std::string &data) {
        if (!sink.write(data.data(), data.size())) {
          job->cancel();
          return false;
        }
        return true;
      };
      for (;;) {
        Job::State state;
        const bool waited = !job->wait(*sent, std::chrono::milliseconds(250), state);
        const std::vector<int32_t> &tokens = state.tokens;
        if (tokens.size() > *sent) {
          *held += text(tokens, *sent, tokens.size());
          std::vector<int32_t> fresh(tokens.begin() + static_cast<std::ptrdiff_t>(*sent),
                                     tokens.end());
          *sent = tokens.size();
          const size_t ready = state.finish.empty() ? completeUtf8(*held) : held->size();
          std::string piece = held->substr(0, ready);
          held->erase(0, ready);
          if (!write("data: " + dump(completion(id, piece, nullptr, fresh)) + "\n\n"))
            return false;
        }
        if (!state.finish.empty()) {
          if (!write("data: " + finalBody(*job, state, id, true, *held) + "\n\ndata: [DONE]\n\n"))
            return false;
          sink.done();
          return true;
        }
        // Nothing new for a while: an SSE comment that finds out whether the
        // client is still there.
        if (waited && !write(": waiting\n\n"))
          return false;
      }
    };
    res.set_chunked_content_provider("text/event-stream", provider, [this, job](bool) {
      if (job->state().finish.empty())
        job->cancel();
      answered();
    });
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no"); // nginx: pass each event on at once
  }

  std::string metrics() {
    const Engine::Stats e = engine.stats();
    int64_t bad, flight;
    {
      std::lock_guard lock(mutex);
      bad = rejectedBad;
      flight = inFlight;
    }
    std::string out;
    auto metric = [&](const std::string &name, const std::string &help, const std::string &type,
                      const std::string &value, const std::string &labels = "") {
      if (labels.empty() || out.find("# HELP " + name + " ") == std::string::npos)
        out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
      out += name + labels + " " + value + "\n";
    };
    metric("tinymlir_tokens_per_second", "Tokens generated per second over the last 10 seconds",
           "gauge", std::to_string(e.tokensPerSecond));
    metric("tinymlir_queue_length", "Requests waiting for a slot", "gauge",
           std::to_string(e.queued));
    metric("tinymlir_active_sequences", "Sequences being decoded", "gauge",
           std::to_string(e.active));
    metric("tinymlir_slots", "Sequences decoded together at most", "gauge",
           std::to_string(options.slots));
    metric("tinymlir_tokens_total", "Tokens generated", "counter", std::to_string(e.tokens));
    metric("tinymlir_warming_up", "1 while the start's compilations run", "gauge",
           engine.warmingUp() ? "1" : "0");
    metric("tinymlir_kernels_total", "Kernels compiled or loaded from the disk cache", "counter",
           std::to_string(model.compilations() + model.diskHits()));
    for (const char *reason : {"length", "stop", "cancelled", "error"})
      metric("tinymlir_requests_total", "Requests finished, by finish reason", "counter",
             std::to_string(e.finished.contains(reason) ? e.finished.at(reason) : 0),
             std::string("{finish_reason=\"") + reason + "\"}");
    metric("tinymlir_rejected_total", "Requests refused", "counter", std::to_string(e.refusedFull),
           "{reason=\"queue_full\"}");
    metric("tinymlir_rejected_total", "Requests refused", "counter", std::to_string(bad),
           "{reason=\"bad_request\"}");
    metric("tinymlir_rejected_total", "Requests refused", "counter",
           std::to_string(e.refusedDraining), "{reason=\"draining\"}");
    metric("tinymlir_rejected_total", "Requests refused", "counter",
           std::to_string(e.refusedWarming), "{reason=\"warming_up\"}");
    metric("tinymlir_draining", "1 once SIGTERM came: new requests get 503", "gauge",
           engine.draining() ? "1" : "0");
    metric("tinymlir_requests_in_flight", "Requests admitted and not yet answered", "gauge",
           std::to_string(flight));
    const PrefixCache::Stats &p = e.prefix;
    metric("tinymlir_prefix_cache_hits_total", "Prompts that started from a cached prefix",
           "counter", std::to_string(p.hits));
    metric("tinymlir_prefix_cache_misses_total", "Prompts that found no cached prefix", "counter",
           std::to_string(p.misses));
    metric("tinymlir_prefix_cache_tokens_saved_total",
           "Prompt positions whose keys and values came from the prefix cache", "counter",
           std::to_string(p.tokensSaved));
    metric("tinymlir_prefix_cache_positions", "Positions the prefix cache holds", "gauge",
           std::to_string(p.positions));
    metric("tinymlir_prefix_cache_evictions_total", "Prefix cache entries dropped for room",
           "counter", std::to_string(p.evicted));
    const std::string ttft = "tinymlir_time_to_first_token_seconds";
    out += "# HELP " + ttft + " From admission to the first token chosen\n# TYPE " + ttft +
           " histogram\n";
    for (size_t b = 0; b < Engine::kFirstTokenBuckets.size(); ++b) {
      std::ostringstream le;
      le << Engine::kFirstTokenBuckets[b];
      out +=
          ttft + "_bucket{le=\"" + le.str() + "\"} " + std::to_string(e.firstTokenCounts[b]) + "\n";
    }
    out += ttft + "_bucket{le=\"+Inf\"} " + std::to_string(e.firstTokens) + "\n";
    out += ttft + "_sum " + std::to_string(e.firstTokenSeconds) + "\n";
    out += ttft + "_count " + std::to_string(e.firstTokens) + "\n";
    return out;
  }

  // Debian's cpp-httplib is a compiled library whose listen() uses a backlog
  // of 5 (CPPHTTPLIB_LISTEN_BACKLOG is read when the library is built, so
  // defining it here changes nothing). A burst of 16 clients overflowed it:
  // the kernel answered with SYN cookies and reset some connections (CI, the
  // full-queue test). bind() listens again on the socket with this backlog
  // (Linux raises a listening socket's backlog in place; the kernel caps it
  // at net.core.somaxconn).
  static constexpr int kListenBacklog = 1024;
  socket_t listening = -1; ///< the socket httplib last created to bind
  std::string replica;     ///< X-Replica: options.replica, or host:port once bound

  void routes() {
    // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, with which a
    // second server on a port in use binds too and the kernel splits the
    // connections between the two.
    http.set_socket_options([this](socket_t sock) {
      const int yes = 1;
      ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
      listening = sock;
    });
    http.new_task_queue = [n = options.connections] { return new httplib::ThreadPool(n); };
    http.set_payload_max_length(1 << 20);
    http.Post("/v1/completions", [this](const httplib::Request &req, httplib::Response &res) {
      completions(req, res);
    });
    // Readiness: 503 (Retry-After) while compiling at start or draining.
    http.Get("/health", [this](const httplib::Request &, httplib::Response &res) {
      const bool draining = engine.draining(), warming = engine.warmingUp();
      const Engine::Stats e = engine.stats();
      const char *status = draining ? "draining" : warming ? "warming_up" : "ok";
      if (draining || warming) {
        res.status = 503;
        res.set_header("Retry-After", draining ? "5" : "2");
      }
      res.set_content(dump({{"status", status},
                            {"warming_up", warming},
                            {"draining", draining},
                            {"slots", options.slots},
                            {"active", e.active},
                            {"queue", e.queued}}),
                      "application/json");
    });
    // Liveness: the process answers (whatever it is doing).
    http.Get("/live", [](const httplib::Request &, httplib::Response &res) {
      res.set_content(R"({"status":"alive"})", "application/json");
    });
    http.set_post_routing_handler([this](const httplib::Request &, httplib::Response &res) {
      res.set_header("X-Replica", replica);
    });
    http.Get("/metrics", [this](const httplib::Request &, httplib::Response &res) {
      res.set_content(metrics(), "text/plain; version=0.0.4");
    });
  }
};

Server::Server(const Model &model, const Tokenizer &tokenizer, ServerOptions options)
    : impl_(std::make_unique<Impl>(model, tokenizer, std::move(options))) {}

Server::~Server() { stop(); }

int Server::bind() {
  Impl &s = *impl_;
  const int port =
      s.options.port == 0
          ? s.http.bind_to_any_port(s.options.host)
          : (s.http.bind_to_port(s.options.host, s.options.port) ? s.options.port : -1);
  if (port < 0)
    throw Error("[server] cannot listen on " + s.options.host + ":" +
                std::to_string(s.options.port) + " (in use, or not an address of this machine)");
  s.replica =
      s.options.replica.empty() ? s.options.host + ":" + std::to_string(port) : s.options.replica;
  if (::listen(s.listening, Impl::kListenBacklog) != 0)
    throw Error("[server] cannot listen on " + s.options.host + ":" + std::to_string(port) +
                " with a backlog of " + std::to_string(Impl::kListenBacklog) + ": " +
                std::strerror(errno));
  return port;
}

void Server::run() {
  Impl &s = *impl_;
  s.engine.start();
  s.http.listen_after_bind();
  stop();
  s.engine.join();
}

void Server::drain() { impl_->engine.drain(); }

bool Server::idle() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->inFlight == 0;
}

void Server::stop() {
  impl_->engine.stop();
  impl_->http.stop();
}

} // namespace tinymlir::gpt2
