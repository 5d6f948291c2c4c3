// compileGraph, the compiler driver: graph -> MLIR (builder) -> optimized ->
// bufferized -> the target's lowering (targets) -> native code (LLVM's JIT),
// with the disk cache in front of it. The call itself is the runtime's
// (runtime/Call.cpp).
#include "builder/MLIRGen.h"
#include "jit/DiskCache.h"
#include "jit/ObjectCode.h"
#include "passes/Pipeline.h"
#include "runtime/Call.h"
#include "targets/Target.h"

#include <tinymlir/jit.h>

#include <mlir/ExecutionEngine/ExecutionEngine.h>

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/ProgramStack.h>
#include <llvm/Support/Signals.h>
#include <llvm/Target/TargetMachine.h>

#include <chrono>
#include <exception>
#include <optional>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace tinymlir {

struct Compiled::Impl {
  detail::NativeFunction native;
  std::string module, optimized, bufferized, lowered;
  detail::TargetStages stages;
  std::unique_ptr<mlir::ExecutionEngine> engine;
  std::unique_ptr<llvm::orc::LLJIT> loaded; // code from the disk cache
  double seconds = 0;
  int blasCalls = 0;
  Target target = Target::CPU;
  bool fromDisk = false;
};

namespace {

// LLVM registers its signal handlers the first time a file is written through
// a ToolOutputFile (the disk cache's objects), with an alternate signal stack
// for the thread that writes: often a short-lived compile thread, whose exit
// then fails under AddressSanitizer (it unmaps that stack as its own) or
// leaks it. Registered when the library loads, on the loading thread.
[[maybe_unused]] const bool kSignalHandlersRegistered = [] {
  llvm::sys::AddSignalHandler([](void *) {}, nullptr);
  return true;
}();

using detail::CompileTarget;
using detail::Node;
using detail::NodePtr;

llvm::orc::SymbolMap symbolMap(const detail::RuntimeSymbols &symbols,
                               llvm::orc::MangleAndInterner interner) {
  llvm::orc::SymbolMap map;
  for (const detail::RuntimeSymbol &s : symbols)
    map[interner(s.name)] = {llvm::orc::ExecutorAddr::fromPtr(s.address),
                             llvm::JITSymbolFlags::Exported};
  return map;
}

/// Gather ids and index_put positions must be inputs, so that they can be
/// checked before native code runs; index_put's row loop must run on the host.
void findIndexInputs(const NodePtr &root, const CompileTarget &target,
                     std::vector<detail::NativeFunction::IndexCheck> &out) {
  // Ids that are an input are checked at each call; a captured constant
  // (constant index arrays' positions) the same way, from its own array.
  auto check = [&](const Node &n, const Node &ids, const char *what, int64_t size, int axis) {
    if (ids.op == Op::Constant) {
      out.push_back({0, size, axis, ids.constant});
      return;
    }
    if (ids.op != Op::Argument)
      throw Error(std::string("[") + opName(n.op) + "] " + what +
                  " must be an input of the compiled function (they are checked against the "
                  "sizes before each call); got a computed " +
                  opName(ids.op) + " value");
    out.push_back({static_cast<size_t>(ids.index), size, axis});
  };
  detail::forEachNode(root, [&](const Node &node) { // loop bodies too
    const Node *n = &node;
    if (n->op == Op::Loop && !target.hostLoops())
      throw Error("[gpu] loops are not supported on the GPU target yet; compile it for the CPU");
    if (detail::hasSymbolic(n->shape) && !target.hostLoops())
      throw Error(std::string("[") + opName(n->op) + "] the " + target.name() +
                  " target has no sizes known only when the kernel runs (a slice with traced "
                  "bounds) yet; compile it for the CPU");
    if (n->op == Op::Gather)
      check(*n, *n->args[1], "ids", n->args[0]->shape[0], -1);
    if (isComplex(n->dtype) && !target.hostLoops())
      throw Error(std::string("[") + opName(n->op) + "] the " + target.name() + " target has no " +
                  dtypeName(n->dtype) +
                  " (complex arithmetic is lowered for the CPU only); compile it for the CPU");
    if (detail::isRowKernel(n->op) && !target.hostLoops())
      throw Error(std::string("[") + opName(n->op) + "] the " + target.name() +
                  " target cannot run it (a host function along rows); compile it for the CPU");
    if (n->op == Op::Slice && detail::tracedPositions(*n) > 0 && !target.hostLoops())
      throw Error(std::string("[slice] the ") + target.name() +
                  " target cannot run it (an element at a traced position, checked on the "
                  "host); compile it for the CPU");
    if (n->op == Op::SliceUpdate && !target.hostLoops())
      throw Error(std::string("[slice_update] the ") + target.name() +
                  " target cannot run it (an array's updates are written in order into one "
                  "host buffer); compile it for the CPU");
    if (n->op == Op::IndexPut) {
      if (!target.hostLoops())
        throw Error(std::string("[index_put] the ") + target.name() +
                    " target cannot run it (its rows are written in order, by a loop on the "
                    "host); compile it for the CPU");
      for (size_t k = 0; k < n->axes.size(); ++k) {
        const int axis = static_cast<int>(n->axes[k]);
        check(*n, *n->args[2 + k], "indices", n->shape[axis], axis);
      }
    }
  });
}

/// The engine's object file (kernel and wrappers), or "" if unavailable.
/// The engine only writes it to a file: each call gets its own (mkstemp), so
/// that threads compiling at once never read each other's object.
std::string dumpObject(mlir::ExecutionEngine &engine, const std::string &directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  std::string path = (std::filesystem::path(directory) / "object.XXXXXX").string();
  int fd = ::mkstemp(path.data());
  if (fd < 0)
    return "";
  ::close(fd);
  engine.dumpToObjectFile(path);
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path, error);
  return bytes;
}

