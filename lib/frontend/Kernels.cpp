// Kernels written with the frontend. The compiler knows none of these names:
// each is a composition of primitives, with the NumPy reference's formulas and
// evaluation order (which fixes the dtypes: float64 scalars promote).
#include <tinymlir/kernels.h>

#include <cmath>
#include <numbers>

namespace tinymlir {

Tensor geluWith(const Tensor &x, DType constants) {
  const Tensor c = ScalarType{constants}(std::sqrt(2 / std::numbers::pi));
  return 0.5 * x * (1 + tanh(c * (x + 0.044715 * pow(x, 3))));
}

// np.sqrt(2 / np.pi) is a float64 NumPy scalar: it promotes float32 to float64.
Tensor gelu(const Tensor &x) { return geluWith(x, DType::f64); }

Tensor softmax(const Tensor &x) {
  Tensor numerator = exp(x - max(x, -1, /*keepdims=*/true));
  return numerator / sum(numerator, -1, /*keepdims=*/true);
}

Tensor layerNorm(const Tensor &x, const Tensor &gain, const Tensor &bias, double eps) {
  Tensor mu = mean(x, -1, /*keepdims=*/true);
  Tensor variance = var(x, -1, /*keepdims=*/true);
  return gain * (x - mu) / sqrt(variance + eps) + bias;
}

Tensor linear(const Tensor &x, const Tensor &w, const Tensor &b) { return matmul(x, w) + b; }

Tensor splitHeads(const Tensor &x, int64_t heads) {
  return transpose(reshape(x, {x.dim(0), heads, x.dim(1) / heads}), {1, 0, 2});
}

Tensor attentionHeads(const Tensor &q, const Tensor &keysT, const Tensor &values,
                      const Tensor &mask, DType constants) {
  const int64_t H = q.dim(0), T = q.dim(1), D = q.dim(2);
  // np.sqrt(q.shape[-1]) is a float64 NumPy scalar: the scores become float64.
  Tensor scale = ScalarType{constants}(std::sqrt(static_cast<double>(D)));
  Tensor scores = matmul(q, keysT) / scale;                   // (H, T, P)
  Tensor weighted = matmul(softmax(scores + mask), values);   // (H, T, D)
  return reshape(transpose(weighted, {1, 0, 2}), {T, H * D}); // (T, C)
}

Tensor attention(const Tensor &x, const LinearParams &qkv, const LinearParams &out, int64_t heads,
                 DType constants) {
  const int64_t T = x.dim(0), C = x.dim(1);
  if (heads <= 0 || C % heads != 0)
    throw Error("[attention] width " + std::to_string(C) + " of x " + shapeString(x.shape()) +
                " is not divisible by " + std::to_string(heads) + " heads");
  Tensor packed = linear(x, qkv.w, qkv.b);          // (T, 3C)
  std::vector<Tensor> parts = split(packed, 3, -1); // 3 x (T, C)
  Tensor q = splitHeads(parts[0], heads), k = splitHeads(parts[1], heads),
         v = splitHeads(parts[2], heads);      // (H, T, D)
  Tensor mask = causalMask(T, packed.dtype()); // (T, T), -1e10 above diagonal
  return linear(attentionHeads(q, transpose(k, {0, 2, 1}), v, mask, constants), out.w, out.b);
}

} // namespace tinymlir
