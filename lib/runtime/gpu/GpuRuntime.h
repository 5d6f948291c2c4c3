// The CUDA runtime of the GPU target as seen from the rest of the library:
// the checks around a call. The public part is include/tinymlir/gpu.h.
#pragma once

#include <tinymlir/gpu.h>

#include <string>

namespace tinymlir {
namespace detail {

/// Throws the first CUDA error recorded on this thread since the last check
/// (errors inside JIT-compiled code are recorded, never thrown through it).
void checkGpuErrors();

} // namespace detail
} // namespace tinymlir