/// Links objects (compiled, or from the disk cache) into a fresh JIT; false
/// if they cannot be used.
bool loadObjects(Compiled::Impl &impl, const std::vector<std::string> &objects,
                 const CompileTarget &target) {
  target.vectorMath(); // loads libmvec: the object may call it
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(target.machineBuilder()).create();
  if (!jit) {
    llvm::consumeError(jit.takeError());
    return false;
  }
  llvm::orc::LLJIT &j = **jit;
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      j.getDataLayout().getGlobalPrefix());
  if (!process) {
    llvm::consumeError(process.takeError());
    return false;
  }
  j.getMainJITDylib().addGenerator(std::move(*process));
  llvm::orc::MangleAndInterner interner(j.getExecutionSession(), j.getDataLayout());
  if (auto error = j.getMainJITDylib().define(
          llvm::orc::absoluteSymbols(symbolMap(target.runtimeSymbols(), interner)))) {
    llvm::consumeError(std::move(error));
    return false;
  }
  for (const std::string &object : objects)
    if (auto error = j.addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(object))) {
      llvm::consumeError(std::move(error));
      return false;
    }
  auto symbol = j.lookup(detail::packedEntryName());
  if (!symbol) {
    llvm::consumeError(symbol.takeError());
    return false;
  }
  impl.native.entry = symbol->toPtr<void (*)(void **)>();
  impl.loaded = std::move(*jit);
  return true;
}

/// Per-stage compile times on stderr (options.timing).
class StageTimer {
public:
  explicit StageTimer(bool enabled) : enabled_(enabled) {}
  void operator()(const char *stage) {
    auto now = std::chrono::steady_clock::now();
    if (enabled_)
      std::fprintf(stderr, "tinymlir: %-10s %8.2f ms\n", stage,
                   std::chrono::duration<double, std::milli>(now - last_).count());
    last_ = now;
  }

private:
  bool enabled_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

/// Whether `n` is `arg` updated by index_puts (at least one): the only
/// results computed in place of an input. Bufferization sees every read and
/// write of such a chain; other results may be computed into the output
/// buffer before the input is read, so they are computed as usual, with the
/// input copied first (callNative), as NumPy's out= does.
bool updates(const Node *n, const Node *arg) {
  while (n->op == Op::IndexPut || n->op == Op::SliceUpdate) {
    n = n->args[0].get();
    if (n == arg)
      return true;
  }
  return false;
}

/// Whether the graph calls a run-time kernel that can report an error while
/// it runs (an id out of range, a singular matrix): then an input updated in
/// place could be left half-written, and is not donated.
/// Loops donate nothing either (for now: their carried arrays are updated in
/// the loop's own buffers).
bool mayFailWhileRunning(const Node *root) {
  return detail::anyNode(root, [](const Node &n) {
    return detail::opInfo(n.op).kind == detail::OpKind::CheckedRow || n.op == Op::Loop ||
           ((n.op == Op::Slice || n.op == Op::SliceUpdate) && detail::tracedPositions(n) > 0);
  });
}

/// The longest chain of operands (arguments, and loop bodies' yields) under
/// `root`, found without recursion.
size_t depthOf(const Node *root) {
  std::unordered_map<const Node *, size_t> depth;
  auto operands = [](const Node *n) {
    std::vector<const Node *> out;
    detail::forEachOperand(*n, [&](const NodePtr &a) { out.push_back(a.get()); });
    return out;
  };
  // node, its operands, the next one
  std::vector<std::tuple<const Node *, std::vector<const Node *>, size_t>> stack;
  stack.emplace_back(root, operands(root), 0);
  while (!stack.empty()) {
    auto &[n, ops, next] = stack.back();
    if (next < ops.size()) {
      const Node *a = ops[next++];
      if (!depth.contains(a))
        stack.emplace_back(a, operands(a), 0);
      continue;
    }
    size_t d = 0;
    for (const Node *a : ops)
      d = std::max(d, depth[a]);
    depth[n] = d + 1;
    stack.pop_back();
  }
  return depth[root];
}

/// Set on a thread made for a deep graph's compilation.
thread_local bool onLargeStack = false;

} // namespace

