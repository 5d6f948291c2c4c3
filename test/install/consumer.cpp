// A program built against an installed tinymlir with find_package(tinymlir).
#include <tinymlir/tinymlir.h>

#include <cmath>
#include <cstdio>

using namespace tinymlir;

int main() {
  auto f = jit([](const Tensor &x) { return x * 2 + 1; });
  Array y = f(Array::linspace(0, 3, 4, f32));
  // 1, 3, 5, 7 exactly: one product by 2 and one sum of small integers.
  for (int64_t i = 0; i < 4; ++i)
    if (y.at({i}) != 2.0 * static_cast<double>(i) + 1) {
      std::printf("wrong value at %lld: %g\n", static_cast<long long>(i), y.at({i}));
      return 1;
    }
  std::printf("consumer OK\n");
  return 0;
}
