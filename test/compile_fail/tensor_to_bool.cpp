// Must not compile: branching on a traced value is data-dependent control flow.
#include <tinymlir/tinymlir.h>

tinymlir::Tensor relu_by_branch(const tinymlir::Tensor &x) {
  if (x)
    return x;
  return -x;
}
