// jit(f): trace a C++ function of Tensors, compile it with MLIR, run it natively.
//
//   Tensor gelu(const Tensor &x);
//   auto compiled = jit(gelu);
//   Array y = compiled(x);                        // compiles once per specialization
//   std::cout << compiled.compile(x).optimized(); // the fused module
//
// Arguments are trees: Tensor leaves (Arrays convert implicitly), std::vector,
// std::array, std::tuple, std::pair, std::map<std::string, T>, and structs that
// list their fields with TINYMLIR_FIELDS. Numbers, bools, strings and enums are
// static arguments: part of the specialization key, not runtime inputs.
// Called with traced Tensors while another function is being traced, a jitted
// function is inlined into that graph.
#pragma once

#include <tinymlir/key.h>
#include <tinymlir/options.h>
#include <tinymlir/tensor.h>

#include <array>
#include <cstdio>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace tinymlir {

/// One compiled specialization: the modules of every stage and native code.
class Compiled {
public:
  /// As built from the graph, on tensors.
  const std::string &module() const;
  /// After canonicalize, cse and elementwise fusion.
  const std::string &optimized() const;
  /// After bufferization (before the BLAS rewrite: matmuls still linalg).
  const std::string &bufferized() const;
  /// The LLVM dialect module given to the execution engine.
  const std::string &lowered() const;
  /// Calls the native code: inputs in flattened-argument order (captured
  /// constants are appended internally). Checks shapes and dtypes first.
  /// One result; callAll returns each of several.
  Array call(const std::vector<Array> &inputs) const;
  /// Every result, in order.
  std::vector<Array> callAll(const std::vector<Array> &inputs) const;
  /// Calls into a caller-provided output of the result's shape and dtype.
  void callInto(const std::vector<Array> &inputs, Array &output) const;
  /// Calls into caller-provided outputs, one per result (contiguous, of
  /// distinct memory); a donated input's output must be that input's array.
  void callInto(const std::vector<Array> &inputs, std::vector<Array> &outputs) const;
  /// The input updated in place as the (first) result, or -1: see
  /// compileGraph's `donated`.
  int donated() const;
  /// For each result, the input updated in place as that result, or -1.
  const std::vector<int> &donations() const;
  const std::vector<Shape> &inputShapes() const;
  const std::vector<DType> &inputDTypes() const;
  /// The (first) result's shape and dtype.
  const Shape &resultShape() const;
  DType resultDType() const;
  /// Each result's.
  const std::vector<Shape> &resultShapes() const;
  const std::vector<DType> &resultDTypes() const;
  /// Seconds spent building, optimizing, lowering and JIT-compiling.
  double compileSeconds() const;
  /// How many matrix products the BLAS rewrite replaced with GEMM calls.
  int blasCalls() const;
  Target target() const;
  /// Whether the native code came from the disk cache (nothing was compiled).
  bool fromDiskCache() const;
  /// GPU target: the module with kernels outlined, and the PTX for sm_90.
  const std::string &gpuModule() const;
  const std::string &ptx() const;

