// The steps of the GPU lowering that are written in C++ (the rest are MLIR
// passes run by lowerForGpu in GpuTarget.cpp). Internal to lib/gpu.
//
// Order, on the bufferized module (function arguments are host memrefs):
//   1. rewriteMatmulsToGpuKernels  linalg.matmul / batch_matmul -> gpu.launch of a
//                                  shared-memory tiled kernel (MatmulKernels.cpp)
//   2. prepareLoopsForGpu          memref.copy -> linalg.copy, static memref.reshape
//                                  -> memref.reinterpret_cast, named ops generalized,
//                                  parallel dimensions first, loop nests without a
//                                  parallel dimension wrapped in a one-trip scf.parallel
//   -- convert-linalg-to-parallel-loops --
//   3. mapParallelLoopsToGpu       tiles every outermost scf.parallel (no min/max
//                                  bounds: ragged tiles are guarded by scf.if) and
//                                  maps it onto blocks and threads (LoopMapping.cpp)
//   -- convert-parallel-loops-to-gpu, lower-affine, canonicalize, gpu-kernel-outlining --
//   4. moveDataToDevice            host arguments -> device buffers through the
//                                  runtime, memref.alloc -> gpu.alloc, copy-out of
//                                  the result (DeviceMemory.cpp)
//   5. mergeKernelModules          every outlined kernel in one gpu.module @kernels
//                                  (one PTX module per compiled function)
#pragma once

#include <mlir/IR/BuiltinOps.h>

#include <string>

namespace tinymlir::detail {

/// Returns how many products it replaced.
int rewriteMatmulsToGpuKernels(mlir::ModuleOp module);
void prepareLoopsForGpu(mlir::ModuleOp module);
void mapParallelLoopsToGpu(mlir::ModuleOp module);
void moveDataToDevice(mlir::ModuleOp module);
void mergeKernelModules(mlir::ModuleOp module);

/// Throws an Error (naming `stage`) if a host function still holds loops,
/// linalg ops, host allocations or direct loads/stores: all data work must be
/// in kernels, all data in device memory.
void checkHostIsLaunchesOnly(mlir::ModuleOp module, const char *stage);

} // namespace tinymlir::detail
