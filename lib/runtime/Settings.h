// Settings: the environment variables that change no generated code, read in
// one module per layer. This is the runtime's (and the layers above it use
// it); JitOptions (include/tinymlir/options.def) holds those that change code,
// and lib/models/gpt2/Settings.h the model's. docs/options.md lists them all.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace tinymlir::settings {

/// $XDG_CACHE_HOME, else $HOME/.cache ("" where neither is set): where the
/// disk cache and the CLI's downloads go by default.
std::string userCacheHome();
/// Whether KMP_BLOCKTIME is set (else libomp's threads sleep after 1 ms).
bool blocktimeGiven();
/// TINYMLIR_GPU_DEVICE: the CUDA device's ordinal (0).
int gpuDevice();
/// TINYMLIR_GPU_CACHE_MB: the device cache of resident inputs, in bytes.
std::optional<size_t> gpuCacheBytes();
/// TINYMLIR_GPU_PROFILE=1: device time per kernel on stderr.
bool gpuProfile();
/// Whether a variable is set to something other than "" or "0".
bool enabled(const char *variable);

} // namespace tinymlir::settings
