// Programs the compiler's tests compile: the NumPy GPT-2 reference's GELU,
// softmax, layer norm and attention, written here with the public API. The
// kernels of those names are the models' (lib/models/nn, tested in
// test/gpt2/kernels_test.cpp); these copies keep the compiler's tests building
// and running without the models (-DTINYMLIR_BUILD_MODELS=OFF).
#pragma once

#include <tinymlir/tinymlir.h>

#include <cmath>
#include <numbers>
#include <vector>

namespace tinymlir::test {

/// GELU, tanh form; the float64 sqrt(2/pi) promotes float32 input to float64.
inline Tensor gelu(const Tensor &x) {
  const Tensor c = f64(std::sqrt(2 / std::numbers::pi));
  return 0.5 * x * (1 + tanh(c * (x + 0.044715 * pow(x, 3))));
}

/// Softmax over the last axis, stabilized by the row maximum.
inline Tensor softmax(const Tensor &x) {
  Tensor numerator = exp(x - max(x, -1, /*keepdims=*/true));
  return numerator / sum(numerator, -1, /*keepdims=*/true);
}

/// Layer normalization over the last axis: centered variance, eps 1e-5.
inline Tensor layerNorm(const Tensor &x, const Tensor &gain, const Tensor &bias) {
  Tensor mu = mean(x, -1, /*keepdims=*/true);
  Tensor variance = var(x, -1, /*keepdims=*/true);
  return gain * (x - mu) / sqrt(variance + 1e-5) + bias;
}

/// Causal multi-head self-attention of x (T, C) with `heads` heads: packed QKV
/// projection (C, 3C), softmax(q k^T / sqrt(D) + mask) v with -1e10 above the
/// diagonal (float64 scores, as the reference's), output projection (C, C).
inline Tensor attention(const Tensor &x, const Tensor &qkvWeight, const Tensor &qkvBias,
                        const Tensor &outWeight, const Tensor &outBias, int64_t heads) {
  const int64_t T = x.dim(0), C = x.dim(1), D = C / heads;
  Tensor packed = matmul(x, qkvWeight) + qkvBias;   // (T, 3C)
  std::vector<Tensor> parts = split(packed, 3, -1); // 3 x (T, C)
  auto splitHeads = [&](const Tensor &m) {          // (T, C) -> (H, T, D)
    return transpose(reshape(m, {T, heads, D}), {1, 0, 2});
  };
  Tensor q = splitHeads(parts[0]), k = splitHeads(parts[1]), v = splitHeads(parts[2]);
  Tensor columns = Tensor(Array::arange(T, DType::i32).reshaped({1, T}));
  Tensor rows = Tensor(Array::arange(T, DType::i32).reshaped({T, 1}));
  const DType d = packed.dtype();
  Tensor mask = where(greater(columns, rows), ScalarType{d}(-1e10), ScalarType{d}(0.0)); // (T, T)
  Tensor scores = matmul(q, transpose(k, {0, 2, 1})) / f64(std::sqrt(static_cast<double>(D)));
  Tensor weighted = matmul(softmax(scores + mask), v);                                 // (H, T, D)
  return matmul(reshape(transpose(weighted, {1, 0, 2}), {T, C}), outWeight) + outBias; // (T, C)
}

} // namespace tinymlir::test
