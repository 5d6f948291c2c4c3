// The steps of the GPU lowering that are written in C++, as MLIR passes
// (create...Pass() in pipeline/Passes.h; the pipeline is kGpuMapPipeline).
//
// Order, on the bufferized module (function arguments are host memrefs):
//   1. tinymlir-gpu-matmul-kernels     linalg.matmul / batch_matmul -> gpu.launch of a
//                                      shared-memory tiled kernel (MatmulKernels.cpp)
//   2. tinymlir-gpu-prepare-loops      memref.copy -> linalg.copy, static memref.reshape
//                                      -> memref.reinterpret_cast, named ops generalized,
//                                      parallel dimensions first, loop nests without a
//                                      parallel dimension wrapped in a one-trip scf.parallel
//   -- convert-linalg-to-parallel-loops --
//   3. tinymlir-gpu-map-parallel-loops tiles every outermost scf.parallel (no min/max
//                                      bounds: ragged tiles are guarded by scf.if) and
//                                      maps it onto blocks and threads (LoopMapping.cpp)
//   -- convert-parallel-loops-to-gpu, lower-affine, canonicalize, gpu-kernel-outlining --
//   4. tinymlir-gpu-move-data-to-device host arguments -> device buffers through the
//                                      runtime, memref.alloc -> gpu.alloc, copy-out of
//                                      the result (DeviceMemory.cpp)
//   5. tinymlir-gpu-merge-kernel-modules every outlined kernel in one gpu.module
//                                      @kernels (one PTX module per compiled function)
//   -- canonicalize, cse --
//   6. tinymlir-gpu-check-host         fails if a host function still holds loops,
//                                      linalg ops, host allocations or direct
//                                      loads/stores (DeviceMemory.cpp)
#pragma once

/// Every step up to the `gpu` stage (kernels outlined, data on the device).
inline constexpr const char *kGpuMapPipeline =
    "builtin.module(tinymlir-gpu-matmul-kernels,tinymlir-gpu-prepare-loops,"
    "func.func(convert-linalg-to-parallel-loops),tinymlir-gpu-map-parallel-loops,"
    "func.func(convert-parallel-loops-to-gpu),lower-affine,canonicalize,"
    "gpu-launch-sink-index-computations,gpu-kernel-outlining,tinymlir-gpu-move-data-to-device,"
    "tinymlir-gpu-merge-kernel-modules,canonicalize,cse,tinymlir-gpu-check-host)";
