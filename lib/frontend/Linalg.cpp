// np.linalg's type and shape rules: operands as NumPy's linalg takes them
// (float32, float64, complex64 and complex128; integers and bools as
// float64), batches of matrices
// flattened to (B*m, n) for the LAPACK kernels (lib/runtime/Linalg.cpp), and
// their packed results read back into NumPy's shapes.
#include "frontend/Graph.h"

#include <tinymlir/tensor.h>

#include <algorithm>
#include <cctype>
#include <numeric>

namespace tinymlir::la {
namespace {
using detail::makeNode;

[[noreturn]] void fail(Op op, const std::string &message, ErrorKind kind = ErrorKind::LinAlg) {
  throw Error(std::string("[") + opName(op) + "] " + message, kind);
}

/// A batch of matrices: the operand cast as NumPy's linalg casts it, its
/// batch shape, and m, n.
struct Matrices {
  Tensor t;
  Shape batch;
  int64_t m = 0, n = 0, count = 1;
  Shape shape(std::initializer_list<int64_t> last) const {
    Shape s = batch;
    s.insert(s.end(), last);
    return s;
  }
};

Matrices matrices(Op op, const Tensor &a, bool square) {
  if (!a.valid())
    fail(op, "operand is an invalid (default-constructed) Tensor", ErrorKind::Value);
  const Shape &s = a.shape();
  DType d = a.dtype();
  if (d == DType::f16)
    fail(op, "array type float16 is unsupported in linalg", ErrorKind::Type);
  if (s.size() < 2)
    fail(op, std::to_string(s.size()) +
                 "-dimensional array given. Array must be at least two-dimensional");
  if (square && s.end()[-1] != s.end()[-2])
    fail(op, "Last 2 dimensions of the array must be square");
  Matrices r;
  r.t = isFloat(d) || isComplex(d) ? a : cast(a, DType::f64); // NumPy's: integers, bools in float64
  r.batch = Shape(s.begin(), s.end() - 2);
  r.m = s.end()[-2];
  r.n = s.back();
  r.count = numElements(r.batch);
  return r;
}

/// The kernel `op` on the (B*m, n) rows of `inputs`, its result (rows, columns).
Tensor kernel(Op op, const std::vector<Tensor> &inputs, int64_t rows, int64_t columns,
              int64_t flag = 0) {
  std::vector<detail::NodePtr> args;
  for (const Tensor &t : inputs)
    args.push_back(t.node());
  auto node = makeNode(op, {rows, columns}, inputs[0].dtype(), std::move(args));
  node->axes = {flag};
  return Tensor(node);
}

Tensor rows(const Matrices &a) { return reshape(a.t, {a.count * a.m, a.n}); }

/// Rows [r0, r0 + count) of each block of `per` rows of a packed (B*per, W)
/// result, columns [0, width): (B, count, width).
Tensor part(const Tensor &packed, int64_t blocks, int64_t per, int64_t r0, int64_t count,
            int64_t width) {
  Tensor t = reshape(packed, {blocks, per, packed.shape()[1]});
  return slice(t, {0, r0, 0}, {blocks, r0 + count, width});
}

bool empty(const Matrices &a) { return a.count == 0 || a.m == 0 || a.n == 0; }

/// NumPy's linalg common type of two operands: complex if either is, single
/// precision only if both are.
DType commonType(DType a, DType b) {
  auto single = [](DType t) { return t == DType::f32 || t == DType::c64; };
  const bool both = single(a) && single(b);
  if (isComplex(a) || isComplex(b))
    return both ? DType::c64 : DType::c128;
  return both ? DType::f32 : DType::f64;
}

/// The conjugate transpose of a batch of matrices (the transpose of real ones).
Tensor adjoint(const Tensor &t) {
  std::vector<int64_t> perm(t.shape().size());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm.end()[-1], perm.end()[-2]);
  Tensor r = transpose(t, perm);
  return isComplex(t.dtype()) ? conjugate(r) : r;
}

/// Singular values or eigenvalues a complex kernel packs as complex numbers:
/// their real parts, in the matrices' real dtype.
Tensor realValues(const Tensor &t) { return isComplex(t.dtype()) ? real(t) : t; }

} // namespace

Tensor cholesky(const Tensor &a, bool upper) {
  Matrices x = matrices(Op::Cholesky, a, true);
  if (empty(x))
    return full(x.shape({x.m, x.n}), 0, x.t.dtype());
  Tensor l = reshape(kernel(Op::Cholesky, {rows(x)}, x.count * x.n, x.n), x.shape({x.n, x.n}));
  return upper ? adjoint(l) : l; // A = L L^H = U^H U
}

