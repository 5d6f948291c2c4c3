// The call boundary (Call.h).
#include "runtime/Call.h"
#include "runtime/Settings.h"

#include "core/MemoryTracking.h"

#include <tinymlir/interrupt.h>

#include <cblas.h>

#include <atomic>
#include <csetjmp>
#include <csignal>
#include <cstdlib>
#include <mutex>

#include <sys/syscall.h>
#include <unistd.h>
#include <optional>
#include <unordered_set>

extern "C" void omp_set_num_threads(int threads);
extern "C" int omp_get_num_procs();
extern "C" void kmp_set_defaults(const char *settings);
// OpenBLAS's: stops its worker threads (they are started again only by a
// threaded call, and it makes none at one thread).
extern "C" void blas_thread_shutdown_();

namespace tinymlir {
namespace detail {
namespace {

std::string describe(DType dtype, const Shape &shape) {
  return std::string(dtypeName(dtype)) + " " + shapeString(shape);
}

template <class T> int64_t firstOutside(const T *p, int64_t n, int64_t lo, int64_t size) {
  for (int64_t k = 0; k < n; ++k)
    if (static_cast<int64_t>(p[k]) < lo || static_cast<int64_t>(p[k]) >= size)
      return k;
  return n;
}

/// The position of the first id outside [lo, size) (ids.size() if none):
/// contiguous int64 and int32 ids (the gathers' and the constant index
/// arrays' kinds) scanned directly; others through at(), which allocates.
int64_t firstOutside(const Array &ids, int64_t lo, int64_t size) {
  if (ids.dtype() == DType::i64 && ids.isContiguous())
    return firstOutside(static_cast<const int64_t *>(ids.data()), ids.size(), lo, size);
  if (ids.dtype() == DType::i32 && ids.isContiguous())
    return firstOutside(static_cast<const int32_t *>(ids.data()), ids.size(), lo, size);
  for (int64_t k = 0; k < ids.size(); ++k)
    if (double id = ids.at({k}); !(id >= static_cast<double>(lo) && id < static_cast<double>(size)))
      return k;
  return ids.size();
}

/// This thread's first kernel error of the current call.
std::optional<Error> &kernelError() {
  thread_local std::optional<Error> error;
  return error;
}

// --- Ctrl-C --------------------------------------------------------------------
//
// During an interruptible call on the main thread, SIGINT sets a flag; the
// kernel's loops poll it (tinymlir_poll) and leave through a longjmp to the
// call, which then throws. Only the main thread (where Python raises
// KeyboardInterrupt) installs the handler, so no two calls swap it at once.

std::atomic<int> interruptRequested{0};
thread_local std::jmp_buf *pollTarget = nullptr;

void onInterrupt(int) { interruptRequested.store(1, std::memory_order_relaxed); }

/// SIGINT's handler while an interruptible call runs on the main thread.
class InterruptScope {
public:
  explicit InterruptScope(bool interruptible) {
    if (!interruptible || getpid() != static_cast<pid_t>(syscall(SYS_gettid)))
      return;
    struct sigaction ours = {};
    ours.sa_handler = onInterrupt;
    sigemptyset(&ours.sa_mask);
    if (sigaction(SIGINT, &ours, &previous_) != 0)
      return;
    if (previous_.sa_handler == SIG_IGN) { // ignored: it stays ignored
      sigaction(SIGINT, &previous_, nullptr);
      return;
    }
    interruptRequested.store(0, std::memory_order_relaxed);
    installed_ = true;
  }
  ~InterruptScope() {
    if (installed_)
      sigaction(SIGINT, &previous_, nullptr);
  }
  InterruptScope(const InterruptScope &) = delete;
  InterruptScope &operator=(const InterruptScope &) = delete;
  /// Whether SIGINT arrived (the flag, cleared).
  bool interrupted() const {
    return installed_ && interruptRequested.exchange(0, std::memory_order_relaxed) != 0;
  }

private:
  bool installed_ = false;
  struct sigaction previous_ = {};
};

/// Runs the kernel; false where tinymlir_poll left it.
[[gnu::noinline]] bool runPolled(void (*entry)(void **), void **args) {
  std::jmp_buf target;
  std::jmp_buf *const outer = pollTarget;
  pollTarget = &target;
  if (setjmp(target) != 0) {
    pollTarget = outer;
    return false;
  }
  entry(args);
  pollTarget = outer;
  return true;
}

} // namespace

extern "C" void tinymlir_poll() {
  if (pollTarget && interruptRequested.load(std::memory_order_relaxed))
    std::longjmp(*pollTarget, 1);
}

void callNative(const NativeFunction &c, const std::vector<Array> &inputs,
                std::vector<Array> &outputs) {
  if (c.hooks.before)
    c.hooks.before();
  if (inputs.size() != c.inputShapes.size())
    throw Error("[call] expected " + std::to_string(c.inputShapes.size()) + " inputs, got " +
                std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].shape() != c.inputShapes[i] || inputs[i].dtype() != c.inputDTypes[i])
      throw Error("[call] input " + std::to_string(i) + " is " +
                      describe(inputs[i].dtype(), inputs[i].shape()) +
                      " but this specialization was compiled for " +
                      describe(c.inputDTypes[i], c.inputShapes[i]),
                  inputs[i].dtype() != c.inputDTypes[i] ? ErrorKind::Type : ErrorKind::Value);
  if (outputs.size() != c.resultShapes.size())
    throw Error("[call] expected " + std::to_string(c.resultShapes.size()) + " outputs, got " +
                std::to_string(outputs.size()));
  for (size_t k = 0; k < outputs.size(); ++k) {
    const Array &out = outputs[k];
    if (out.shape() != c.resultShapes[k] || out.dtype() != c.resultDTypes[k] || !out.isContiguous())
      throw Error("[call] output " + std::to_string(k) + " must be a contiguous " +
                  describe(c.resultDTypes[k], c.resultShapes[k]) + " array, got " +
                  describe(out.dtype(), out.shape()));
    for (size_t j = 0; j < k; ++j)
      if (numElements(out.shape()) > 0 && out.overlaps(outputs[j]))
        throw Error("[call] outputs " + std::to_string(j) + " and " + std::to_string(k) +
                    " share memory; each output needs its own array");
  }
  for (const NativeFunction::IndexCheck &check : c.indexChecks) {
    const Array &ids = check.constant ? *check.constant : inputs[check.input];
    // Gather ids count from the end when negative, as NumPy's.
    const int64_t lo = check.axis < 0 ? -check.size : 0;
    if (const int64_t k = firstOutside(ids, lo, check.size); k < ids.size()) {
      double id = ids.at({k});
      const std::string at = std::to_string(static_cast<int64_t>(id)) + " at position " +
                             std::to_string(k) + " is outside ";
      if (check.axis < 0)
        throw Error("[gather] id " + at + "the table of " + std::to_string(check.size) + " rows",
                    ErrorKind::Index);
      throw Error("[index_put] index " + at + "axis " + std::to_string(check.axis) + " of size " +
                      std::to_string(check.size),
                  ErrorKind::Index);
    }
  }
  // The output each input is donated to (its buffer), if any.
  std::vector<int> outputOf(inputs.size(), -1);
  for (size_t k = 0; k < c.donated.size(); ++k) {
    const int i = c.donated[k];
    if (i < 0)
      continue;
    const Array &d = inputs[i];
    if (d.data() != outputs[k].data() || d.strides() != outputs[k].strides())
      throw Error("[call] input " + std::to_string(i) +
                  " is updated in place: this specialization needs it to be output " +
                  std::to_string(k) + "'s array");
    outputOf[i] = static_cast<int>(k);
  }

