// The functions of our own CUDA runtime that the host module calls besides
// the mgpu* ones of MLIR's GPU-to-LLVM lowering (no MLIR, no CUDA types).
//
//   int64 tinymlirGpuInput(int64 host, int64 bytes)
//       The device address of a copy of host[0, bytes). Inside a range made
//       resident with gpuKeepResident: a cached copy, uploaded at first use and
//       kept across calls. Otherwise a buffer uploaded now and freed at the end
//       of the call.
//   int64 tinymlirGpuOutput(int64 bytes)
//       A device buffer for the result, freed at the end of the call.
//   void tinymlirGpuCopyOut(int64 host, int64 device, int64 bytes)
//       Copies the result to the host and waits for the device.
//   void tinymlirGpuCallEnd()
//       Frees the buffers of this call.
// Addresses travel as int64 so the host module needs no pointer types until it
// is lowered. All work runs on one CUDA stream per host thread.
//
// Kernel binaries: the PTX of every target chip in one text bundle, loaded with
// mgpuModuleLoadJIT (the runtime picks the newest chip the device supports):
//   //tinymlir-ptx-bundle\n
//   //target sm_90 <bytes>\n<PTX of that many bytes>
//   //target sm_75 <bytes>\n<PTX ...>
// Plain PTX (without the first line) is loaded as it is.
#pragma once

#include <cstdint>

extern "C" {
int64_t tinymlirGpuInput(int64_t host, int64_t bytes);
int64_t tinymlirGpuOutput(int64_t bytes);
void tinymlirGpuCopyOut(int64_t host, int64_t device, int64_t bytes);
void tinymlirGpuCallEnd();
}

namespace tinymlir::detail {

inline constexpr const char *kGpuInputFn = "tinymlirGpuInput";
inline constexpr const char *kGpuOutputFn = "tinymlirGpuOutput";
inline constexpr const char *kGpuCopyOutFn = "tinymlirGpuCopyOut";
inline constexpr const char *kGpuCallEndFn = "tinymlirGpuCallEnd";
/// GPU emulation only: the OpenMP thread number, checking the team size.
inline constexpr const char *kEmuThreadFn = "tinymlirGpuEmuThread";

inline constexpr const char *kPtxBundleMagic = "//tinymlir-ptx-bundle";
inline constexpr const char *kPtxBundleTarget = "//target";

} // namespace tinymlir::detail