  struct Impl;
  explicit Compiled(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

private:
  std::shared_ptr<const Impl> impl_;
};

/// Threads for compiled code (its parallel loops, via OpenMP) and for BLAS.
/// 0: the runtime's default (all cores, or OMP_NUM_THREADS).
void setThreads(int threads);
/// The BLAS that products of code compiled with numpy_blas (the default) run
/// on: NumPy's OpenBLAS where the process has loaded it (one BLAS thread pool
/// with NumPy's; "numpy: " and its configuration), else tinymlir's own
/// ("own: ..."), as after setThreads(1).
std::string blasLibrary();
/// Products run on NumPy's OpenBLAS so far in this process (each of a batch).
uint64_t numpyBlasProducts();

/// Compiles `results` as one function of `args` (placeholders from
/// tracing), with one output per result: a multi-result kernel.
/// `donated` (empty, or one entry per result) names for each result an input
/// it updates in place (on the CPU), or -1: where that result is the input
/// updated (by indexPut or slice updates), the call's output for it must be
/// that input's array, and only what changes is written. Other results, and
/// graphs with kernels that can fail while they run (which would leave an
/// input half written), ignore it: Compiled::donations() says which.
Compiled compileGraph(const std::vector<Tensor> &results, const std::vector<Tensor> &args,
                      const JitOptions &options = JitOptions(),
                      const std::vector<int> &donated = {});
/// One result: `donated` as above, for it.
Compiled compileGraph(const Tensor &result, const std::vector<Tensor> &args,
                      const JitOptions &options = JitOptions(), int donated = -1);
/// Compiles and runs a tensor built from concrete tensors (eager use).
Array evaluate(const Tensor &result, const JitOptions &options = JitOptions());
/// The whole pass pipeline that takes the `module` stage to the `lowered`
/// stage for these options, as `tinymlir-opt --pass-pipeline` accepts it.
std::string printablePipeline(const JitOptions &options = JitOptions());

struct CacheStats {
  size_t hits = 0;
  size_t compilations = 0;
  /// Specializations whose code came from the disk cache instead of compiling.
  size_t diskHits = 0;
  size_t evictions = 0;
  size_t size = 0;
  /// Seconds spent compiling the specializations counted above.
  double compileSeconds = 0;
};

namespace detail {

/// What a cache entry says of itself, for CacheStats: a Compiled's own
/// figures. Other entry types (Python's) overload these beside their type.
inline double compileSecondsOf(const Compiled &c) { return c.compileSeconds(); }
inline bool fromDiskCacheOf(const Compiled &c) { return c.fromDiskCache(); }

/// The specialization cache of one jitted function (thread-safe, LRU), keyed
/// by the text of a call's tree, shapes, dtypes, statics and options. One
/// cache serves C++ (Value = Compiled) and Python (a compiled Specialization
/// object, python/src/module.cpp).
template <class Value> class BasicCache {
public:
  /// Awaits a compilation under way in another thread (Python's releases
  /// the GIL meanwhile); the default blocks.
  using Await = std::function<void(const std::shared_future<Value> &)>;

  void insert(const std::string &key, const Value &value, size_t limit) {
    std::lock_guard lock(mutex_);
    if (fromDiskCacheOf(value))
      ++stats_.diskHits;
    else
      ++stats_.compilations;
    stats_.compileSeconds += compileSecondsOf(value);
    entries_.insert_or_assign(key, Entry{value, ++clock_});
    evictLocked(limit);
  }

  /// The entry for `key`, or `compile()`'s result, inserted. Threads asking
  /// for a key being compiled wait for that compilation (once per key); if it
  /// throws, each waiter gets the error and the next call compiles again.
  Value findOrCompile(const std::string &key, size_t limit, const std::function<Value()> &compile,
                      const Await &await = nullptr) {
    std::unique_lock lock(mutex_);
    if (auto it = entries_.find(key); it != entries_.end()) {
      it->second.lastUse = ++clock_;
      ++stats_.hits;
      return it->second.value;
    }
    if (auto it = inFlight_.find(key); it != inFlight_.end()) {
      std::shared_future<Value> pending = it->second;
      ++stats_.hits; // served by the compilation under way
      lock.unlock();
      if (await)
        await(pending);
      return pending.get(); // rethrows the compiler's error
    }
    std::promise<Value> promise;
    inFlight_.emplace(key, promise.get_future().share());
    lock.unlock();
    try {
      Value value = compile();
      insert(key, value, limit);
      promise.set_value(value);
      std::lock_guard done(mutex_);
      inFlight_.erase(key);
      return value;
    } catch (...) {
      promise.set_exception(std::current_exception());
      std::lock_guard failed(mutex_);
      inFlight_.erase(key);
      throw;
    }
  }

  /// The entry for `key` (a hit), or nothing (a miss is not counted: the
  /// caller goes on to findOrCompile).
  std::optional<Value> find(const std::string &key) {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end())
      return std::nullopt;
    it->second.lastUse = ++clock_;
    ++stats_.hits;
    return it->second.value;
  }