  // Contiguous inputs that overlap neither each other nor an output: the
  // promise `restrict` makes to bufferization. The arrays are referred to,
  // and copied only where they are not such (strided, or overlapping); the
  // descriptors share one scratch buffer of this thread (a warm call of a
  // small kernel allocates nothing here).
  thread_local std::vector<const Array *> all;
  thread_local std::vector<Array> copies;
  all.clear();
  copies.clear();
  // At most one copy per input or constant (a contiguous copy is new memory,
  // which overlaps nothing); reserved, so that `all` can point into it.
  copies.reserve(inputs.size() + c.constants.size());
  auto own = [&](Array a) { return &copies.emplace_back(std::move(a)); };
  for (size_t i = 0; i < inputs.size(); ++i) // a donated input is its output
    all.push_back(outputOf[i] >= 0           ? &outputs[outputOf[i]]
                  : inputs[i].isContiguous() ? &inputs[i]
                                             : own(inputs[i].contiguous()));
  for (const Array &a : c.constants)
    all.push_back(a.isContiguous() ? &a : own(a.contiguous()));
  for (size_t i = 0; i < all.size(); ++i) {
    if (i < inputs.size() && outputOf[i] >= 0)
      continue;
    bool overlapping = false;
    for (const Array &out : outputs)
      overlapping = overlapping || all[i]->overlaps(out);
    for (size_t j = 0; j < i && !overlapping; ++j)
      overlapping = all[i]->overlaps(*all[j]);
    if (overlapping)
      all[i] = own(all[i]->copy());
  }
  for (const Array &out : outputs)
    all.push_back(&out);

