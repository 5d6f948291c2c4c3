// Matrix and vector products: dot, vdot, inner, outer, tensordot, cross, kron,
// vecdot, matvec, vecmat, linalg.multi_dot and matrix_power; and trace.
#include "frontend/FunctionsCommon.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace tinymlir {
using detail::fail;

Tensor trace(const Tensor &a, int64_t offset, int64_t axis1, int64_t axis2,
             std::optional<DType> dtype) {
  Reduction how;
  how.dtype = dtype;
  return reduce("sum", diagonal(a, offset, axis1, axis2), -1, false, how);
}

Tensor tensordot(const Tensor &a, const Tensor &b, int64_t n) {
  if (n < 0 || n > a.rank() || n > b.rank())
    fail("tensordot", "shape-mismatch for sum (" + std::to_string(n) + " axes of " +
                          shapeString(a.shape()) + " and " + shapeString(b.shape()) + ")");
  std::vector<int64_t> axesA, axesB;
  for (int64_t k = 0; k < n; ++k)
    axesA.push_back(a.rank() - n + k), axesB.push_back(k);
  return tensordot(a, b, axesA, axesB);
}

Tensor dot(const Tensor &a, const Tensor &b) {
  const Tensor x = strong(a), y = strong(b);
  if (x.rank() == 0 || y.rank() == 0)
    return x * y;
  if (x.rank() <= 2 && y.rank() <= 2)
    return matmul(x, y);
  return tensordot(x, y, {x.rank() - 1}, {y.rank() == 1 ? 0 : y.rank() - 2});
}

Tensor outer(const Tensor &a, const Tensor &b) {
  const Tensor x = strong(a), y = strong(b);
  return reshape(x, {numElements(x.shape()), 1}) * reshape(y, {1, numElements(y.shape())});
}

Tensor tensordot(const Tensor &a, const Tensor &b, std::vector<int64_t> axesA,
                 std::vector<int64_t> axesB) {
  if (axesA.size() != axesB.size())
    fail("tensordot", "shape-mismatch for sum (different numbers of axes)");
  for (int64_t &i : axesA)
    i = normalizeAxes("tensordot", Axes(i), a.rank())[0];
  for (int64_t &j : axesB)
    j = normalizeAxes("tensordot", Axes(j), b.rank())[0];
  const Shape &sa = a.shape(), &sb = b.shape();
  int64_t k = 1;
  for (size_t p = 0; p < axesA.size(); ++p) {
    const int64_t i = axesA[p], j = axesB[p];
    if (sa[static_cast<size_t>(i)] != sb[static_cast<size_t>(j)])
      fail("tensordot", "shape-mismatch for sum: axis " + std::to_string(i) + " of " +
                            shapeString(sa) + " and axis " + std::to_string(j) + " of " +
                            shapeString(sb));
    k *= sa[static_cast<size_t>(i)];
  }
  std::vector<int64_t> permA, permB = axesB;
  Shape out;
  for (int64_t i = 0; i < a.rank(); ++i)
    if (std::find(axesA.begin(), axesA.end(), i) == axesA.end()) {
      permA.push_back(i);
      out.push_back(sa[static_cast<size_t>(i)]);
    }
  const int64_t m = numElements(out);
  permA.insert(permA.end(), axesA.begin(), axesA.end());
  int64_t n = 1;
  for (int64_t j = 0; j < b.rank(); ++j)
    if (std::find(axesB.begin(), axesB.end(), j) == axesB.end()) {
      permB.push_back(j);
      out.push_back(sb[static_cast<size_t>(j)]);
      n *= sb[static_cast<size_t>(j)];
    }
  const Tensor left = reshape(transpose(a, permA), {m, k});
  const Tensor right = reshape(transpose(b, permB), {k, n});
  return reshape(matmul(left, right), out);
}

