// Shared pieces of the nanobind modules (python/src): tinymlir._tinymlir, the
// compiler, and tinymlir._gpt2 (python/src/gpt2), GPT-2 and its kernels.
#pragma once

#include <tinymlir/array.h>
#include <tinymlir/tensor.h>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <optional>
#include <string>
#include <vector>

/// NumPy's `axis` argument (None, an int, or a sequence of ints) as Axes.
namespace nanobind::detail {
template <> struct type_caster<tinymlir::Axes> {
  NB_TYPE_CASTER(tinymlir::Axes, const_name("int | tuple[int, ...] | None"))

  static bool index(handle h, int64_t &out) noexcept {
    if (PyBool_Check(h.ptr()) || !PyIndex_Check(h.ptr()))
      return false;
    PyObject *i = PyNumber_Index(h.ptr());
    if (!i) {
      PyErr_Clear();
      return false;
    }
    out = PyLong_AsLongLong(i);
    Py_DECREF(i);
    if (out == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    return true;
  }
  bool from_python(handle src, uint8_t, cleanup_list *) noexcept {
    int64_t one;
    if (src.is_none()) {
      value = tinymlir::Axes();
      return true;
    }
    if (index(src, one)) {
      value = tinymlir::Axes(one);
      return true;
    }
    if (!PyTuple_Check(src.ptr()) && !PyList_Check(src.ptr()))
      return false;
    std::vector<int64_t> axes;
    for (handle h : borrow<sequence>(src)) {
      if (!index(h, one))
        return false;
      axes.push_back(one);
    }
    value = tinymlir::Axes(std::move(axes));
    return true;
  }
  static handle from_cpp(const tinymlir::Axes &axes, rv_policy, cleanup_list *) noexcept {
    if (!axes.list)
      return none().release();
    list l;
    for (int64_t a : *axes.list)
      l.append(a);
    return PyList_AsTuple(l.ptr());
  }
};
} // namespace nanobind::detail

namespace tinymlir::python {

/// A NumPy (or any DLPack) array on the CPU, C-contiguous (nanobind makes a
/// contiguous copy of other arrays), read-only from our side.
using InArray = nanobind::ndarray<nanobind::ro, nanobind::c_contig, nanobind::device::cpu>;

// Shared by both extensions (arrays.cpp is compiled into each).
/// A dtype by NumPy's name ("float32", "int64"...); TypeError for others.
DType parseDType(const std::string &name);
/// The DLPack dtype of `dtype`.
nanobind::dlpack::dtype dlpackDType(DType dtype);
/// A NumPy array that owns `array`'s buffer (no copy).
nanobind::object toNumPy(Array array);

// tinymlir._tinymlir's (module.cpp, index.cpp, cache.cpp).
/// A borrowed view of `a` (an aligned copy if `a` is misaligned); TypeError
/// for dtypes other than float32, float64, int32.
Array viewOf(const InArray &a, const char *what);
void registerCache(nanobind::module_ &m);
/// An array's element strides (NumPy's strides / itemsize) where it is not
/// C-contiguous (size-1 axes aside, as NumPy's flag), else none; none too for
/// strides that are not whole elements. The jit keys and traces by it.
std::optional<std::vector<int64_t>> elementStrides(nanobind::handle array);
void registerIndex(nanobind::module_ &m);
void registerLoops(nanobind::module_ &m);

} // namespace tinymlir::python
