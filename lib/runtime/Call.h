// The runtime as compiled code sees it: the call boundary (the checks before
// a call, the memref descriptors, the call itself), the threads the code runs
// on, and the functions it calls, by name, for the JIT's symbol tables.
#pragma once

#include <tinymlir/array.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <optional>
#include <vector>

namespace tinymlir::detail {

/// A target's runtime checks around each call (e.g. the GPU's device check
/// before, its recorded errors after); null: none.
struct CallHooks {
  void (*before)() = nullptr;
  void (*after)() = nullptr;
};

/// A compiled function as the runtime sees it.
struct NativeFunction {
  /// The packed entry point: one pointer per memref descriptor (inputs,
  /// captured constants, the outputs).
  void (*entry)(void **) = nullptr;
  std::vector<Shape> inputShapes;
  std::vector<DType> inputDTypes;
  std::vector<Array> constants;
  /// One per output, in order.
  std::vector<Shape> resultShapes;
  std::vector<DType> resultDTypes;
  /// Inputs that index an axis (gather ids, index_put positions), checked
  /// against its size before each call; or captured constants (the positions
  /// of constant index arrays), checked the same way.
  struct IndexCheck {
    size_t input;
    int64_t size;
    int axis = -1; ///< index_put: the target's axis; -1: gather ids (a table's rows)
    std::optional<Array> constant = std::nullopt; ///< the ids, when a captured constant
  };
  std::vector<IndexCheck> indexChecks;
  /// For each output, the input whose buffer it is (updated in place), or -1.
  std::vector<int> donated;
  CallHooks hooks;
  /// The code polls for Ctrl-C at its loops' back edges (tinymlir_poll): on
  /// the main thread SIGINT stops the call, which throws Interrupted.
  bool interruptible = false;
};

/// Checks the inputs and the outputs against the function's signature and the
/// index inputs against their axes, then calls it. Inputs that overlap one
/// another or an output are copied first (the code was compiled with
/// `restrict` arguments); a donated input must be its output itself, and
/// outputs must not overlap one another.
void callNative(const NativeFunction &f, const std::vector<Array> &inputs,
                std::vector<Array> &outputs);

/// Compiled code's poll at a captured loop's back edge (every 1024th
/// iteration): where SIGINT arrived during an interruptible call on this
/// thread, it leaves the kernel (the call frees its temporaries), and the call
/// throws Interrupted (interrupt.h) before anything is written back.
extern "C" void tinymlir_poll();

/// What a runtime function called by compiled code reports about bad data (an
/// index out of range, a singular matrix): it returns normally, the kernel
/// finishes on whatever it wrote, and callNative then throws the first report
/// of the call as an Error of that kind (the result is never seen).
void reportKernelError(ErrorKind kind, const std::string &message);

/// Once per process, before generated code first runs: OpenMP's settings,
/// and OpenBLAS on one thread (products are split over OpenMP's team).
void prepareThreads();
/// Threads for generated code and BLAS (one OpenMP team); 0: all cores
/// (setThreads).
void setRuntimeThreads(int threads);
/// The BLAS that products of kernels compiled with numpy_blas run on
/// (runtime/Gemm.cpp): "numpy: " and NumPy's OpenBLAS's configuration where
/// the process has loaded it, else "own: " and tinymlir's.
std::string blasLibrary();
/// Call hooks of the CPU target: the products of the kernel this thread calls
/// next run on NumPy's OpenBLAS where loaded (numpy_blas), or on tinymlir's.
void useNumpyBlas();
void useOwnBlas();
/// Products run on NumPy's OpenBLAS so far in this process (each of a batch).
uint64_t numpyBlasProducts();

struct RuntimeSymbol {
  const char *name;
  void *address;
};
using RuntimeSymbols = std::vector<RuntimeSymbol>;

/// A function's address as a symbol's address.
template <class F> RuntimeSymbol symbol(const char *name, F *function) {
  return {name, reinterpret_cast<void *>(function)};
}

/// tinymlir_sgemm, tinymlir_dgemm (Gemm.cpp), memrefCopy (Copy.cpp: runs of memcpy) and the memref
/// allocation functions (allocateMemory, freeMemory).
RuntimeSymbols cpuRuntimeSymbols();
/// The row kernels of Rows.cpp (tinymlir_sort_float64, ...), part of cpuRuntimeSymbols.
RuntimeSymbols rowRuntimeSymbols();
/// np.linalg's LAPACK kernels of Linalg.cpp (tinymlir_cholesky_float64, ...), likewise.
RuntimeSymbols linalgRuntimeSymbols();
/// The complex functions of Complex.cpp (tinymlir_cexp_complex128, ...), likewise.
RuntimeSymbols complexRuntimeSymbols();
/// The mgpu* functions of MLIR's GPU-to-LLVM lowering and tinymlirGpu* (gpu/CudaRuntime.cpp).
RuntimeSymbols cudaRuntimeSymbols();
/// The tinymlirGpu* functions on host buffers, and the emulated thread id
/// (gpu/EmulationRuntime.cpp).
RuntimeSymbols gpuEmulationSymbols();

} // namespace tinymlir::detail