  // Ranked memref descriptors {allocated, aligned, offset, sizes[R], strides[R]}.
  thread_local std::vector<int64_t> flat;
  thread_local std::vector<void *> pointers, args;
  flat.clear();
  pointers.clear();
  args.clear();
  size_t words = 0;
  for (const Array *a : all)
    words += 3 + 2 * a->shape().size();
  flat.reserve(words); // no reallocation below: pointers point in
  for (const Array *a : all) {
    pointers.push_back(flat.data() + flat.size());
    auto pointer = reinterpret_cast<int64_t>(a->data());
    flat.push_back(pointer);
    flat.push_back(pointer);
    flat.push_back(0);
    flat.insert(flat.end(), a->shape().begin(), a->shape().end());
    flat.insert(flat.end(), a->strides().begin(), a->strides().end());
  }
  for (void *&p : pointers)
    args.push_back(&p);
  kernelError().reset();
  bool interrupted = false;
  if (c.interruptible) {
    InterruptScope scope(true);
    std::unordered_set<void *> live; // the kernel's temporaries, freed if it is left
    trackAllocations(&live);
    const bool finished = runPolled(c.entry, args.data());
    trackAllocations(nullptr);
    if (!finished)
      for (void *block : live)
        freeMemory(block);
    interrupted = scope.interrupted() || !finished;
  } else {
    c.entry(args.data());
  }
  copies.clear(); // the copies' memory goes now, not at the next call
  if (c.hooks.after)
    c.hooks.after(); // e.g. CUDA errors recorded during the call
  if (interrupted) {
    kernelError().reset();
    throw Interrupted("[call] interrupted (Ctrl-C) while the kernel ran; nothing was written back");
  }
  if (std::optional<Error> e = std::move(kernelError())) {
    kernelError().reset();
    throw *e;
  }
}

void reportKernelError(ErrorKind kind, const std::string &message) {
  if (!kernelError())
    kernelError() = Error(message, kind);
}

void prepareThreads() {
  // OpenMP's workers spin 200 ms after each parallel loop by default, taking
  // the cores from the next call's work; 1 ms keeps them responsive without
  // that. A user's KMP_BLOCKTIME wins.
  //
  // OpenBLAS runs on one thread: products are split over the OpenMP team
  // (Gemm.h). The workers it started when it loaded (OPENBLAS_NUM_THREADS or
  // all cores) are stopped: each spins on sched_yield for about 0.1 s after
  // it starts and after each job, which cost a warm first token 15-25 ms of
  // its 0.16 s on 2 cores.
  static std::once_flag once;
  std::call_once(once, [] {
    if (!settings::blocktimeGiven())
      kmp_set_defaults("KMP_BLOCKTIME=1");
    openblas_set_num_threads(1);
    blas_thread_shutdown_();
  });
}

void setRuntimeThreads(int threads) {
  prepareThreads();
  int n = threads > 0 ? threads : omp_get_num_procs();
  omp_set_num_threads(n);
}

} // namespace detail
} // namespace tinymlir
