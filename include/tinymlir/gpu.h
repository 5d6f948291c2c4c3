// The GPU target's public runtime API (no MLIR, no CUDA types): the
// device-resident cache of constant inputs, transfer counters, kernel times.
// Compile for the GPU with JitOptions::target = Target::GPU.
//
// Device-resident inputs (the "weights stay on the device" contract):
//   gpuKeepResident(a) registers a's bytes as constant. Any input of a GPU
//   function call whose bytes lie inside a registered array is uploaded once,
//   at first use, and the device copy is reused by every later call (keyed by
//   host address and byte size; least recently used copies are dropped beyond
//   TINYMLIR_GPU_CACHE_MB, default 3/4 of the device memory free at start).
//   Registration keeps the array's storage alive, so its address cannot be
//   reused for other data. The caller must not modify a registered array in
//   place: release it first (gpuReleaseResident drops its device copies).
//   Everything else (activations, token ids, captured constants) is uploaded
//   at every call and freed when the call returns.
#pragma once

#include <tinymlir/array.h>

#include <cstddef>
#include <string>
#include <vector>

namespace tinymlir {

/// Throws a clear tinymlir::Error unless a CUDA driver and a device are usable
/// ("[gpu] no CUDA driver: libcuda.so.1 could not be loaded (...)", "[gpu] no
/// CUDA device ...").
void requireGpu();
/// "NVIDIA H200 (sm_90)", or why there is no device.
std::string gpuDescription();

void gpuKeepResident(const Array &a);
void gpuReleaseResident(const Array &a);
void gpuReleaseAllResident();

/// Counters since the process started (all threads).
struct GpuTransferStats {
  size_t residentUploads = 0; ///< constant inputs copied to the device cache
  size_t residentHits = 0;    ///< constant inputs served from the cache
  size_t transientUploads = 0;
  size_t bytesUploaded = 0;
  size_t bytesDownloaded = 0;
  size_t launches = 0;
  size_t residentBytes = 0; ///< now held by the cache
};
GpuTransferStats gpuTransferStats();

/// With TINYMLIR_GPU_PROFILE=1: device time per kernel name (all threads),
/// measured with CUDA events around each launch; `reset` clears it.
struct GpuKernelTime {
  std::string kernel;
  size_t launches = 0;
  double seconds = 0;
};
std::vector<GpuKernelTime> gpuKernelProfile(bool reset = false);

} // namespace tinymlir
