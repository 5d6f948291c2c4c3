// Kernels written with the public API (the models layer: no compiler header).
// The compiler knows none of these names: each is a composition of primitives,
// with the NumPy reference's formulas and evaluation order (which fixes the
// dtypes: float64 scalars promote).
#include "models/nn/Kernels.h"

#include <tinymlir/array.h>

#include <cmath>
#include <map>
#include <mutex>
#include <numbers>
#include <string>
#include <tuple>

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

namespace {
/// The frontend's errors: "[op] message", NumPy's ValueError unless `kind`
/// says otherwise.
[[noreturn]] void fail(const char *op, const std::string &message,
                       ErrorKind kind = ErrorKind::Value) {
  throw Error(std::string("[") + op + "] " + message, kind);
}
/// 0..n-1 (int32) along `axis` of a rank-2 array, one array per size and axis:
/// the same array is one constant input of a kernel however often it is used
/// (each layer's mask).
Tensor positionsAlong(int64_t n, int64_t axis) {
  static std::mutex mutex;
  static std::map<std::tuple<int64_t, int64_t>, Array> cache;
  std::lock_guard lock(mutex);
  auto key = std::make_tuple(n, axis);
  auto it = cache.find(key);
  if (it == cache.end()) {
    if (cache.size() >= 256)
      cache.clear(); // the arrays live on in the graphs that use them
    Shape shape{1, 1};
    shape[static_cast<size_t>(axis)] = n;
    it = cache.emplace(key, Array::arange(n, DType::i32).reshaped(shape)).first;
  }
  return Tensor(it->second);
}
/// GPT-2's additive mask: -1e10 where a column comes after its row's
/// position, else 0. Columns and rows are int32 positions that broadcast
/// to (rows, columns): a where of a comparison, fused into its reader.
Tensor maskAfter(const Tensor &columns, const Tensor &rows, DType dtype) {
  return where(greater(columns, rows), ScalarType{dtype}(-1e10), ScalarType{dtype}(0.0));
}
void checkMaskDType(DType dtype) {
  if (!isFloat(dtype))
    fail("causal_mask", std::string("dtype must be float32 or float64, got ") + dtypeName(dtype),
         ErrorKind::Type);
}
} // namespace

Tensor causalMask(int64_t n, DType dtype) {
  if (n <= 0)
    fail("causal_mask", "size must be positive, got " + std::to_string(n));
  checkMaskDType(dtype);
  return maskAfter(positionsAlong(n, 1), positionsAlong(n, 0), dtype);
}

Tensor causalMask(int64_t rows, int64_t columns, const Tensor &start, DType dtype) {
  if (!start.valid())
    fail("causal_mask", "operand is an invalid (default-constructed) Tensor");
  if (rows <= 0 || columns <= 0)
    fail("causal_mask", "sizes must be positive, got (" + std::to_string(rows) + ", " +
                            std::to_string(columns) + ")");
  checkMaskDType(dtype);
  // A Python number (weak) is int64, uint64, float64 or complex128: never int32.
  const Shape &shape = start.shape();
  if (start.dtype() != DType::i32 || !(shape.empty() || shape == Shape{rows}))
    fail("causal_mask",
         "start must be a rank-0 int32 tensor or one of shape (" + std::to_string(rows) +
             ",), got " + dtypeName(start.dtype()) + " " + shapeString(shape),
         ErrorKind::Type);
  // Row r sits at position start + r, or at start[r].
  Tensor positions = shape.empty() ? positionsAlong(rows, 0) + start : reshape(start, {rows, 1});
  return maskAfter(positionsAlong(columns, 1), positions, dtype);
}

} // namespace tinymlir
