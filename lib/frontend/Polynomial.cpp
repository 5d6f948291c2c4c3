// NumPy's polynomial functions: polyval, and polyfit (least squares on the
// Vandermonde matrix, np.linalg.lstsq).
#include "frontend/Graph.h"

#include <tinymlir/index.h>
#include <tinymlir/numpy.h>

#include <string>

namespace tinymlir {
using detail::fail;

Tensor polyval(const Tensor &p, const Tensor &x) {
  if (p.rank() != 1)
    fail("polyval", "tinymlir traces numpy.polyval of 1-D coefficients", ErrorKind::Trace);
  // NumPy's: y = zeros_like(x); for pv in p: y = y * x + pv.
  Tensor y = multiply(x, ScalarType{x.dtype()}(0.0));
  for (int64_t i = 0; i < p.shape()[0]; ++i)
    y = y * x + Ref(p).get({i}).value();
  return y;
}

Tensor polyfit(const Tensor &x, const Tensor &y, int64_t deg, const Tensor &w) {
  constexpr const char *op = "polyfit";
  const int64_t order = deg + 1;
  const auto asFloat = [](const Tensor &t) { return t + weakScalar(0.0, false); }; // NumPy's + 0.0
  const Tensor xf = asFloat(x), yf = asFloat(y);
  if (deg < 0)
    fail(op, "expected deg >= 0");
  if (xf.rank() != 1)
    fail(op, "expected 1D vector for x", ErrorKind::Type);
  if (xf.shape()[0] == 0)
    fail(op, "expected non-empty vector for x", ErrorKind::Type);
  if (yf.rank() < 1 || yf.rank() > 2)
    fail(op, "expected 1D or 2D array for y", ErrorKind::Type);
  if (xf.shape()[0] != yf.shape()[0])
    fail(op, "expected x and y to have same length", ErrorKind::Type);
  if (xf.shape()[0] < order) // NumPy's rcond, len(x) eps, is lstsq's default only here
    fail(op,
         "tinymlir traces numpy.polyfit with at least deg + 1 points (got " +
             std::to_string(xf.shape()[0]) + " for degree " + std::to_string(deg) + ")",
         ErrorKind::Trace);
  Tensor lhs = vander(xf, order, false), rhs = yf;
  if (w.valid()) {
    const Tensor wf = asFloat(w);
    if (wf.rank() != 1)
      fail(op, "expected a 1-d array for weights", ErrorKind::Type);
    if (wf.shape()[0] != yf.shape()[0])
      fail(op, "expected w and y to have the same length", ErrorKind::Type);
    const Tensor column = reshape(wf, {wf.shape()[0], 1});
    lhs = lhs * column;
    rhs = rhs.rank() == 2 ? rhs * column : rhs * wf;
  }
  // NumPy's: the columns scaled to unit norm, lstsq, the coefficients scaled back
  const Tensor scale = sqrt(sum(lhs * lhs, 0));
  const Tensor c = std::get<0>(la::lstsq(lhs / scale, rhs));
  return c.rank() == 2 ? c / reshape(scale, {order, 1}) : c / scale;
}

} // namespace tinymlir
