// np.linalg's norms and numbers from singular values (norm, vector_norm, cond,
// matrix_rank) and pinv, made of the decompositions of Linalg.cpp.
#include "frontend/FunctionsCommon.h"

#include <algorithm>
#include <cfloat>
#include <limits>
#include <string>
#include <vector>

namespace tinymlir {
using detail::fail;

namespace la {
namespace {
/// NumPy's finfo(dtype).eps of a float or complex dtype.
double epsilonOf(DType d) {
  return realPart(d) == DType::f32   ? FLT_EPSILON
         : realPart(d) == DType::f16 ? 0x1p-10
                                     : DBL_EPSILON;
}
/// The axis `a` of a rank-`rank` array, from the end where negative.
int64_t normAxis(int64_t a, int64_t rank) {
  const int64_t axis = a < 0 ? a + rank : a;
  if (axis < 0 || axis >= rank)
    fail("norm",
         "axis " + std::to_string(a) + " is out of bounds for array of dimension " +
             std::to_string(rank),
         ErrorKind::Axis);
  return axis;
}
bool isOrder(const NormOrder &ord, double p) { return ord.name.empty() && ord.p && *ord.p == p; }
} // namespace

Tensor norm(const Tensor &x, const NormOrder &ord, const Axes &axes, bool keepdims) {
  const Tensor t = isFloat(x.dtype()) || isComplex(x.dtype()) ? x : cast(x, DType::f64);
  const int64_t rank = static_cast<int64_t>(t.shape().size());
  const bool none = !ord.p && ord.name.empty();
  std::vector<int64_t> over;
  if (!axes.list) {
    if (none) { // the 2-norm of all of it, as NumPy's
      const Tensor squares = isComplex(t.dtype()) ? real(t) * real(t) + imag(t) * imag(t) : t * t;
      const Tensor r = sqrt(sum(squares));
      return keepdims ? reshape(r, Shape(static_cast<size_t>(rank), 1)) : r;
    }
    if (rank != 1 && rank != 2)
      fail("norm", "Improper number of dimensions to norm.");
    for (int64_t i = 0; i < rank; ++i)
      over.push_back(i);
  } else {
    for (int64_t a : *axes.list)
      over.push_back(normAxis(a, rank));
  }
  const double inf = std::numeric_limits<double>::infinity();
  if (over.size() == 1) {
    const Tensor a = abs(t);
    const Axes along{over};
    if (none || isOrder(ord, 2))
      return sqrt(sum(a * a, along, keepdims));
    if (isOrder(ord, inf))
      return max(a, along, keepdims);
    if (isOrder(ord, -inf))
      return min(a, along, keepdims);
    if (isOrder(ord, 0))
      return cast(sum(not_equal(t, ScalarType{t.dtype()}(0.0)), along, keepdims), a.dtype());
    if (isOrder(ord, 1))
      return sum(a, along, keepdims);
    if (!ord.name.empty())
      fail("norm", "Invalid norm order '" + ord.name + "' for vectors");
    return pow(sum(pow(a, weakScalar(*ord.p, false)), along, keepdims),
               weakScalar(1.0 / *ord.p, false));
  }
  if (over.size() != 2)
    fail("norm", "Improper number of dimensions to norm.");
  const int64_t row = over[0], col = over[1];
  if (row == col)
    fail("norm", "Duplicate axes given.");
  Shape kept = t.shape(), rest;
  for (int64_t i = 0; i < rank; ++i)
    if (i == row || i == col)
      kept[static_cast<size_t>(i)] = 1;
    else
      rest.push_back(t.shape()[static_cast<size_t>(i)]);
  Tensor r;
  if (none || ord.name == "fro") {
    const Tensor a = abs(t);
    return sqrt(sum(a * a, Axes{over}, keepdims));
  } else if (isOrder(ord, 2) || isOrder(ord, -2) || ord.name == "nuc") {
    std::vector<int64_t> order;
    for (int64_t i = 0; i < rank; ++i)
      if (i != row && i != col)
        order.push_back(i);
    order.insert(order.end(), {row, col});
    const Tensor s = singularValues(transpose(t, order));
    r = isOrder(ord, 2) ? max(s, -1) : isOrder(ord, -2) ? min(s, -1) : sum(s, -1);
  } else if (ord.name.empty() &&
             (isOrder(ord, 1) || isOrder(ord, -1) || isOrder(ord, inf) || isOrder(ord, -inf))) {
    const bool columns = isOrder(ord, 1) || isOrder(ord, -1);
    const int64_t summed = columns ? row : col, other = columns ? col : row;
    const Tensor sums = sum(abs(t), summed, /*keepdims=*/true);
    const bool largest = isOrder(ord, 1) || isOrder(ord, inf);
    r = reshape(largest ? max(sums, other, true) : min(sums, other, true), rest);
  } else {
    fail("norm", "Invalid norm order for matrices.");
  }
  return keepdims ? reshape(r, kept) : r;
}

Tensor pinv(const Tensor &a, std::optional<double> rcond, bool rtolGiven,
            std::optional<double> rtol) {
  if (rcond && rtolGiven)
    throw Error("`rtol` and `rcond` can't be both set.", ErrorKind::Value);
  return pinv(a, rcond ? rcond : rtolGiven ? rtol : std::optional<double>(1e-15));
}

Tensor pinv(const Tensor &a, std::optional<double> rcond) {
  const Tensor t = isFloat(a.dtype()) || isComplex(a.dtype()) ? a : cast(a, DType::f64);
  const Shape &shape = t.shape();
  if (shape.size() < 2)
    fail("pinv", std::to_string(shape.size()) +
                     "-dimensional array given. Array must be at least two-dimensional");
  auto [u, s, vt] = svd(t, /*full=*/false);
  const double cut = rcond ? *rcond
                           : static_cast<double>(std::max(shape[shape.size() - 2], shape.back())) *
                                 epsilonOf(t.dtype());
  const Tensor cutoff = max(s, -1, /*keepdims=*/true) * weakScalar(cut, false);
  const Tensor above = greater(s, cutoff);
  const Tensor one = ScalarType{s.dtype()}(1.0), zero = ScalarType{s.dtype()}(0.0);
  const Tensor inverse = cast(where(above, one / where(above, s, one), zero), s.dtype());
  const int64_t rank = static_cast<int64_t>(shape.size());
  auto swap = [rank](const Tensor &m) {
    std::vector<int64_t> order;
    for (int64_t i = 0; i < rank - 2; ++i)
      order.push_back(i);
    order.insert(order.end(), {rank - 1, rank - 2});
    return transpose(m, order);
  };
  Shape column = inverse.shape();
  column.push_back(1);
  return matmul(swap(vt), reshape(inverse, column) * swap(u));
}

Tensor matrixRank(const Tensor &a, const Tensor &tol, std::optional<double> rtol) {
  const Shape &shape = a.shape();
  if (shape.size() < 2)
    return cast(any(not_equal(a, ScalarType{a.dtype()}(0.0))), DType::i64);
  const Tensor s = singularValues(a);
  Tensor bound;
  if (!tol.valid()) {
    const double r = rtol ? *rtol
                          : static_cast<double>(std::max(shape[shape.size() - 2], shape.back())) *
                                epsilonOf(s.dtype());
    bound = max(s, -1, /*keepdims=*/true) * weakScalar(r, false);
  } else {
    Shape column = tol.shape();
    column.push_back(1);
    bound = reshape(tol, column);
  }
  return sum(cast(greater(s, bound), DType::i64), -1);
}

Tensor cond(const Tensor &x, const NormOrder &ord) {
  const bool none = !ord.p && ord.name.empty();
  if (!none && !isOrder(ord, 2) && !isOrder(ord, -2))
    return norm(x, ord, Axes{std::vector<int64_t>{-2, -1}}) *
           norm(inv(x), ord, Axes{std::vector<int64_t>{-2, -1}});
  const Tensor s = singularValues(x);
  const Tensor first = sortedAt(s, 0), last = sortedAt(s, s.shape().back() - 1);
  return isOrder(ord, -2) ? last / first : first / last;
}
Tensor vectorNorm(const Tensor &x, const std::optional<std::vector<int64_t>> &axes, bool keepdims,
                  const NormOrder &ord) {
  const int64_t rank = x.rank();
  std::vector<int64_t> merged, rest;
  if (axes)
    for (int64_t a : *axes)
      merged.push_back(normalizeAxes("vector_norm", Axes(a), rank)[0]);
  else
    for (int64_t a = 0; a < rank; ++a)
      merged.push_back(a);
  Shape shape{1}, kept = x.shape();
  for (int64_t a : merged) {
    shape[0] *= x.shape()[static_cast<size_t>(a)];
    kept[static_cast<size_t>(a)] = 1;
  }
  for (int64_t a = 0; a < rank; ++a)
    if (std::find(merged.begin(), merged.end(), a) == merged.end()) {
      rest.push_back(a);
      shape.push_back(x.shape()[static_cast<size_t>(a)]);
    }
  std::vector<int64_t> order = merged;
  order.insert(order.end(), rest.begin(), rest.end());
  const Tensor r = norm(reshape(transpose(x, order), shape), ord, Axes(int64_t{0}));
  return keepdims ? reshape(r, kept) : r;
}

} // namespace la

} // namespace tinymlir