  /// Whether `key`'s code is here, to be called without compiling.
  bool contains(const std::string &key) const {
    std::lock_guard lock(mutex_);
    return entries_.contains(key);
  }
  /// Drops the least recently used entries beyond `limit` (0: no limit).
  void evict(size_t limit) {
    std::lock_guard lock(mutex_);
    evictLocked(limit);
  }
  CacheStats stats() const {
    std::lock_guard lock(mutex_);
    CacheStats s = stats_;
    s.size = entries_.size();
    return s;
  }
  void clear() {
    std::lock_guard lock(mutex_);
    entries_.clear();
  }

private:
  void evictLocked(size_t limit) {
    while (limit > 0 && entries_.size() > limit) {
      auto oldest = entries_.begin();
      for (auto it = entries_.begin(); it != entries_.end(); ++it)
        if (it->second.lastUse < oldest->second.lastUse)
          oldest = it;
      entries_.erase(oldest);
      ++stats_.evictions;
    }
  }

  struct Entry {
    Value value;
    uint64_t lastUse;
  };
  mutable std::mutex mutex_;
  std::map<std::string, Entry> entries_;
  std::map<std::string, std::shared_future<Value>> inFlight_;
  uint64_t clock_ = 0;
  CacheStats stats_;
};

using Cache = BasicCache<Compiled>;

// --- Argument trees -------------------------------------------------------

template <class T> struct IsVector : std::false_type {};
template <class T, class A> struct IsVector<std::vector<T, A>> : std::true_type {};
template <class T> struct IsStdArray : std::false_type {};
template <class T, size_t N> struct IsStdArray<std::array<T, N>> : std::true_type {};
template <class T> struct IsTuple : std::false_type {};
template <class... T> struct IsTuple<std::tuple<T...>> : std::true_type {};
template <class A, class B> struct IsTuple<std::pair<A, B>> : std::true_type {};
template <class T> struct IsStringMap : std::false_type {};
template <class T, class C, class A>
struct IsStringMap<std::map<std::string, T, C, A>> : std::true_type {};
template <class T>
concept HasFields = requires(T &t) { tinymlir_fields(t); };

/// Walks an argument tree, calling v.tensor(Tensor&) on leaves and, where
/// the visitor has a `key` (a KeyWriter), writing the tree's key items
/// (key.h's grammar) for its structure and static values.
template <class V, class T> void walk(T &x, V &v) {
  auto key = [&](auto write) {
    if constexpr (requires { v.key; })
      write(v.key);
  };
  if constexpr (std::is_same_v<T, Tensor>) {
    v.tensor(x);
  } else if constexpr (std::is_same_v<T, Array>) {
    static_assert(alwaysFalse<T>, "tinymlir: take Tensor, not Array, in a jitted function's "
                                  "arguments (Arrays convert to Tensors at the call)");
  } else if constexpr (std::is_same_v<T, bool>) {
    key([&](KeyWriter &k) { k.boolean(x); });
  } else if constexpr (std::is_integral_v<T> || std::is_enum_v<T>) {
    key([&](KeyWriter &k) { k.integer(static_cast<long long>(x)); });
  } else if constexpr (std::is_floating_point_v<T>) {
    key([&](KeyWriter &k) { k.real(static_cast<double>(x)); });
  } else if constexpr (std::is_same_v<T, std::string>) {
    key([&](KeyWriter &k) { k.string(x); });
  } else if constexpr (IsVector<T>::value || IsStdArray<T>::value) {
    key([&](KeyWriter &k) { k.open('['); });
    for (auto &item : x)
      walk(item, v);
    key([&](KeyWriter &k) { k.close(']'); });
  } else if constexpr (IsTuple<T>::value) {
    key([&](KeyWriter &k) { k.open('('); });
    std::apply([&](auto &...items) { (walk(items, v), ...); }, x);
    key([&](KeyWriter &k) { k.close(')'); });
  } else if constexpr (IsStringMap<T>::value) {
    key([&](KeyWriter &k) { k.open('{'); });
    for (auto &[name, item] : x) {
      key([&](KeyWriter &k) { k.keyword(name); });
      walk(item, v);
    }
    key([&](KeyWriter &k) { k.close('}'); });
  } else if constexpr (HasFields<T>) {
    key([&](KeyWriter &k) { k.open('<'); });
    auto fields = tinymlir_fields(x);
    std::apply([&](auto &...items) { (walk(items, v), ...); }, fields);
    key([&](KeyWriter &k) { k.close('>'); });
  } else {
    static_assert(alwaysFalse<T>,
                  "tinymlir: unsupported argument type in a jitted function; use Tensor, "
                  "numbers, strings, std::vector/array/tuple/pair, std::map<std::string, T>, or "
                  "a struct declared with TINYMLIR_FIELDS");
  }
}

/// Collects the key and the arrays of a concrete argument tree.
struct Flattener {
  KeyWriter key;
  std::vector<Array> leaves;
  void tensor(Tensor &t);
};

/// Replaces the tensor leaves of a copy of the tree with placeholders.
struct Placer {
  std::vector<Tensor> args;
  void tensor(Tensor &t);
};

template <class F> struct FunctionTraits : FunctionTraits<decltype(&F::operator())> {};
template <class R, class... P> struct FunctionTraits<R (*)(P...)> {
  using Params = std::tuple<std::decay_t<P>...>;
};
template <class R, class... P> struct FunctionTraits<R (&)(P...)> : FunctionTraits<R (*)(P...)> {};
template <class C, class R, class... P>
struct FunctionTraits<R (C::*)(P...) const> : FunctionTraits<R (*)(P...)> {};
template <class C, class R, class... P>
struct FunctionTraits<R (C::*)(P...)> : FunctionTraits<R (*)(P...)> {};

/// A jitted function's results: one Tensor, a std::vector of them, or a
/// std::tuple of them (a multi-result kernel, one output per Tensor).
template <class R> struct Results {
  static_assert(alwaysFalse<R>, "tinymlir: a jitted function returns a Tensor, a "
                                "std::vector<Tensor> or a std::tuple of Tensors");
};
template <> struct Results<Tensor> {
  static std::vector<Tensor> tensors(const Tensor &r) { return {r}; }
  static Tensor rebuild(std::vector<Array> &&arrays) { return Tensor(std::move(arrays[0])); }
};
template <> struct Results<std::vector<Tensor>> {
  static std::vector<Tensor> tensors(const std::vector<Tensor> &r) { return r; }
  static std::vector<Tensor> rebuild(std::vector<Array> &&arrays) {
    return std::vector<Tensor>(arrays.begin(), arrays.end());
  }
};
template <class... T> struct Results<std::tuple<T...>> {
  static_assert((std::is_same_v<T, Tensor> && ...), "tinymlir: a tuple of results holds Tensors");
  static std::vector<Tensor> tensors(const std::tuple<T...> &r) {
    return std::apply([](const auto &...t) { return std::vector<Tensor>{t...}; }, r);
  }
  static std::tuple<T...> rebuild(std::vector<Array> &&arrays) {
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return std::tuple<T...>(Tensor(std::move(arrays[I]))...);
    }(std::index_sequence_for<T...>());
  }
};

} // namespace detail