namespace {

/// x with `axis` moved to the end (to == -1) or the last axis moved to `to`.
Tensor moveAxis(const Tensor &x, int64_t from, int64_t to) {
  std::vector<int64_t> order;
  for (int64_t d = 0; d < x.rank(); ++d)
    if (d != from)
      order.push_back(d);
  order.insert(order.begin() + to, from);
  return transpose(x, order);
}

} // namespace

Tensor cross(const Tensor &a, const Tensor &b, int64_t axisA, int64_t axisB, int64_t axisC) {
  if (a.rank() == 0 || b.rank() == 0)
    fail("cross", "cross requires arrays of at least one dimension");
  const int64_t ra = a.rank(), rb = b.rank();
  const Tensor ta = moveAxis(a, normalizeAxes("cross", Axes(axisA), ra)[0], ra - 1);
  const Tensor tb = moveAxis(b, normalizeAxes("cross", Axes(axisB), rb)[0], rb - 1);
  const int64_t na = ta.shape().back(), nb = tb.shape().back();
  if ((na != 2 && na != 3) || (nb != 2 && nb != 3))
    fail("cross", "incompatible dimensions for cross product\n(dimension must be 2 or 3)");
  auto part = [](const Tensor &t, int64_t i) { return Ref(t).get({Ellipsis{}, i}).value(); };
  const Tensor a0 = part(ta, 0), a1 = part(ta, 1), b0 = part(tb, 0), b1 = part(tb, 1);
  const Tensor z = a0 * b1 - a1 * b0; // NumPy's order of operations, component by component
  if (na == 2 && nb == 2)
    return z;
  Tensor x, y;
  if (na == 3 && nb == 3) {
    const Tensor a2 = part(ta, 2), b2 = part(tb, 2);
    x = a1 * b2 - a2 * b1;
    y = a2 * b0 - a0 * b2;
  } else if (na == 2) { // a's z is 0
    const Tensor b2 = part(tb, 2);
    x = a1 * b2;
    y = -(a0 * b2);
  } else { // b's z is 0
    const Tensor a2 = part(ta, 2);
    x = -(a2 * b1);
    y = a2 * b0;
  }
  const Shape &shape = z.shape();
  const Tensor c = stack({broadcastTo(x, shape), broadcastTo(y, shape), z}, -1);
  const int64_t to = normalizeAxes("cross", Axes(axisC), c.rank())[0];
  return moveAxis(c, c.rank() - 1, to);
}

Tensor inner(const Tensor &x, const Tensor &y) {
  const Tensor a = strong(x), b = strong(y); // arrays, as np.inner's asarray makes them
  if (a.rank() == 0 || b.rank() == 0)
    return multiply(a, b);
  const int64_t n = a.shape().back(), m = b.shape().back();
  if (n != m)
    fail("inner", "shapes " + shapeString(a.shape()) + " and " + shapeString(b.shape()) +
                      " not aligned: " + std::to_string(n) + " (dim " +
                      std::to_string(a.rank() - 1) + ") != " + std::to_string(m) + " (dim " +
                      std::to_string(b.rank() - 1) + ")");
  return tensordot(a, b, {-1}, {-1});
}

Tensor vdot(const Tensor &x, const Tensor &y) {
  const Tensor a = strong(x), b = strong(y);
  const Tensor fa = reshape(a, {numElements(a.shape())}), fb = reshape(b, {numElements(b.shape())});
  if (fa.shape() != fb.shape())
    fail("vdot", "vectors have different lengths: " + shapeString(a.shape()) + " and " +
                     shapeString(b.shape()));
  return matmul(isComplex(fa.dtype()) ? conjugate(fa) : fa, fb);
}

