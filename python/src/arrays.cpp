// dtypes by name and native arrays as NumPy's: compiled into both extensions
// (tinymlir._tinymlir and tinymlir._gpt2), each with its own copy of nanobind.
#include "binding.h"

#include <nanobind/ndarray.h>

#include <string>
#include <utility>
#include <vector>

namespace nb = nanobind;

namespace tinymlir::python {

DType parseDType(const std::string &name) {
  if (std::optional<DType> d = dtypeNamed(name))
    return *d;
  throw nb::type_error(("tinymlir does not support the dtype " + name +
                        "; it has bool, int8 to int64, uint8 to uint64, float16, float32, "
                        "float64, complex64 and complex128")
                           .c_str());
}

nb::dlpack::dtype dlpackDType(DType dtype) {
  using Code = nb::dlpack::dtype_code;
  Code code = dtype == DType::b8  ? Code::Bool
              : isUnsigned(dtype) ? Code::UInt
              : isInteger(dtype)  ? Code::Int
              : isComplex(dtype)  ? Code::Complex
                                  : Code::Float;
  return nb::dlpack::dtype{static_cast<uint8_t>(code), static_cast<uint8_t>(8 * dtypeSize(dtype)),
                           1};
}

nb::object toNumPy(Array array) {
  // The NumPy array owns the native buffer through a capsule holding the Array.
  auto *held = new Array(std::move(array));
  nb::capsule owner(held, [](void *p) noexcept { delete static_cast<Array *>(p); });
  std::vector<size_t> shape(held->shape().begin(), held->shape().end());
  nb::ndarray<nb::numpy> out(held->data(), shape.size(), shape.data(), owner, nullptr,
                             dlpackDType(held->dtype()));
  return out.cast();
}

} // namespace tinymlir::python
