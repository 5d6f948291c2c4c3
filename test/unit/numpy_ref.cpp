#include "numpy_ref.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <cstring>
#include <random>
#include <iomanip>
#include <sstream>
#include <unistd.h>

namespace tinymlir::test {
namespace fs = std::filesystem;

Array numpy(const std::string &expression, const std::map<std::string, Array> &inputs,
            const std::string &prelude) {
  static int counter = 0;
  fs::path dir = fs::temp_directory_path() /
                 ("tinymlir-numpy-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  fs::create_directories(dir);
  std::ostringstream script;
  script << "import os\nos.environ['NPY_PROMOTION_STATE'] = 'weak'\nimport numpy as np\n";
  for (const auto &[name, array] : inputs) {
    fs::path file = dir / (name + ".npy");
    array.saveNpy(file.string());
    script << name << " = np.load(" << std::quoted(file.string()) << ")\n";
  }
  script << prelude << "\n";
  script << "out = np.asarray(" << expression << ")\n";
  script << "np.save(" << std::quoted((dir / "out.npy").string()) << ", out)\n";
  fs::path scriptFile = dir / "reference.py";
  std::ofstream(scriptFile) << script.str();
  std::string command = std::string(NUMPY_PYTHON) + " " + scriptFile.string() + " 2>&1";
  FILE *pipe = popen(command.c_str(), "r");
  std::string output;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe))
    output.append(buffer, n);
  int status = pclose(pipe);
  if (status != 0)
    throw Error("[numpy] the reference failed (" + std::to_string(status) + "):\n" + output +
                "\nscript:\n" + script.str());
  Array result = Array::loadNpy((dir / "out.npy").string());
  fs::remove_all(dir);
  return result;
}

Array randomArray(const Shape &shape, DType dtype, uint64_t seed, double scale) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, scale);
  const bool own = dtype == DType::f32 || dtype == DType::f64 || dtype == DType::i32 ||
                   dtype == DType::b8 || dtype == DType::i64;
  if (!own) { // the other dtypes: complex normal pairs, or float64 values converted
    Array z = Array::empty(shape, isComplex(dtype) ? DType::c128 : DType::f64);
    for (int64_t i = 0; i < z.size(); ++i) {
      double v = normal(rng);
      if (isComplex(dtype)) {
        double parts[2] = {v, normal(rng)};
        std::memcpy(static_cast<std::byte *>(z.data()) + 16 * i, parts, 16);
      } else {
        static_cast<double *>(z.data())[i] = isInteger(dtype) ? std::round(v * 10) : v;
      }
    }
    return z.dtype() == dtype ? z : z.astype(dtype);
  }
  Array a = Array::empty(shape, dtype);
  int64_t n = a.size();
  for (int64_t i = 0; i < n; ++i) {
    double v = normal(rng);
    switch (dtype) {
    case DType::f32:
      static_cast<float *>(a.data())[i] = static_cast<float>(v);
      break;
    case DType::f64:
      static_cast<double *>(a.data())[i] = v;
      break;
    case DType::i32:
      static_cast<int32_t *>(a.data())[i] = static_cast<int32_t>(std::lround(v * 10));
      break;
    case DType::b8:
      static_cast<uint8_t *>(a.data())[i] = v > 0;
      break;
    case DType::i64: // beyond int32 (and exactly representable in float64)
      static_cast<int64_t *>(a.data())[i] = std::llround(v * 10) * (int64_t{1} << 34) + 7;
      break;
    default: // made above
      break;
    }
  }
  return a;
}

::testing::AssertionResult allClose(const Array &actual, const Array &expected, double rtol,
                                    double atol) {
  // |a - e| <= atol + rtol * |e|: an elementwise bound.
  std::vector<double> e = expected.toDoubles();
  Array bound = Array::empty(expected.shape(), DType::f64);
  auto *b = static_cast<double *>(bound.data());
  for (size_t i = 0; i < e.size(); ++i)
    b[i] = atol + rtol * std::fabs(e[i]);
  return withinBound(actual, expected, bound);
}

