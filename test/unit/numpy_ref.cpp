#include "numpy_ref.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
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
    }
  }
  return a;
}

::testing::AssertionResult allClose(const Array &actual, const Array &expected, double rtol,
                                    double atol) {
  if (actual.dtype() != expected.dtype())
    return ::testing::AssertionFailure() << "dtype " << dtypeName(actual.dtype()) << " != expected "
                                         << dtypeName(expected.dtype());
  if (actual.shape() != expected.shape())
    return ::testing::AssertionFailure() << "shape " << shapeString(actual.shape())
                                         << " != expected " << shapeString(expected.shape());
  std::vector<double> a = actual.toDoubles(), e = expected.toDoubles();
  int64_t bad = 0, first = -1;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    bool ok;
    if (std::isnan(e[i]))
      ok = std::isnan(a[i]);
    else if (std::isinf(e[i]))
      ok = a[i] == e[i];
    else {
      double diff = std::fabs(a[i] - e[i]);
      ok = diff <= atol + rtol * std::fabs(e[i]);
      worst = std::max(worst, diff);
    }
    if (!ok) {
      if (first < 0)
        first = static_cast<int64_t>(i);
      ++bad;
    }
  }
  if (bad == 0)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << a.size() << " elements differ; first at flat index " << first
         << ": " << a[first] << " vs expected " << e[first] << " (max abs diff " << worst << ")";
}

} // namespace tinymlir::test