Tensor solve(const Tensor &a, const Tensor &b) {
  Matrices x = matrices(Op::Solve, a, true);
  if (!b.valid())
    fail(Op::Solve, "operand is an invalid (default-constructed) Tensor", ErrorKind::Value);
  if (b.dtype() == DType::f16)
    fail(Op::Solve, "array type float16 is unsupported in linalg", ErrorKind::Type);
  const bool vector = b.rank() == 1;
  const DType common = commonType(x.t.dtype(), b.dtype());
  Tensor rhs = cast(b, common);
  if (x.t.dtype() != common)
    x.t = cast(x.t, common);
  if (vector)
    rhs = reshape(rhs, {b.shape()[0], 1});
  if (rhs.shape().end()[-2] != x.n)
    fail(Op::Solve,
         "the right-hand side has " + std::to_string(rhs.shape().end()[-2]) +
             " rows for a matrix of " + std::to_string(x.n),
         ErrorKind::Value);
  const int64_t k = rhs.shape().back();
  // Batches broadcast, as NumPy's gufunc: both to the common batch shape.
  Shape rb(rhs.shape().begin(), rhs.shape().end() - 2);
  Shape batch = x.batch;
  if (!vector) {
    Tensor probe = full(rb, 0, DType::f64) + full(x.batch, 0, DType::f64);
    batch = probe.shape();
  }
  Shape as = batch, bs = batch;
  as.insert(as.end(), {x.n, x.n});
  bs.insert(bs.end(), {x.n, k});
  Tensor A = broadcastTo(x.t, as), B = broadcastTo(rhs, bs);
  const int64_t count = numElements(batch);
  Shape out = bs;
  if (count == 0 || x.n == 0 || k == 0)
    return full(vector ? Shape(as.begin(), as.end() - 1) : out, 0, A.dtype());
  Tensor r =
      reshape(kernel(Op::Solve, {reshape(A, {count * x.n, x.n}), reshape(B, {count * x.n, k})},
                     count * x.n, k),
              out);
  if (vector) {
    Shape v(out.begin(), out.end() - 1);
    return reshape(r, v);
  }
  return r;
}

Tensor inv(const Tensor &a) {
  Matrices x = matrices(Op::Inv, a, true);
  if (empty(x))
    return full(x.shape({x.n, x.n}), 0, x.t.dtype());
  return reshape(kernel(Op::Inv, {rows(x)}, x.count * x.n, x.n), x.shape({x.n, x.n}));
}

Tensor det(const Tensor &a) {
  Matrices x = matrices(Op::Det, a, true);
  if (x.count == 0)
    return full(x.batch, 0, x.t.dtype());
  if (x.n == 0)
    return full(x.batch, 1, x.t.dtype());
  return reshape(kernel(Op::Det, {rows(x)}, x.count, 1), x.batch);
}

std::pair<Tensor, Tensor> slogdet(const Tensor &a) {
  Matrices x = matrices(Op::Slogdet, a, true);
  if (x.count == 0 || x.n == 0)
    return {full(x.batch, x.n == 0 ? 1 : 0, x.t.dtype()), full(x.batch, 0, realPart(x.t.dtype()))};
  Tensor packed = kernel(Op::Slogdet, {rows(x)}, x.count, 2); // (sign, log|det|) per matrix
  return {reshape(slice(packed, {0, 0}, {x.count, 1}), x.batch),
          reshape(realValues(slice(packed, {0, 1}, {x.count, 2})), x.batch)};
}

std::pair<Tensor, Tensor> eigh(const Tensor &a, std::string_view uplo) {
  const char c = uplo.size() == 1 ? static_cast<char>(std::toupper(uplo[0])) : '?';
  if (c != 'L' && c != 'U')
    throw Error("UPLO argument must be 'L' or 'U'", ErrorKind::Value);
  return eigh(a, c == 'U');
}

