// The CPU target: after bufferization, a long kernel split into parts of
// bounded size, small products to streaming loops, the
// others to BLAS calls (options.blas), reductions to register loops, exp
// guarded, scattering row loops interchanged, linalg to loops (scf.parallel
// over parallel dimensions), small parallel loops serialized, then loops to
// LLVM (OpenMP for scf.parallel).
#include "passes/Passes.h"
#include "passes/Pipeline.h"
#include "targets/Target.h"

#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>

namespace tinymlir::detail {
namespace {

using mlir::ModuleOp;
using mlir::OwningOpRef;

class CpuTarget final : public CompileTarget {
public:
  explicit CpuTarget(const JitOptions &options)
      : CompileTarget(options.cpu, options.vectorMath), blas_(options.blas),
        numpyBlas_(options.numpyBlas), streamRows_(options.streamRows), oneModule_(options.perf) {}
  const char *name() const override { return "cpu"; }
  std::string lowerPipeline() const override { return joinPipelines({kOutline, partPipeline()}); }
  /// The kernel's parts are lowered in modules of their own
  /// (tinymlir-move-out-parts), on every core. Not with options.perf: MLIR's
  /// ExecutionEngine (which tells perf about the code) takes one module.
  std::vector<OwningOpRef<ModuleOp>> lower(ModuleOp module, TargetStages &) const override {
    runPipeline(module, oneModule_ ? kOutline : kOutlineAndMove, "lower");
    std::vector<OwningOpRef<ModuleOp>> parts = takeNestedModules(module);
    const std::string rest = partPipeline();
    runPipeline(module, rest, "lower"); // first: it loads the dialects the passes use
    forEachInParallel(module.getContext(), parts.size(), compileWorkers(),
                      [&](size_t i) { runPipeline(*parts[i], rest, "lower"); });
    return parts;
  }
  RuntimeSymbols runtimeSymbols() const override { return cpuRuntimeSymbols(); }
  /// Which BLAS the kernel's products run on (runtime/Gemm.cpp).
  CallHooks callHooks() const override {
    return {numpyBlas_ ? &useNumpyBlas : &useOwnBlas, nullptr};
  }
  bool cacheable() const override { return true; }
  bool hostLoops() const override { return true; }

private:
  static constexpr const char *kOutline = "builtin.module(tinymlir-outline-parts)";
  /// Two parts of about 1,000 operations a module: a 112x112 Cholesky's first
  /// call took 6.7, 6.6, 6.8 and 7.0 s with 1, 2, 4 and 8.
  static constexpr const char *kOutlineAndMove =
      "builtin.module(tinymlir-outline-parts,tinymlir-move-out-parts{per-module=2})";

  /// Everything after outlining.
  std::string partPipeline() const {
    std::string p =
        "builtin.module(tinymlir-small-products{max-rows=" + std::to_string(kSmallProductMaxRows) +
        " stream-rows=" + std::to_string(streamRows_) +
        (numpyBlas_ && blas_ ? " blas-gemv=1" : "") +
        " vector-bits=" + std::to_string(rowVectorBits()) + "},";
    if (blas_)
      p += "tinymlir-blas-rewrite,";
    p += "tinymlir-lower-reductions,tinymlir-guard-exp-underflow,"
         "tinymlir-interchange-scattered-copies,convert-linalg-to-parallel-loops,"
         "tinymlir-serialize-small-parallel-loops{minimum-work=" +
         std::to_string(kMinimumParallelWork) + "})";
    return joinPipelines({p, kLoopsToLlvmPipeline});
  }

  /// Register blocks of several rows in 512-bit vectors where the CPU has
  /// AVX-512, else 256 (measured on a Xeon with AVX-512, batch 8 of GPT-2
  /// 124M in float32: the layers' products 21.5 -> 17.7 ms a step).
  int rowVectorBits() const {
    llvm::InitializeNativeTarget();
    return machine(0)->getMCSubtargetInfo()->checkFeatures("+avx512f") ? 512 : 256;
  }

  bool blas_;
  bool numpyBlas_;
  int streamRows_;
  bool oneModule_;
};

} // namespace

std::unique_ptr<CompileTarget> makeCpuTarget(const JitOptions &options) {
  return std::make_unique<CpuTarget>(options);
}

} // namespace tinymlir::detail
