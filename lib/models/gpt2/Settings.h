// The model's settings: environment variables that change no generated code
// (runtime/Settings.h has the runtime's; docs/options.md lists them all).
#pragma once

#include <string>

namespace tinymlir::gpt2::settings {

/// TINYMLIR_GPT2_DATA: the tokenizer files' directory ("": found).
std::string dataDir();
/// TINYMLIR_PROFILE=1: time per part of a decoding step on stderr.
bool profile();

} // namespace tinymlir::gpt2::settings
