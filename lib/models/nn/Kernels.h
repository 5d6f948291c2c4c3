// The neural-network kernels GPT-2 runs (library tinymlir_nn, the models
// layer): functions written with the public API (include/tinymlir), not
// compiler primitives; the compiler knows none of these names. Their formulas
// (and dtypes) follow the NumPy GPT-2 reference.
#pragma once

#include <tinymlir/tensor.h>

#include <tuple>
#include <vector>

namespace tinymlir {

// `constants`: the dtype of the scalars the NumPy reference writes as float64
// (np.sqrt(2 / np.pi), np.sqrt(D)). float64, as there, promotes float32
// activations to float64; float32 keeps a float32 model in float32 throughout
// (as llm.c and PyTorch run GPT-2).

/// GELU, tanh form; the float64 sqrt(2/pi) promotes float32 input to float64.
Tensor gelu(const Tensor &x);
/// GELU whose constant sqrt(2/pi) has dtype `constants` (float32 keeps float32
/// input in float32).
Tensor geluWith(const Tensor &x, DType constants);
/// Softmax over the last axis, stabilized by the row maximum.
Tensor softmax(const Tensor &x);
/// Layer normalization over the last axis: centered variance, eps 1e-5.
Tensor layerNorm(const Tensor &x, const Tensor &gain, const Tensor &bias, double eps = 1e-5);

/// x @ w + b.
Tensor linear(const Tensor &x, const Tensor &w, const Tensor &b);

struct LayerNormParams {
  Tensor gain, bias;
};
struct LinearParams {
  Tensor w, b;
};
inline auto tinymlir_fields(LayerNormParams &p) { return std::tie(p.gain, p.bias); }
inline auto tinymlir_fields(LinearParams &p) { return std::tie(p.w, p.b); }

/// GPT-2's additive causal mask.
/// (n, n): 0 on and below the diagonal, -1e10 above.
Tensor causalMask(int64_t n, DType dtype);
/// (rows, columns) for rows that sit at positions start, start+1, ... of a
/// sequence: column s is 0 where s <= start + row, -1e10 after. `start` is a
/// rank-0 int32 tensor (a runtime value: one compiled function serves every
/// position, as in incremental decoding), or of shape (rows,), each row's own
/// position (rows of different sequences decoded together): 0 where
/// s <= start[row].
Tensor causalMask(int64_t rows, int64_t columns, const Tensor &start, DType dtype);

/// (T, H * D) -> (H, T, D): heads as a batch dimension.
Tensor splitHeads(const Tensor &x, int64_t heads);
/// Scaled dot-product attention of every head, heads merged again:
/// softmax(q @ keysT / sqrt(D) + mask) @ values -> (T, H * D), for queries q
/// (H, T, D), keys transposed (H, D, P), values (H, P, D) and an additive mask
/// (T, P). With float64 constants the scores (and the result) are float64.
Tensor attentionHeads(const Tensor &q, const Tensor &keysT, const Tensor &values,
                      const Tensor &mask, DType constants = DType::f64);
/// Causal multi-head self-attention of x (T, C): packed QKV projection, split,
/// attentionHeads with a causal mask, output projection.
Tensor attention(const Tensor &x, const LinearParams &qkv, const LinearParams &out, int64_t heads,
                 DType constants = DType::f64);

} // namespace tinymlir
