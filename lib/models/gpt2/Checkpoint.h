// GPT-2 checkpoints: config.json + model.safetensors in the Hugging Face layout.
//
// A model directory holds
//   config.json        Hugging Face GPT2Config (n_layer, n_head, n_embd,
//                      n_positions or n_ctx, vocab_size, layer_norm_epsilon,
//                      activation_function, ...)
//   model.safetensors  the weights, float32, with Hugging Face names:
//     wte.weight (V, C)  wpe.weight (P, C)  ln_f.{weight,bias} (C)
//     h.{i}.ln_1.{weight,bias} (C)          h.{i}.ln_2.{weight,bias} (C)
//     h.{i}.attn.c_attn.weight (C, 3C)      h.{i}.attn.c_attn.bias (3C)
//     h.{i}.attn.c_proj.weight (C, C)       h.{i}.attn.c_proj.bias (C)
//     h.{i}.mlp.c_fc.weight (C, 4C)         h.{i}.mlp.c_fc.bias (4C)
//     h.{i}.mlp.c_proj.weight (4C, C)       h.{i}.mlp.c_proj.bias (C)
//   Conv1D weights are stored (in, out), so y = x @ W + b. Names may carry a
//   "transformer." prefix (GPT2LMHeadModel exports). The attention mask
//   buffers h.{i}.attn.bias / h.{i}.attn.masked_bias (any dtype) and any tensor
//   outside the "h." / "wte" / "wpe" / "ln_f" families (e.g. the tied
//   lm_head.weight) are ignored; a layer tensor h.{i}.* with i >= n_layer is an
//   error (the config does not match the checkpoint).
//
// safetensors: 8-byte little-endian u64 N, N bytes of JSON header
//   {name: {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]},
//    "__metadata__": {str: str} (optional)}
// then the data section; offsets are relative to its start. Gaps between
// tensors are tolerated; overlapping tensors are not checked for.
//
// Every error is a tinymlir::Error "[checkpoint] <path>: <reason>".
#pragma once

#include "tinymlir/array.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tinymlir::gpt2 {

struct Config {
  int64_t n_layer = 0;
  int64_t n_head = 0;
  int64_t n_embd = 0;
  int64_t n_positions = 0; ///< maximum context length (HF n_positions / n_ctx)
  int64_t vocab_size = 0;
  double layer_norm_epsilon = 1e-5;

  int64_t headDim() const { return n_embd / n_head; }
  /// Number of float32 parameters (wte, wpe, the layers, ln_f).
  int64_t numParameters() const;

  /// GPT-2 small: 12 layers, 12 heads, 768 wide, 1024 positions, 50257 tokens.
  static Config gpt2_124M();
  /// A tiny model with the real vocabulary: 2 layers, 4 heads, 64 wide, 128 positions.
  static Config tiny();
};

/// Throws "[checkpoint] <where>: <field> ..." unless all sizes are positive,
/// n_embd % n_head == 0, the sizes are within sane bounds (so that no tensor
/// size overflows) and layer_norm_epsilon is 1e-5.
void validateConfig(const Config &config, const std::string &where);

/// Reads and validates `dir`/config.json. Required: n_layer, n_head, n_embd,
/// vocab_size, and n_positions or n_ctx (if both are present, n_positions).
/// layer_norm_epsilon (default 1e-5) must be 1e-5, activation_function (default
/// "gelu_new") must be "gelu_new", model_type (if present) must be "gpt2";
/// HF options that change the architecture (scale_attn_weights false,
/// scale_attn_by_inverse_layer_idx, reorder_and_upcast_attn,
/// add_cross_attention, n_inner != 4 * n_embd) are rejected.
Config loadConfig(const std::string &dir);

/// Writes `dir`/config.json with the Hugging Face GPT-2 fields.
void writeConfig(const std::string &dir, const Config &config);

/// One entry of a safetensors header.
struct TensorInfo {
  std::string dtype;  ///< safetensors spelling: "F32", "F16", "BF16", "I64", ...
  Shape shape;        ///< non-negative dimensions
  uint64_t begin = 0; ///< byte offsets into the data section, begin <= end
  uint64_t end = 0;
};

/// Bytes per element of a safetensors dtype name, or 0 if unknown.
size_t safetensorsDTypeSize(const std::string &dtype);

/// Parses and validates the header of a whole safetensors file held in
/// [data, data + size): header length (N <= size - 8, N <= 100 MB), JSON object,
/// no duplicate names, each entry's dtype (a known safetensors dtype), shape
/// (non-negative integers) and data_offsets (begin <= end <= data section
/// size, end - begin == product(shape) * dtype size without overflow), and
/// "__metadata__" (object of strings, not returned). `path` is only used in
/// messages. Never reads outside the buffer.
std::map<std::string, TensorInfo> parseSafetensorsHeader(const uint8_t *data, size_t size,
                                                         const std::string &path);

/// Offset of the data section in a safetensors file whose header was accepted
/// by parseSafetensorsHeader: 8 + N.
uint64_t safetensorsDataOffset(const uint8_t *data, size_t size);

struct LayerWeights {
  Array ln_1_w, ln_1_b;       ///< (C)
  Array attn_w, attn_b;       ///< c_attn: (C, 3C), (3C)
  Array proj_w, proj_b;       ///< attn.c_proj: (C, C), (C)
  Array ln_2_w, ln_2_b;       ///< (C)
  Array fc_w, fc_b;           ///< mlp.c_fc: (C, 4C), (4C)
  Array fc_proj_w, fc_proj_b; ///< mlp.c_proj: (4C, C), (C)
};

/// All weights as row-major float32 arrays. When loaded from a file they view a
/// private (copy-on-write) memory mapping that the arrays keep alive; writing
/// to them never changes the file. Tensors whose data is not 4-byte aligned in
/// the file are copied.
struct Weights {
  Config config;
  Array wte; ///< (V, C)
  Array wpe; ///< (P, C)
  std::vector<LayerWeights> layers;
  Array ln_f_w, ln_f_b; ///< (C)
};

/// Builds Weights from a whole safetensors file in memory, checking every
/// required tensor (name, with or without "transformer.", dtype F32, exact
/// shape from `config`). The arrays view `data` and share `owner` (pass the
/// owner of the buffer, or nullptr if the caller keeps it alive); `data` must
/// be writable if the arrays will be written.
Weights weightsFromSafetensors(const uint8_t *data, size_t size, const Config &config,
                               const std::string &path, std::shared_ptr<void> owner);

/// Loads `dir`/config.json and memory-maps `dir`/model.safetensors.
Weights loadCheckpoint(const std::string &dir);

/// The Hugging Face names of the required tensors, without prefix, in file order.
std::vector<std::string> tensorNames(const Config &config);
/// The shape `name` (no prefix) must have under `config`.
Shape expectedShape(const Config &config, const std::string &name);

} // namespace tinymlir::gpt2