/// The builder recurses once per node of the longest chain (a few hundred
/// bytes a level): graphs deeper than a thousand nodes compile on a stack
/// sized for them (a loop of 7000 x = x * a + b overflowed the default 8 MB).
Compiled compileGraph(const std::vector<Tensor> &results, const std::vector<Tensor> &args,
                      const JitOptions &options, const std::vector<int> &donatedIn) {
  if (results.empty())
    throw Error("[jit] the traced function has no results to compile");
  for (size_t k = 0; k < results.size(); ++k)
    if (!results[k].valid())
      throw Error("[jit] result " + std::to_string(k) +
                  " of the traced function is an invalid (default-constructed) Tensor");
  if (!donatedIn.empty() && donatedIn.size() != results.size())
    throw Error("[jit] donated names " + std::to_string(donatedIn.size()) + " inputs for " +
                std::to_string(results.size()) + " results; give one per result (-1: none)");
  // The function's root: its results, each written into its own output.
  std::vector<NodePtr> resultNodes;
  for (const Tensor &r : results)
    resultNodes.push_back(r.node());
  const NodePtr root = detail::makeNode(Op::Results, {}, results[0].dtype(), resultNodes);
  if (const size_t depth = depthOf(root.get()); depth > 1000 && !onLargeStack) {
    std::optional<Compiled> compiled;
    std::exception_ptr error;
    const size_t bytes = std::min<size_t>((size_t{16} << 20) + depth * 4096, size_t{1} << 31);
    llvm::runOnNewStack(static_cast<unsigned>(bytes), [&] {
      onLargeStack = true;
      try {
        compiled = compileGraph(results, args, options, donatedIn);
      } catch (...) {
        error = std::current_exception();
      }
    });
    if (error)
      std::rethrow_exception(error);
    return std::move(*compiled);
  }
  auto start = std::chrono::steady_clock::now();
  StageTimer stage(options.timing);
  detail::prepareThreads();
  auto impl = std::make_shared<Compiled::Impl>();
  detail::NativeFunction &native = impl->native;
  std::vector<NodePtr> argNodes;
  for (const Tensor &a : args) {
    argNodes.push_back(a.node());
    native.inputShapes.push_back(a.shape());
    native.inputDTypes.push_back(a.dtype());
  }
  for (const Tensor &r : results) {
    native.resultShapes.push_back(r.shape());
    native.resultDTypes.push_back(r.dtype());
  }
  std::unique_ptr<CompileTarget> target = detail::makeTarget(options);
  findIndexInputs(root, *target, native.indexChecks);
  // Each donation kept where its result is that input updated, or any value
  // of its shape and dtype in a module bufferized with the analysis; each
  // input at most once, and none where a kernel can fail while it runs.
  native.donated.assign(results.size(), -1);
  const bool mayFail = !donatedIn.empty() && mayFailWhileRunning(root.get());
  const bool analyzed = !donatedIn.empty() && detail::bufferizesWithAnalysis(root);
  std::unordered_set<int> taken;
  for (size_t k = 0; k < donatedIn.size(); ++k) {
    const int i = donatedIn[k];
    if (i < 0 || static_cast<size_t>(i) >= args.size() || !target->hostLoops() || mayFail)
      continue;
    const Node &result = *resultNodes[k], &arg = *argNodes[i];
    const bool fits = analyzed && result.shape == arg.shape && result.dtype == arg.dtype;
    if ((fits || updates(&result, &arg)) && taken.insert(i).second)
      native.donated[k] = i;
  }

  auto context = detail::makeContext();
  detail::BuiltModule built = detail::buildModule(*context, resultNodes, argNodes, native.donated);
  native.constants = std::move(built.constants);
  mlir::ModuleOp module = *built.module;
  detail::verifyModule(module, "build");
  stage("build");
  impl->module = detail::printModule(module);
  stage("print");
  // The later stages' text only for kernels of a readable size (options.irLimit).
  int64_t operations = 0;
  module->walk([&](mlir::Operation *) { ++operations; });
  const bool keepText = options.irLimit == 0 || operations <= options.irLimit;
  auto stageText = [&](mlir::ModuleOp m) {
    return keepText ? detail::printModule(m)
                    : "// not kept: the kernel has " + std::to_string(operations) +
                          " operations, more than the option ir_limit (" +
                          std::to_string(options.irLimit) + ")\n";
  };

  native.hooks = target->callHooks();
  // Loops poll for Ctrl-C (lib/builder/Loops.cpp); they donate nothing, so an
  // interrupted call leaves the arguments as they were.
  native.interruptible =
      detail::anyNode(root.get(), [](const Node &n) { return n.op == Op::Loop; });
  impl->target = options.target;
  const int level = std::clamp(options.optLevel, 0, 3);

  // The persistent cache: the module as built, with the options, versions
  // and host CPU, decides the code.
  std::string cacheDir = target->cacheable() ? detail::cacheDirectory(options) : "";
  std::string key = cacheDir.empty() ? "" : detail::cacheKey(impl->module, options, *target);
  if (!cacheDir.empty()) {
    if (auto cached = detail::loadEntry(cacheDir, key)) {
      if (loadObjects(*impl, cached->objects, *target)) {
        impl->optimized = std::move(cached->optimized);
        impl->bufferized = std::move(cached->bufferized);
        impl->lowered = std::move(cached->lowered);
        impl->blasCalls = cached->blasCalls;
        impl->fromDisk = true;
        stage("disk-cache");
        impl->seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return Compiled(std::move(impl));
      }
    }
  }

  if (options.optimize)
    detail::runPipeline(module, detail::kOptimizePipeline, "optimize");
  stage("optimize");
  impl->optimized = stageText(module);
  stage("print");

  detail::runPipeline(module,
                      built.straightLine ? detail::kBufferizeStraightLinePipeline
                                         : detail::kBufferizePipeline,
                      "bufferize");
  stage("bufferize");
  impl->bufferized = stageText(module);
  stage("print");

  // The modules of the kernel's parts, lowered; destroyed before the context.
  std::vector<mlir::OwningOpRef<mlir::ModuleOp>> parts = target->lower(module, impl->stages);
  impl->blasCalls = detail::countBlasCalls(module);
  for (const auto &part : parts)
    impl->blasCalls += detail::countBlasCalls(*part);
  stage("lower");
  impl->lowered = stageText(module);
  if (keepText)
    for (const auto &part : parts)
      impl->lowered += "\n" + detail::printModule(*part);
  stage("print");

  std::vector<std::string> objects;
  if (target->hasConstructors() || options.perf) {
    if (!parts.empty())
      throw Error("[compile] stage 'jit': internal: MLIR's ExecutionEngine takes the kernel in "
                  "one module, and its parts were moved out");
    // MLIR's ExecutionEngine: it runs the GPU's constructors (its kernel
    // binaries) and tells perf about the code.
    mlir::ExecutionEngineOptions engineOptions;
    // The target machine, so that LLVM's optimizer (the loop vectorizer in
    // particular) knows the vector width and CPU features.
    // One machine serves both: the optimizer uses it first, then the engine,
    // which owns it, generates code with it.
    auto machine = target->machine(level);
    auto optimizer = target->optimizer(level, machine.get()); // transformer is a function_ref
    engineOptions.transformer = optimizer;
    engineOptions.jitCodeGenOptLevel = static_cast<llvm::CodeGenOptLevel>(level);
    engineOptions.enableGDBNotificationListener = false;
    // options.perf: tell perf about the generated code (perf record -k 1, perf inject --jit).
    engineOptions.enablePerfNotificationListener = options.perf;
    engineOptions.enableObjectDump = !cacheDir.empty();
    auto engine = mlir::ExecutionEngine::create(module, engineOptions, std::move(machine));
    if (!engine)
      throw Error("[compile] stage 'jit' failed: " + llvm::toString(engine.takeError()));
    impl->engine = std::move(*engine);
    detail::RuntimeSymbols symbols = target->runtimeSymbols();
    impl->engine->registerSymbols(
        [&](llvm::orc::MangleAndInterner interner) { return symbolMap(symbols, interner); });
    if (target->hasConstructors())
      impl->engine->initialize();
    auto entry = impl->engine->lookupPacked(detail::interfaceName());
    if (!entry)
      throw Error("[compile] stage 'jit' failed: " + llvm::toString(entry.takeError()));
    native.entry = *entry;
    if (!cacheDir.empty())
      objects.push_back(dumpObject(*impl->engine, cacheDir));
  } else {
    // Objects of our own, a long kernel's parts compiled on every core.
    objects = detail::compileObjects(module, parts, *target, level);
    if (!loadObjects(*impl, objects, *target))
      throw Error("[compile] stage 'jit' failed: LLVM's JIT could not link the kernel's objects");
  }
  stage("llvm-jit");
  if (!cacheDir.empty() && !objects.empty() && !objects.front().empty()) {
    detail::CacheEntry fresh;
    fresh.objects = std::move(objects);
    fresh.optimized = impl->optimized;
    fresh.bufferized = impl->bufferized;
    fresh.lowered = impl->lowered;
    fresh.blasCalls = impl->blasCalls;
    detail::storeEntry(cacheDir, key, fresh, options.cacheBytes);
  }
  impl->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return Compiled(std::move(impl));
}