std::pair<Tensor, Tensor> eigh(const Tensor &a, bool upper) {
  Matrices x = matrices(Op::Eigh, a, true);
  if (upper) // the upper triangle of a is the lower one of a's adjoint
    x.t = adjoint(x.t);
  const int64_t n = x.n;
  if (empty(x))
    return {full(x.shape({n}), 0, realPart(x.t.dtype())), full(x.shape({n, n}), 0, x.t.dtype())};
  Tensor packed = kernel(Op::Eigh, {rows(x)}, x.count * (n + 1), n);
  return {reshape(realValues(part(packed, x.count, n + 1, 0, 1, n)), x.shape({n})),
          reshape(part(packed, x.count, n + 1, 1, n, n), x.shape({n, n}))};
}

Tensor singularValues(const Tensor &a) {
  Matrices x = matrices(Op::Svd, a, false);
  const int64_t k = std::min(x.m, x.n);
  if (empty(x))
    return full(x.shape({k}), 0, realPart(x.t.dtype()));
  return reshape(realValues(kernel(Op::Svd, {rows(x)}, x.count, k, 4 * x.m)), x.shape({k}));
}

std::tuple<Tensor, Tensor, Tensor> svd(const Tensor &a, bool fullMatrices) {
  Matrices x = matrices(Op::Svd, a, false);
  const int64_t m = x.m, n = x.n, k = std::min(m, n);
  const int64_t uColumns = fullMatrices ? m : k, vRows = fullMatrices ? n : k;
  if (empty(x))
    throw Error("[svd] of an empty matrix is not traced (NumPy's U and Vh are identities)");
  const int64_t per = m + 1 + vRows, width = std::max(m, n);
  Tensor packed = kernel(Op::Svd, {rows(x)}, x.count * per, width, 4 * m + (fullMatrices ? 2 : 1));
  return {reshape(part(packed, x.count, per, 0, m, uColumns), x.shape({m, uColumns})),
          reshape(realValues(part(packed, x.count, per, m, 1, k)), x.shape({k})),
          reshape(part(packed, x.count, per, m + 1, vRows, n), x.shape({vRows, n}))};
}

std::pair<Tensor, Tensor> qr(const Tensor &a) {
  Matrices x = matrices(Op::Qr, a, false);
  const int64_t m = x.m, n = x.n, k = std::min(m, n);
  if (empty(x))
    return {full(x.shape({m, k}), 0, x.t.dtype()), full(x.shape({k, n}), 0, x.t.dtype())};
  const int64_t per = m + k, width = std::max(k, n);
  Tensor packed = kernel(Op::Qr, {rows(x)}, x.count * per, width, m);
  return {reshape(part(packed, x.count, per, 0, m, k), x.shape({m, k})),
          reshape(part(packed, x.count, per, m, k, n), x.shape({k, n}))};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> lstsq(const Tensor &a, const Tensor &b) {
  Matrices x = matrices(Op::Lstsq, a, false);
  if (!x.batch.empty())
    fail(Op::Lstsq, "takes one matrix (2-D), got " + shapeString(a.shape()));
  const bool vector = b.rank() == 1;
  const DType d = commonType(x.t.dtype(), b.dtype());
  Tensor A = cast(x.t, d), B = cast(b, d);
  if (vector)
    B = reshape(B, {b.shape()[0], 1});
  if (B.rank() != 2 || B.shape()[0] != x.m)
    fail(Op::Lstsq,
         "Incompatible dimensions: " + shapeString(a.shape()) + " and " + shapeString(b.shape()));
  const int64_t m = x.m, n = x.n, k = B.shape()[1], q = std::min(m, n);
  if (m == 0 || n == 0 || k == 0)
    throw Error("[lstsq] of an empty matrix is not traced");
  const int64_t width = std::max<int64_t>({k, q, 1});
  Tensor packed = kernel(Op::Lstsq, {A, B}, n + 2, width);
  Tensor solution = slice(packed, {0, 0}, {n, k});
  Tensor s = reshape(realValues(slice(packed, {n, 0}, {n + 1, q})), {q});
  Tensor rank = reshape(cast(realValues(slice(packed, {n + 1, 0}, {n + 2, 1})), DType::i32), {});
  Tensor residuals = full({0}, 0, realPart(d));
  if (m > n) {
    // NumPy's residuals are empty below full rank: that shape would depend on
    // the data, so computing them raises then, when the kernel runs
    Tensor fullRank = greater_equal(detail::requireAtLeast(cast(rank, DType::i64), n, 1), n);
    Tensor r = abs(B - matmul(A, solution));
    residuals = where(fullRank, sum(r * r, 0), 0.0); // (k,)
  }
  if (vector)
    solution = reshape(solution, {n});
  return {solution, residuals, rank, s};
}

} // namespace tinymlir::la
