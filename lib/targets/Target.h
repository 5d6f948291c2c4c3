// Compilation targets. Every target takes the bufferized module (the stage all
// targets share) to the LLVM dialect with its own pipeline, generates host
// code for it, and names the runtime functions that code calls. The driver
// (jit/Compile.cpp) runs any target the same way:
//
//   module --kOptimizePipeline--> optimized --kBufferizePipeline--> bufferized
//          --target.lowerPipeline()--> lowered --LLVM (target.machine)--> native
//
// Targets: cpu (cpu/CpuTarget.cpp), gpu (gpu/GpuTarget.cpp: PTX kernels
// launched through the CUDA runtime) and gpu-emulated (the same kernels run on
// the CPU, for machines without a GPU).
#pragma once

#include "runtime/Call.h"

#include <tinymlir/options.h>

#include <mlir/IR/BuiltinOps.h>

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/Support/Error.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace tinymlir::detail {

/// Before bufferization (when optimizing): fusion (MLIR's, with the fused
/// operations' inputs bounded: tinymlir-fuse-elementwise), then strength reduction
/// of math ops (tinymlir-simplify-math).
inline constexpr const char *kOptimizePipeline =
    "builtin.module(canonicalize,cse,tinymlir-fuse-elementwise,canonicalize,cse,"
    "tinymlir-simplify-math)";
/// Bufferization with the analysis: a squeezed slice given its unit axes back
/// is the slice (tinymlir-fold-reshaped-slices), elementwise ops write into an
/// input that dies there (tinymlir-reuse-dead-operands), results into their
/// outputs or boxes (eliminate-empty-tensors; the CSE after it makes a box an
/// update reads and the box it writes one value, which bufferizes in place).
inline constexpr const char *kBufferizePipeline =
    "builtin.module(tinymlir-fold-reshaped-slices,cse,tinymlir-reuse-dead-operands,"
    "tinymlir-private-fill-inits,eliminate-empty-tensors,cse,"
    "one-shot-bufferize{bufferize-function-boundaries},"
    "buffer-deallocation-pipeline,cse,canonicalize)";
/// For modules whose arrays are updated in place (slice updates, written in
/// order into buffers by the builder), or of thousands of operations (unrolled
/// loops): no analysis, whose cost grows superlinearly with the number of
/// reads of one buffer (a 20x20 Cholesky: 10 s; 1,000 reads of an argument:
/// 2.5 s); the builder already copies what must be copied, so copying before
/// the remaining writes costs only small temporaries. Deallocation: each
/// buffer after its last use (the ownership-based pipeline's simplification
/// is quadratic in the number of buffers). An update's value is computed in
/// its box where that is safe (tinymlir-write-into-destination).
inline constexpr const char *kBufferizeStraightLinePipeline =
    "builtin.module(one-shot-bufferize{bufferize-function-boundaries copy-before-write},"
    "tinymlir-write-into-destination,tinymlir-straight-line-dealloc,canonicalize)";
/// Loops and memrefs to the LLVM dialect (the last steps of the CPU and of GPU
/// emulation); the kernel function stays out of line. Temporaries come from
/// the arrays' memory (allocateMemory), which reuses freed blocks: memrefs are
/// lowered before convert-openmp-to-llvm, which would lower them to malloc.
/// Complex arithmetic becomes real arithmetic and math first; integer powers
/// (math.ipowi) become generated functions.
inline constexpr const char *kLoopsToLlvmPipeline =
    "builtin.module(convert-scf-to-openmp,canonicalize,expand-strided-metadata,"
    "lower-affine,convert-complex-to-standard,tinymlir-expand-copysign,convert-math-to-funcs,"
    "convert-scf-to-cf,"
    "convert-math-to-libm,convert-math-to-llvm,convert-vector-to-llvm,convert-complex-to-llvm,"
    "convert-arith-to-llvm,finalize-memref-to-llvm{use-generic-functions},"
    "convert-openmp-to-llvm,convert-func-to-llvm,convert-cf-to-llvm,reconcile-unrealized-casts,"
    "tinymlir-loop-annotations,tinymlir-kernel-noinline)";

/// Stages a target keeps besides the shared ones.
struct TargetStages {
  std::string gpu; ///< GPU targets: kernels outlined, data on the device
  std::string ptx; ///< GPU target: the PTX of the first chip
};

class CompileTarget {
public:
  virtual ~CompileTarget() = default;
  /// "cpu", "gpu" or "gpu-emulated".
  virtual const char *name() const = 0;
  /// The passes from the bufferized module to the LLVM dialect.
  virtual std::string lowerPipeline() const = 0;
  /// Runs them on the module, keeping the target's own stages. Returns the
  /// modules that parts of the kernel were moved to, lowered (CPU: see
  /// tinymlir-move-out-parts), each to be compiled to an object of its own;
  /// none where the module holds the whole kernel.
  virtual std::vector<mlir::OwningOpRef<mlir::ModuleOp>> lower(mlir::ModuleOp module,
                                                               TargetStages &stages) const;
  /// The functions its code calls.
  virtual RuntimeSymbols runtimeSymbols() const = 0;
  /// Whether the code has global constructors to run (GPU: kernel binaries).
  virtual bool hasConstructors() const { return false; }
  /// Whether its native code may be kept in the disk cache.
  virtual bool cacheable() const { return false; }
  /// Whether its code is host loops on the caller's arrays where they are
  /// (not kernels on device copies): an input can be updated in place
  /// (Jit::into), and sequential loops (index_put's rows, in order) can run.
  virtual bool hostLoops() const { return false; }
  /// The runtime's checks around each call (CallHooks in runtime/Call.h).
  virtual CallHooks callHooks() const { return {}; }

  // Host code generation (the CPU's code, or the GPU's host side).
  /// The LLVM CPU: "" for the host CPU with all its features.
  const std::string &cpu() const { return cpu_; }
  /// The JIT's target machine builder for that CPU (checked against the host's features).
  llvm::orc::JITTargetMachineBuilder machineBuilder() const;
  std::unique_ptr<llvm::TargetMachine> machine(int level) const;
  /// LLVM's optimization pipeline for the module at `level` (0-3).
  std::function<llvm::Error(llvm::Module *)> optimizer(int level,
                                                       llvm::TargetMachine *machine) const;
  /// Whether the vectorizer may call glibc's libmvec (options.vectorMath, if present).
  bool vectorMath() const;

protected:
  CompileTarget(std::string cpu, bool vectorMath) : cpu_(std::move(cpu)), vectorMath_(vectorMath) {}

private:
  std::string cpu_;
  bool vectorMath_;
};

/// The target these options select.
std::unique_ptr<CompileTarget> makeTarget(const JitOptions &options);
std::unique_ptr<CompileTarget> makeCpuTarget(const JitOptions &options);
std::unique_ptr<CompileTarget> makeGpuTarget(const JitOptions &options);

} // namespace tinymlir::detail