Tensor kron(const Tensor &operandA, const Tensor &operandB) {
  const Tensor a = strong(operandA), b = strong(operandB);
  const bool logical = a.dtype() == DType::b8 && b.dtype() == DType::b8;
  auto multiply = [&](const Tensor &x, const Tensor &y) {
    return logical ? logical_and(x, y) : x * y;
  };
  if (a.rank() == 0 || b.rank() == 0)
    return multiply(a, b);
  const size_t rank = static_cast<size_t>(std::max(a.rank(), b.rank()));
  auto padded = [&](const Tensor &t) {
    Shape s(rank - static_cast<size_t>(t.rank()), 1);
    s.insert(s.end(), t.shape().begin(), t.shape().end());
    return s;
  };
  const Shape as = padded(a), bs = padded(b);
  Shape ashape, bshape, out; // a as (s0, 1, s1, 1...), b as (1, t0, 1, t1...)
  for (size_t i = 0; i < rank; ++i) {
    ashape.insert(ashape.end(), {as[i], 1});
    bshape.insert(bshape.end(), {1, bs[i]});
    out.push_back(as[i] * bs[i]);
  }
  return reshape(multiply(reshape(a, ashape), reshape(b, bshape)), out);
}

void dotInto(Ref &out, const Tensor &result) {
  if (out.shape().size() != result.shape().size() || out.dtype() != result.dtype() ||
      !out.contiguous())
    fail("dot", "output array is not acceptable (must have the right datatype, number of "
                "dimensions, and be a C-Array)");
  if (out.shape() != result.shape())
    fail("dot", "output array has wrong dimensions");
  out.update(result, "dot", "no");
}

Tensor matrixPower(const Tensor &a, int64_t n) {
  const Shape &s = a.shape();
  if (s.size() < 2 || s[s.size() - 1] != s[s.size() - 2])
    fail("matrix_power", "Last 2 dimensions of the array must be square", ErrorKind::LinAlg);
  if (n == 0) {
    const int64_t m = s.back();
    const Tensor eye = equal(detail::iotaAlong(m, 0, 2), detail::iotaAlong(m, 1, 2));
    return broadcastTo(cast(eye, a.dtype()), s);
  }
  Tensor t = a;
  if (n < 0) {
    t = la::inv(t);
    n = -n;
  }
  if (n == 1)
    return t; // (a copy to Python: an array of its own)
  if (n == 2)
    return matmul(t, t);
  if (n == 3)
    return matmul(matmul(t, t), t);
  Tensor result, z;
  while (n > 0) {
    z = z.valid() ? matmul(z, z) : t;
    const int64_t bit = n % 2;
    n /= 2;
    if (bit)
      result = result.valid() ? matmul(result, z) : z;
  }
  return result;
}

namespace la {

Tensor multiDot(const std::vector<Tensor> &given) {
  const size_t n = given.size();
  if (n < 2)
    fail("multi_dot", "Expecting at least two arrays.");
  if (n == 2)
    return dot(given[0], given[1]);
  std::vector<Tensor> a;
  for (const Tensor &t : given)
    a.push_back(strong(t));
  const bool firstVector = a.front().rank() == 1, lastVector = a.back().rank() == 1;
  if (firstVector)
    a.front() = reshape(a.front(), {1, a.front().shape()[0]});
  if (lastVector)
    a.back() = reshape(a.back(), {a.back().shape()[0], 1});
  for (const Tensor &t : a)
    if (t.rank() != 2)
      fail("multi_dot",
           std::to_string(t.rank()) + "-dimensional array given. Array must be two-dimensional",
           ErrorKind::LinAlg);
  // NumPy's order: for three, its cost formula; beyond, its matrix-chain table
  std::function<Tensor(size_t, size_t)> chain;
  std::vector<std::vector<size_t>> split(n, std::vector<size_t>(n, 0));
  if (n == 3) {
    const double a0 = static_cast<double>(a[0].shape()[0]),
                 a1 = static_cast<double>(a[0].shape()[1]),
                 b1 = static_cast<double>(a[2].shape()[0]),
                 c1 = static_cast<double>(a[2].shape()[1]);
    split[0][2] = a0 * b1 * (a1 + c1) < a1 * c1 * (a0 + b1) ? 1 : 0; // (AB)C, else A(BC)
    split[1][2] = 1;
  } else {
    std::vector<double> p;
    for (const Tensor &t : a)
      p.push_back(static_cast<double>(t.shape()[0]));
    p.push_back(static_cast<double>(a.back().shape()[1]));
    std::vector<std::vector<double>> cost(n, std::vector<double>(n, 0.0));
    for (size_t l = 1; l < n; ++l)
      for (size_t i = 0; i + l < n; ++i) {
        const size_t j = i + l;
        cost[i][j] = std::numeric_limits<double>::infinity();
        for (size_t k = i; k < j; ++k) {
          const double q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1];
          if (q < cost[i][j]) {
            cost[i][j] = q;
            split[i][j] = k;
          }
        }
      }
  }
  chain = [&](size_t i, size_t j) -> Tensor {
    return i == j ? a[i] : dot(chain(i, split[i][j]), chain(split[i][j] + 1, j));
  };
  const Tensor result = chain(0, n - 1);
  if (firstVector && lastVector)
    return reshape(result, {});
  return firstVector || lastVector ? reshape(result, {numElements(result.shape())}) : result;
}

} // namespace la