/// A jitted function: call it with Arrays (runs compiled code) or, while
/// tracing another function, with Tensors (inlines). A function that returns
/// a std::vector or std::tuple of Tensors compiles to one kernel with an
/// output per Tensor, and a call returns the same structure.
template <class F> class Jit {
public:
  using Params = typename detail::FunctionTraits<F>::Params;
  /// Tensor, std::vector<Tensor> or std::tuple<Tensor...>: what f returns.
  using Result =
      std::decay_t<decltype(std::apply(std::declval<const F &>(), std::declval<Params &>()))>;

  explicit Jit(F f, JitOptions options = JitOptions())
      : f_(std::move(f)), options_(options), cache_(std::make_shared<detail::Cache>()) {}

  template <class... A> Result operator()(A &&...args) const {
    Params params(std::forward<A>(args)...);
    if (detail::tracing())
      return std::apply(f_, params);
    std::vector<Array> leaves;
    Compiled compiled = specialize(params, leaves);
    return detail::Results<Result>::rebuild(compiled.callAll(leaves));
  }

  /// Calls into `out`, an array of the result's type. When `out` is one of
  /// the arguments (the same array) and the result is that argument updated
  /// by indexPut, the update happens in place (CPU target): the compiled code
  /// writes only the elements that change. Any other result into an argument is computed
  /// as NumPy's out= does: as if the argument were read before being overwritten.
  template <class... A>
  void into(Array &out, A &&...args) const
    requires std::is_same_v<Result, Tensor>
  {
    if (detail::tracing())
      throw Error("[jit] into() runs compiled code; call the function itself while tracing");
    Params params(std::forward<A>(args)...);
    std::vector<Array> leaves;
    specialize(params, leaves, &out).callInto(leaves, out);
  }

  /// The specialization for these arguments, compiled if not cached yet.
  template <class... A> Compiled compile(A &&...args) const {
    Params params(std::forward<A>(args)...);
    std::vector<Array> leaves;
    return specialize(params, leaves);
  }
  /// The specialization into(out, args...) calls.
  template <class... A> Compiled compileInto(const Array &out, A &&...args) const {
    Params params(std::forward<A>(args)...);
    std::vector<Array> leaves;
    return specialize(params, leaves, &out);
  }

  /// Whether the specialization for these arguments is compiled and in
  /// memory: a call would not compile or load it (nothing is compiled here).
  template <class... A> bool compiled(A &&...args) const {
    Params params(std::forward<A>(args)...);
    detail::Flattener flat;
    detail::walk(params, flat);
    return cache_->contains(key(flat, -1));
  }

  /// The result's shape and dtype for these arguments, by tracing alone
  /// (nothing is compiled): to plan the specializations a program will need.
  template <class... A>
  std::pair<Shape, DType> resultType(A &&...args) const
    requires std::is_same_v<Result, Tensor>
  {
    Params traced(std::forward<A>(args)...);
    detail::Placer placer;
    detail::walk(traced, placer);
    detail::TraceScope scope;
    Tensor result = std::apply(f_, traced);
    return {result.shape(), result.dtype()};
  }

  CacheStats stats() const { return cache_->stats(); }
  void clearCache() const { cache_->clear(); }
  const JitOptions &options() const { return options_; }

private:
  /// With `out`, the argument that is `out` (if any) is updated in place.
  Compiled specialize(Params &params, std::vector<Array> &leaves,
                      const Array *out = nullptr) const {
    detail::Flattener flat;
    detail::walk(params, flat);
    leaves = std::move(flat.leaves);
    int donated = -1;
    for (size_t i = 0; out && donated < 0 && i < leaves.size(); ++i)
      if (leaves[i].data() == out->data() && leaves[i].shape() == out->shape() &&
          leaves[i].strides() == out->strides() && leaves[i].dtype() == out->dtype())
        donated = static_cast<int>(i);
    return cache_->findOrCompile(key(flat, donated), options_.cacheLimit, [&] {
      Params traced = params;
      detail::Placer placer;
      detail::walk(traced, placer);
      std::vector<Tensor> results;
      {
        detail::TraceScope scope;
        results = detail::Results<Result>::tensors(std::apply(f_, traced));
      }
      return compileGraph(results, placer.args, options_,
                          donated < 0 ? std::vector<int>() : std::vector<int>{donated});
    });
  }

  std::string key(const detail::Flattener &flat, int donated) const {
    KeyWriter key = flat.key;
    key.options(detail::optionsKey(options_) +
                (donated >= 0 ? "@into" + std::to_string(donated) : ""));
    return key.text();
  }

  F f_;
  JitOptions options_;
  std::shared_ptr<detail::Cache> cache_;
};

template <class F> Jit<std::decay_t<F>> jit(F &&f, JitOptions options = JitOptions()) {
  return Jit<std::decay_t<F>>(std::forward<F>(f), options);
}

} // namespace tinymlir

/// Declares the fields of a struct so it can be a jitted function's argument:
///   struct Block { Tensor w, b; int heads; };  TINYMLIR_FIELDS(Block, w, b, heads)
/// (at namespace scope, in the struct's namespace).
#define TINYMLIR_FIELDS(Type, ...)                                                                 \
  inline auto tinymlir_fields(Type &self) {                                                        \
    auto &[__VA_ARGS__] = self;                                                                    \
    return std::tie(__VA_ARGS__);                                                                  \
  }
