// Which blocks of allocateMemory a call still holds (core, no MLIR): an
// interrupted kernel (lib/runtime/Call.cpp) leaves without freeing its
// temporaries, and the call frees them from this record.
#pragma once

#include <unordered_set>

namespace tinymlir::detail {

/// From now on, this thread's allocateMemory adds each block to `live` and
/// freeMemory removes it; null stops the record.
void trackAllocations(std::unordered_set<void *> *live);

} // namespace tinymlir::detail
