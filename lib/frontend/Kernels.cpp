// Kernels written with the frontend. The compiler knows none of these names:
// each is a composition of primitives, with the NumPy reference's formulas and
// evaluation order (which fixes the dtypes: float64 scalars promote).
#include <tinymlir/kernels.h>

#include <cmath>
#include <numbers>

namespace tinymlir {

Tensor gelu(const Tensor &x) {
  // np.sqrt(2 / np.pi) is a float64 NumPy scalar: it promotes float32 to float64.
  return 0.5 * x * (1 + tanh(f64(std::sqrt(2 / std::numbers::pi)) * (x + 0.044715 * pow(x, 3))));
}

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

Tensor attention(const Tensor &x, const LinearParams &qkv, const LinearParams &out, int64_t heads) {
  const int64_t T = x.dim(0), C = x.dim(1);
  if (heads <= 0 || C % heads != 0)
    throw Error("[attention] width " + std::to_string(C) + " of x " + shapeString(x.shape()) +
                " is not divisible by " + std::to_string(heads) + " heads");
  const int64_t D = C / heads;
  Tensor packed = linear(x, qkv.w, qkv.b);                       // (T, 3C)
  std::vector<Tensor> parts = split(packed, 3, -1);              // 3 x (T, C)
  auto byHead = [&](const Tensor &t) {                           // (T, C) -> (H, T, D)
    return transpose(reshape(t, {T, heads, D}), {1, 0, 2});
  };
  Tensor q = byHead(parts[0]), k = byHead(parts[1]), v = byHead(parts[2]);
  // np.sqrt(q.shape[-1]) is a float64 NumPy scalar: the scores become float64.
  Tensor scores = matmul(q, transpose(k, {0, 2, 1})) / f64(std::sqrt(static_cast<double>(D)));
  Tensor mask = causalMask(T, packed.dtype());                   // (T, T), -1e10 above diagonal
  Tensor weights = softmax(scores + mask);                       // (H, T, T)
  Tensor heads_out = matmul(weights, v);                         // (H, T, D)
  Tensor merged = reshape(transpose(heads_out, {1, 0, 2}), {T, C}); // (T, C)
  return linear(merged, out.w, out.b);
}

Tensor attend(const Tensor &x, const LayerNormParams &ln, const LinearParams &qkv,
              const LinearParams &out, int64_t heads) {
  return x + attention(layerNorm(x, ln.gain, ln.bias), qkv, out, heads);
}

Tensor feedforward(const Tensor &x, const LayerNormParams &ln, const LinearParams &up,
                   const LinearParams &down) {
  Tensor h = layerNorm(x, ln.gain, ln.bias);
  return x + linear(gelu(linear(h, up.w, up.b)), down.w, down.b);
}

} // namespace tinymlir