const std::string &Compiled::module() const { return impl_->module; }
const std::string &Compiled::optimized() const { return impl_->optimized; }
const std::string &Compiled::bufferized() const { return impl_->bufferized; }
const std::string &Compiled::lowered() const { return impl_->lowered; }
const std::vector<Shape> &Compiled::inputShapes() const { return impl_->native.inputShapes; }
const std::vector<DType> &Compiled::inputDTypes() const { return impl_->native.inputDTypes; }
const Shape &Compiled::resultShape() const { return impl_->native.resultShapes.front(); }
DType Compiled::resultDType() const { return impl_->native.resultDTypes.front(); }
const std::vector<Shape> &Compiled::resultShapes() const { return impl_->native.resultShapes; }
const std::vector<DType> &Compiled::resultDTypes() const { return impl_->native.resultDTypes; }
double Compiled::compileSeconds() const { return impl_->seconds; }
int Compiled::blasCalls() const { return impl_->blasCalls; }
int Compiled::donated() const { return impl_->native.donated.front(); }
const std::vector<int> &Compiled::donations() const { return impl_->native.donated; }
Target Compiled::target() const { return impl_->target; }
bool Compiled::fromDiskCache() const { return impl_->fromDisk; }
const std::string &Compiled::gpuModule() const { return impl_->stages.gpu; }
const std::string &Compiled::ptx() const { return impl_->stages.ptx; }

