// compileGraph: graph -> MLIR -> optimized -> bufferized -> LLVM -> native code,
// and the runtime boundary that calls it.
#include "builder/MLIRGen.h"
#include "gpu/GpuTarget.h"
#include "pipeline/Passes.h"
#include "pipeline/Pipeline.h"
#include "runtime/DiskCache.h"
#include "runtime/Gemm.h"
#include "runtime/Optimizer.h"

#include <tinymlir/jit.h>

#include <mlir/ExecutionEngine/ExecutionEngine.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/ExecutionEngine/OptUtils.h>

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Error.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/X86TargetParser.h>

#include <cblas.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

extern "C" void memrefCopy(int64_t elementSize, void *source, void *destination);
extern "C" void omp_set_num_threads(int threads);
extern "C" int omp_get_num_procs();

namespace tinymlir {

struct Compiled::Impl {
  std::string module, optimized, bufferized, lowered;
  std::unique_ptr<mlir::ExecutionEngine> engine;
  void (*entry)(void **) = nullptr;
  std::vector<Shape> inputShapes;
  std::vector<DType> inputDTypes;
  std::vector<Array> constants;
  Shape resultShape;
  DType resultDType = DType::f32;
  /// Inputs that are gather ids: (input position, rows of the table).
  std::vector<std::pair<size_t, int64_t>> gatherIds;
  double seconds = 0;
  int blasCalls = 0;
  Target target = Target::CPU;
  std::unique_ptr<llvm::orc::LLJIT> loaded; // code from the disk cache
  bool fromDisk = false;
  std::string gpu, ptx; // GPU target only
};

namespace {

using detail::Node;
using detail::NodePtr;

/// OpenMP's workers spin 200 ms after each parallel loop by default, taking
/// the cores from OpenBLAS's threads when BLAS runs next (measured: a GEMM 20%
/// slower right after generated parallel loops); 1 ms keeps them responsive
/// without that. Set before libomp reads it; a user's KMP_BLOCKTIME wins.
const bool kOpenMPBlocktime = [] { return setenv("KMP_BLOCKTIME", "1", /*overwrite=*/0) == 0; }();

bool blasEnabled(const JitOptions &options) {
  const char *env = std::getenv("TINYMLIR_BLAS");
  if (env && (std::strcmp(env, "0") == 0 || std::strcmp(env, "off") == 0))
    return false;
  return options.blas;
}

llvm::orc::SymbolMap runtimeSymbols(llvm::orc::MangleAndInterner interner) {
  llvm::orc::SymbolMap symbols;
  auto add = [&](const char *name, auto *address) {
    symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                               llvm::JITSymbolFlags::Exported};
  };
  add("tinymlir_sgemm", &tinymlir_sgemm);
  add("tinymlir_dgemm", &tinymlir_dgemm);
  add("memrefCopy", &memrefCopy);
  return symbols;
}

/// Gather ids must be inputs, so that they can be checked before native code runs.
void findGatherIds(const NodePtr &root, const std::vector<NodePtr> &args,
                   std::vector<std::pair<size_t, int64_t>> &out) {
  std::vector<const Node *> stack{root.get()};
  std::vector<const Node *> seen;
  while (!stack.empty()) {
    const Node *n = stack.back();
    stack.pop_back();
    if (std::find(seen.begin(), seen.end(), n) != seen.end())
      continue;
    seen.push_back(n);
    if (n->op == Op::Gather) {
      const Node *ids = n->args[1].get();
      if (ids->op != Op::Argument)
        throw Error("[gather] ids must be an input of the compiled function (they are checked "
                    "against the table before each call); got a computed " +
                    std::string(opName(ids->op)) + " value");
      out.emplace_back(static_cast<size_t>(ids->index), n->args[0]->shape[0]);
    }
    for (const NodePtr &a : n->args)
      stack.push_back(a.get());
  }
}

/// The JIT's target machine builder: the host's CPU and features, or a named
/// CPU with that CPU's features (checked against the host's, so that the
/// code runs here).
llvm::orc::JITTargetMachineBuilder targetMachineBuilder(const std::string &cpu) {
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    throw Error("[compile] cannot detect the host CPU: " + llvm::toString(builder.takeError()));
  if (cpu.empty())
    return std::move(*builder);
  const llvm::Triple &triple = builder->getTargetTriple();
  if (triple.isX86()) {
    if (llvm::X86::parseArchX86(cpu, /*Only64Bit=*/true) == llvm::X86::CK_None)
      throw Error("[compile] unknown CPU '" + cpu +
                  "' for x86-64 (examples: x86-64-v2, x86-64-v3, x86-64-v4, haswell, znver3)");
    llvm::SmallVector<llvm::StringRef, 64> needed;
    llvm::X86::getFeaturesForCPU(cpu, needed, /*NeedPlus=*/false);
    llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
    std::string missing;
    for (llvm::StringRef f : needed)
      if (auto it = host.find(f); it != host.end() && !it->second)
        missing += (missing.empty() ? "" : ", ") + f.str();
    if (!missing.empty())
      throw Error("[compile] CPU '" + cpu + "' needs features this host lacks: " + missing);
  }
  llvm::orc::JITTargetMachineBuilder named(triple);
  named.setCPU(cpu);
  return named;
}

std::unique_ptr<llvm::TargetMachine> hostTargetMachine(int level, const std::string &cpu) {
  auto builder = targetMachineBuilder(cpu);
  builder.setCodeGenOptLevel(static_cast<llvm::CodeGenOptLevel>(level));
  auto machine = builder.createTargetMachine();
  if (!machine)
    throw Error("[compile] no LLVM target for the host: " + llvm::toString(machine.takeError()));
  return std::move(*machine);
}

std::string describe(DType dtype, const Shape &shape) {
  return std::string(dtypeName(dtype)) + " " + shapeString(shape);
}

/// A ranked memref descriptor: {allocated, aligned, offset, sizes[R], strides[R]}.
std::vector<int64_t> descriptor(const Array &a) {
  std::vector<int64_t> d;
  auto pointer = reinterpret_cast<int64_t>(a.data());
  d.push_back(pointer);
  d.push_back(pointer);
  d.push_back(0);
  d.insert(d.end(), a.shape().begin(), a.shape().end());
  d.insert(d.end(), a.strides().begin(), a.strides().end());
  return d;
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

/// Links a cached object into a fresh JIT; false if it cannot be used.
bool loadObject(Compiled::Impl &impl, const std::string &object, const std::string &cpu) {
  detail::vectorMathAvailable(); // the object may call libmvec
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(targetMachineBuilder(cpu)).create();
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
  if (auto error = j.getMainJITDylib().define(llvm::orc::absoluteSymbols(runtimeSymbols(interner)))) {
    llvm::consumeError(std::move(error));
    return false;
  }
  if (auto error = j.addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(object))) {
    llvm::consumeError(std::move(error));
    return false;
  }
  auto symbol = j.lookup(std::string("_mlir__mlir_ciface_") + detail::kKernelName);
  if (!symbol) {
    llvm::consumeError(symbol.takeError());
    return false;
  }
  impl.entry = symbol->toPtr<void (*)(void **)>();
  impl.loaded = std::move(*jit);
  return true;
}

/// Per-stage compile times on stderr when TINYMLIR_TIMING is set.
class StageTimer {
public:
  StageTimer() : enabled_(std::getenv("TINYMLIR_TIMING") != nullptr) {}
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

} // namespace

Compiled compileGraph(const Tensor &result, const std::vector<Tensor> &args,
                      const JitOptions &options) {
  auto start = std::chrono::steady_clock::now();
  StageTimer stage;
  if (!result.valid())
    throw Error("[jit] the traced function returned an invalid (default-constructed) Tensor");
  auto impl = std::make_shared<Compiled::Impl>();
  std::vector<NodePtr> argNodes;
  for (const Tensor &a : args) {
    argNodes.push_back(a.node());
    impl->inputShapes.push_back(a.shape());
    impl->inputDTypes.push_back(a.dtype());
  }
  impl->resultShape = result.shape();
  impl->resultDType = result.dtype();
  findGatherIds(result.node(), argNodes, impl->gatherIds);

  auto context = detail::makeContext();
  detail::BuiltModule built = detail::buildModule(*context, result.node(), argNodes);
  impl->constants = std::move(built.constants);
  mlir::ModuleOp module = *built.module;
  detail::verifyModule(module, "build");
  impl->module = detail::printModule(module);
  stage("build");

  impl->target = options.target;
  int level = std::clamp(options.optLevel, 0, 3);
  if (const char *env = std::getenv("TINYMLIR_OPT_LEVEL"); env && *env >= '0' && *env <= '3')
    level = *env - '0';

  const std::string cpu = options.target == Target::CPU ? detail::codegenCpu(options) : "";
  // The persistent cache (CPU code): the module as built, with the options,
  // versions and host CPU, decides the code.
  std::string cacheDir = options.target == Target::CPU ? detail::cacheDirectory(options) : "";
  std::string key = cacheDir.empty() ? "" : detail::cacheKey(impl->module, options, level);
  if (!cacheDir.empty()) {
    if (auto cached = detail::loadEntry(cacheDir, key)) {
      if (loadObject(*impl, cached->object, cpu)) {
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
  impl->optimized = detail::printModule(module);
  stage("optimize");

  detail::runPipeline(module, detail::kBufferizePipeline, "bufferize");
  impl->bufferized = detail::printModule(module);
  stage("bufferize");
  if (options.target == Target::GPU) {
    detail::GpuStages gpu = detail::lowerForGpu(module);
    impl->gpu = std::move(gpu.gpu);
    impl->ptx = std::move(gpu.ptx);
    stage("gpu");
  } else {
    detail::runPipeline(module, detail::cpuLowerPipeline(blasEnabled(options)), "lower");
    impl->blasCalls = detail::countBlasCalls(module);
  }
  impl->lowered = detail::printModule(module);
  stage("lower");

  mlir::ExecutionEngineOptions engineOptions;
  // The host's target machine, so that LLVM's optimizer (the loop vectorizer
  // in particular) knows the vector width and CPU features.
  auto hostMachine = hostTargetMachine(level, cpu);
  auto transformer = detail::makeOptimizer(level, hostMachine.get());
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel = static_cast<llvm::CodeGenOptLevel>(level);
  engineOptions.enableGDBNotificationListener = false;
  // TINYMLIR_PERF=1: tell perf about the generated code (perf record -k 1, perf inject --jit).
  engineOptions.enablePerfNotificationListener = std::getenv("TINYMLIR_PERF") != nullptr;
  engineOptions.enableObjectDump = !cacheDir.empty();
  auto engine = mlir::ExecutionEngine::create(module, engineOptions, hostTargetMachine(level, cpu));
  if (!engine)
    throw Error("[compile] stage 'jit' failed: " + llvm::toString(engine.takeError()));
  impl->engine = std::move(*engine);
  impl->engine->registerSymbols(runtimeSymbols);
  if (options.target == Target::GPU) {
    impl->engine->registerSymbols(detail::gpuRuntimeSymbols);
    impl->engine->initialize(); // runs the constructors that register the kernel binaries
  }
  auto entry = impl->engine->lookupPacked(std::string("_mlir_ciface_") + detail::kKernelName);
  if (!entry)
    throw Error("[compile] stage 'jit' failed: " + llvm::toString(entry.takeError()));
  impl->entry = *entry;
  stage("llvm-jit");
  if (!cacheDir.empty()) {
    detail::CacheEntry fresh;
    fresh.object = dumpObject(*impl->engine, cacheDir);
    fresh.optimized = impl->optimized;
    fresh.bufferized = impl->bufferized;
    fresh.lowered = impl->lowered;
    fresh.blasCalls = impl->blasCalls;
    if (!fresh.object.empty())
      detail::storeEntry(cacheDir, key, fresh);
  }
  impl->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return Compiled(std::move(impl));
}

const std::string &Compiled::module() const { return impl_->module; }
const std::string &Compiled::optimized() const { return impl_->optimized; }
const std::string &Compiled::bufferized() const { return impl_->bufferized; }
const std::string &Compiled::lowered() const { return impl_->lowered; }
const std::vector<Shape> &Compiled::inputShapes() const { return impl_->inputShapes; }
const std::vector<DType> &Compiled::inputDTypes() const { return impl_->inputDTypes; }
const Shape &Compiled::resultShape() const { return impl_->resultShape; }
DType Compiled::resultDType() const { return impl_->resultDType; }
double Compiled::compileSeconds() const { return impl_->seconds; }
int Compiled::blasCalls() const { return impl_->blasCalls; }
Target Compiled::target() const { return impl_->target; }
bool Compiled::fromDiskCache() const { return impl_->fromDisk; }
const std::string &Compiled::gpuModule() const { return impl_->gpu; }
const std::string &Compiled::ptx() const { return impl_->ptx; }

Array Compiled::call(const std::vector<Array> &inputs) const {
  Array output = Array::empty(impl_->resultShape, impl_->resultDType);
  callInto(inputs, output);
  return output;
}

void Compiled::callInto(const std::vector<Array> &inputs, Array &output) const {
  const Impl &c = *impl_;
  if (c.target == Target::GPU)
    requireGpu();
  if (inputs.size() != c.inputShapes.size())
    throw Error("[call] expected " + std::to_string(c.inputShapes.size()) + " inputs, got " +
                std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].shape() != c.inputShapes[i] || inputs[i].dtype() != c.inputDTypes[i])
      throw Error("[call] input " + std::to_string(i) + " is " +
                  describe(inputs[i].dtype(), inputs[i].shape()) +
                  " but this specialization was compiled for " +
                  describe(c.inputDTypes[i], c.inputShapes[i]));
  if (output.shape() != c.resultShape || output.dtype() != c.resultDType || !output.isContiguous())
    throw Error("[call] the output must be a contiguous " + describe(c.resultDType, c.resultShape) +
                " array, got " + describe(output.dtype(), output.shape()));
  for (auto [position, rows] : c.gatherIds) {
    const Array &ids = inputs[position];
    for (int64_t k = 0; k < ids.size(); ++k) {
      double id = ids.at({k});
      if (id < 0 || id >= static_cast<double>(rows))
        throw Error("[gather] id " + std::to_string(static_cast<int64_t>(id)) + " at position " +
                    std::to_string(k) + " is outside the table of " + std::to_string(rows) +
                    " rows");
    }
  }

  // Contiguous inputs that overlap neither each other nor the output: the
  // promise `restrict` makes to bufferization.
  std::vector<Array> all;
  all.reserve(inputs.size() + c.constants.size());
  for (const Array &a : inputs)
    all.push_back(a.contiguous());
  for (const Array &a : c.constants)
    all.push_back(a.contiguous());
  for (size_t i = 0; i < all.size(); ++i) {
    bool overlapping = all[i].overlaps(output);
    for (size_t j = 0; j < i && !overlapping; ++j)
      overlapping = all[i].overlaps(all[j]);
    if (overlapping)
      all[i] = all[i].copy();
  }
  all.push_back(output);

  std::vector<std::vector<int64_t>> descriptors;
  descriptors.reserve(all.size());
  std::vector<void *> pointers, args;
  pointers.reserve(all.size());
  for (const Array &a : all) {
    descriptors.push_back(descriptor(a));
    pointers.push_back(descriptors.back().data());
  }
  for (void *&p : pointers)
    args.push_back(&p);
  c.entry(args.data());
  if (c.target == Target::GPU)
    detail::checkGpuErrors(); // CUDA errors recorded during the call
}

void setThreads(int threads) {
  int n = threads > 0 ? threads : omp_get_num_procs();
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
}

std::string printablePipeline(const JitOptions &options) {
  std::string optimize = options.optimize ? detail::kOptimizePipeline : "";
  std::string lower = options.target == Target::GPU ? detail::gpuPipeline()
                                                    : detail::cpuLowerPipeline(blasEnabled(options));
  return detail::joinPipelines({optimize, detail::kBufferizePipeline, lower});
}

Array evaluate(const Tensor &result, const JitOptions &options) {
  if (result.isConcrete())
    return result.array();
  return compileGraph(result, {}, options).call({});
}

} // namespace tinymlir