double unitRoundoff(DType dtype) {
  switch (dtype) {
  case DType::f32:
    return std::ldexp(1.0, -24);
  case DType::f64:
    return std::ldexp(1.0, -53);
  case DType::f16:
    return std::ldexp(1.0, -11);
  case DType::c64:
    return std::ldexp(1.0, -24);
  case DType::c128:
    return std::ldexp(1.0, -53);
  default:
    return 0; // integer arithmetic is exact
  }
}

double gamma(int64_t n, DType dtype) {
  double nu = static_cast<double>(n) * unitRoundoff(dtype);
  return nu / (1 - nu);
}

::testing::AssertionResult withinBound(const Array &actual, const Array &expected,
                                       const Array &bound) {
  if (actual.dtype() != expected.dtype())
    return ::testing::AssertionFailure() << "dtype " << dtypeName(actual.dtype()) << " != expected "
                                         << dtypeName(expected.dtype());
  if (actual.shape() != expected.shape())
    return ::testing::AssertionFailure() << "shape " << shapeString(actual.shape())
                                         << " != expected " << shapeString(expected.shape());
  std::vector<double> a = actual.toDoubles(), e = expected.toDoubles(), b = bound.toDoubles();
  if (b.size() != 1 && b.size() != a.size())
    return ::testing::AssertionFailure() << "bound of " << b.size() << " elements for " << a.size();
  int64_t bad = 0, first = -1;
  double worstRatio = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double limit = b.size() == 1 ? b[0] : b[i];
    bool ok;
    if (std::isnan(e[i]))
      ok = std::isnan(a[i]);
    else if (std::isinf(e[i]))
      ok = a[i] == e[i];
    else {
      double diff = std::fabs(a[i] - e[i]);
      ok = diff <= limit;
      if (limit > 0)
        worstRatio = std::max(worstRatio, diff / limit);
      else if (diff > 0)
        worstRatio = INFINITY;
    }
    if (!ok && first < 0)
      first = static_cast<int64_t>(i);
    bad += !ok;
  }
  if (bad == 0)
    return ::testing::AssertionSuccess();
  double limit = b.size() == 1 ? b[0] : b[first];
  return ::testing::AssertionFailure()
         << bad << " of " << a.size() << " elements outside the error bound; first at flat index "
         << first << ": " << a[first] << " vs expected " << e[first] << " (diff "
         << std::fabs(a[first] - e[first]) << ", bound " << limit << "; worst diff/bound "
         << worstRatio << ")";
}

Array productBound(const Array &a, const Array &b) {
  DType dtype = a.dtype() == DType::f64 || b.dtype() == DType::f64 ? DType::f64 : DType::f32;
  int64_t k = a.shape().back();
  double factor = 2 * (gamma(k, dtype) + unitRoundoff(dtype));
  std::ostringstream f;
  f << std::setprecision(17) << factor * (1 + 1e-9);
  return numpy("np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64) * " + f.str(),
               {{"a", a}, {"b", b}});
}

Array unitsBound(double units, DType dtype, const std::string &magnitude,
                 const std::map<std::string, Array> &inputs) {
  std::ostringstream factor;
  factor << std::setprecision(17) << units * unitRoundoff(dtype) * (1 + 1e-9);
  return numpy("np.asarray(" + magnitude + ", dtype=np.float64) * " + factor.str(), inputs);
}

::testing::AssertionResult matchesNumPy(const Array &actual, const std::string &expression,
                                        const std::map<std::string, Array> &inputs, double units,
                                        const std::string &magnitude) {
  Array want = numpy(expression, inputs);
  return withinBound(actual, want, unitsBound(units, want.dtype(), magnitude, inputs));
}

} // namespace tinymlir::test