namespace {
/// sum(a * b) over the last axis of both (a conjugated where `conj`), in the
/// product's dtype, after NumPy's check of the core sizes (gufunc `name`
/// with `signature`).
Tensor coreSum(const char *name, const char *signature, Tensor a, const Tensor &b, bool conj) {
  const int64_t n = a.shape().back(), m = b.shape().back();
  if (n != m)
    fail(name, std::string(name) +
                   ": Input operand 1 has a mismatch in its core dimension 0, "
                   "with gufunc signature " +
                   signature + " (size " + std::to_string(m) + " is different from " +
                   std::to_string(n) + ")");
  if (conj && isComplex(a.dtype()))
    a = conjugate(a);
  const Tensor product = a * b;
  Reduction how;
  how.dtype = product.dtype();
  return reduce("sum", product, -1, false, how);
}
} // namespace

Tensor vecdot(const Tensor &a, const Tensor &b, int64_t axis) {
  const Tensor x = strong(a), y = strong(b);
  if (x.rank() == 0 || y.rank() == 0)
    fail("vecdot", "vecdot: Input operand 0 does not have enough dimensions (has 0, gufunc core "
                   "with signature (n),(n)->() requires 1)");
  const Tensor u = moveAxis(x, normalizeAxes("vecdot", Axes(axis), x.rank())[0], x.rank() - 1),
               v = moveAxis(y, normalizeAxes("vecdot", Axes(axis), y.rank())[0], y.rank() - 1);
  return coreSum("vecdot", "(n),(n)->()", u, v, true);
}

Tensor matvec(const Tensor &m, const Tensor &v) {
  const Tensor x = strong(m), y = strong(v);
  if (x.rank() < 2 || y.rank() < 1)
    fail("matvec", "matvec: Input operand does not have enough dimensions (gufunc core with "
                   "signature (m,n),(n)->(m))");
  Shape row = y.shape();
  row.insert(row.end() - 1, 1); // (..., 1, n)
  return coreSum("matvec", "(m,n),(n)->(m)", x, reshape(y, row), false);
}

Tensor vecmat(const Tensor &v, const Tensor &m) {
  const Tensor x = strong(v), y = strong(m);
  if (x.rank() < 1 || y.rank() < 2)
    fail("vecmat", "vecmat: Input operand does not have enough dimensions (gufunc core with "
                   "signature (n),(n,m)->(m))");
  Shape column = x.shape();
  column.insert(column.end() - 1, 1); // (..., 1, n), against (..., m, n)
  return coreSum("vecmat", "(n),(n,m)->(m)", reshape(x, column),
                 moveAxis(y, y.rank() - 2, y.rank() - 1), true);
}

} // namespace tinymlir
