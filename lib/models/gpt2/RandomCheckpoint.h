// Random-weight GPT-2 checkpoints for tests, demos and the tools
// (tinymlir-make-gpt2; tinymlir-gpt2's default model). Not part of the loader.
#pragma once

#include "models/gpt2/Checkpoint.h"

#include <cstdint>
#include <string>

namespace tinymlir::gpt2 {

/// Writes `dir`/model.safetensors and `dir`/config.json (creating `dir`): a
/// random GPT-2 from a seeded, platform-independent generator (splitmix64 +
/// Marsaglia polar method with a portable log), so one seed gives the same bytes
/// on every machine. Weights and linear biases ~ N(0, 0.02) (the residual
/// projections attn.c_proj / mlp.c_proj weights scaled by 1/sqrt(2 n_layer) as
/// in GPT-2), layer-norm weights 1 + N(0, 0.05), layer-norm biases N(0, 0.05).
/// Each tensor has its own stream (seeded from `seed` and its name) and is
/// written as soon as it is generated; the file appears atomically (written to
/// a temporary name, then renamed). Tensors are stored in name order with
/// metadata {"format": "pt"}, header padded with spaces to a multiple of 8.
/// `weightScale` replaces 0.02 as the weights' and linear biases' standard
/// deviation: 0.2 to 0.5 give peaked attention and a GELU used far from its
/// linear part, which verification needs to tell formulas apart.
/// Errors are tinymlir::Error "[checkpoint] <path>: <reason>".
void writeRandomCheckpoint(const std::string &dir, const Config &config, uint64_t seed,
                           double weightScale = 0.02);

} // namespace tinymlir::gpt2
