// What every target shares: host code generation (the LLVM target machine and
// optimizer), the default lowering, and the choice of target.
#include "targets/Target.h"

#include "passes/Passes.h"
#include "passes/Pipeline.h"
#include "targets/Optimizer.h"

#include <llvm/Support/CommandLine.h>
#include <llvm/Support/Error.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/X86TargetParser.h>

#include <mutex>

namespace tinymlir {
namespace detail {

std::vector<mlir::OwningOpRef<mlir::ModuleOp>> CompileTarget::lower(mlir::ModuleOp module,
                                                                    TargetStages &) const {
  runPipeline(module, lowerPipeline(), "lower");
  return {};
}

llvm::orc::JITTargetMachineBuilder CompileTarget::machineBuilder() const {
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    throw Error("[compile] cannot detect the host CPU: " + llvm::toString(builder.takeError()));
  if (cpu_.empty())
    return std::move(*builder);
  const llvm::Triple &triple = builder->getTargetTriple();
  if (triple.isX86()) {
    if (llvm::X86::parseArchX86(cpu_, /*Only64Bit=*/true) == llvm::X86::CK_None)
      throw Error("[compile] unknown CPU '" + cpu_ +
                  "' for x86-64 (examples: x86-64-v2, x86-64-v3, x86-64-v4, haswell, znver3)");
    llvm::SmallVector<llvm::StringRef, 64> needed;
    llvm::X86::getFeaturesForCPU(cpu_, needed, /*NeedPlus=*/false);
    llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
    std::string missing;
    for (llvm::StringRef f : needed)
      if (auto it = host.find(f); it != host.end() && !it->second)
        missing += (missing.empty() ? "" : ", ") + f.str();
    if (!missing.empty())
      throw Error("[compile] CPU '" + cpu_ + "' needs features this host lacks: " + missing);
  }
  llvm::orc::JITTargetMachineBuilder named(triple);
  named.setCPU(cpu_);
  return named;
}

namespace {

/// Two of LLVM's code generation settings, changed once for the process.
/// Unrolled Python loops give blocks of thousands of stores (memref
/// descriptors built for calls, results of outlined parts), and SelectionDAG's
/// store merging and long token factors look at them in time quadratic in the
/// block: 83% of an unstructured stencil's 23 s of code generation (perf:
/// BaseIndexOffset::match and its callers). Without them it takes 3.5 s, and
/// npbench's adi 40 s instead of 68 s; warm times of adi, jacobi_2d,
/// cholesky, softmax, hdiff and go_fast did not change (docs/performance.md).
void tuneCodeGeneration() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto &options = llvm::cl::getRegisteredOptions();
    auto set = [&](llvm::StringRef name, llvm::StringRef value) {
      if (auto it = options.find(name); it != options.end())
        it->second->addOccurrence(0, name, value);
    };
    set("combiner-store-merging", "false");
    set("combiner-tokenfactor-inline-limit", "8");
  });
}

} // namespace

std::unique_ptr<llvm::TargetMachine> CompileTarget::machine(int level) const {
  tuneCodeGeneration();
  auto builder = machineBuilder();
  builder.setCodeGenOptLevel(static_cast<llvm::CodeGenOptLevel>(level));
  auto machine = builder.createTargetMachine();
  if (!machine)
    throw Error("[compile] no LLVM target for the host: " + llvm::toString(machine.takeError()));
  return std::move(*machine);
}

std::function<llvm::Error(llvm::Module *)> CompileTarget::optimizer(int level,
                                                                    llvm::TargetMachine *m) const {
  return makeOptimizer(level, m, vectorMath_);
}

bool CompileTarget::vectorMath() const { return vectorMath_ && loadVectorMath(); }

std::unique_ptr<CompileTarget> makeTarget(const JitOptions &options) {
  return options.target == Target::GPU ? makeGpuTarget(options) : makeCpuTarget(options);
}

} // namespace detail

std::string printablePipeline(const JitOptions &options) {
  std::string optimize = options.optimize ? detail::kOptimizePipeline : "";
  return detail::joinPipelines(
      {optimize, detail::kBufferizePipeline, detail::makeTarget(options)->lowerPipeline()});
}

} // namespace tinymlir