Compiled compileGraph(const Tensor &result, const std::vector<Tensor> &args,
                      const JitOptions &options, int donated) {
  return compileGraph(std::vector<Tensor>{result}, args, options, std::vector<int>{donated});
}

namespace {
void requireOneResult(const detail::NativeFunction &f, const char *what) {
  if (f.resultShapes.size() != 1)
    throw Error(std::string("[call] this specialization has ") +
                std::to_string(f.resultShapes.size()) + " results; " + what);
}
} // namespace

Array Compiled::call(const std::vector<Array> &inputs) const {
  requireOneResult(impl_->native, "use callAll");
  return callAll(inputs).front();
}

std::vector<Array> Compiled::callAll(const std::vector<Array> &inputs) const {
  std::vector<Array> outputs;
  for (size_t k = 0; k < impl_->native.resultShapes.size(); ++k)
    outputs.push_back(Array::empty(impl_->native.resultShapes[k], impl_->native.resultDTypes[k]));
  callInto(inputs, outputs);
  return outputs;
}

void Compiled::callInto(const std::vector<Array> &inputs, Array &output) const {
  requireOneResult(impl_->native, "give one output per result");
  std::vector<Array> outputs{output};
  detail::callNative(impl_->native, inputs, outputs);
}

void Compiled::callInto(const std::vector<Array> &inputs, std::vector<Array> &outputs) const {
  detail::callNative(impl_->native, inputs, outputs);
}

Array evaluate(const Tensor &result, const JitOptions &options) {
  if (result.isConcrete())
    return result.array();
  return compileGraph(result, {}, options).call({});
}

} // namespace tinymlir
