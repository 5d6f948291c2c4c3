// Shared pieces of the nanobind module (python/src).
#pragma once

#include <tinymlir/array.h>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <string>

namespace tinymlir::python {

/// A NumPy (or any DLPack) array on the CPU, C-contiguous (nanobind makes a
/// contiguous copy of other arrays), read-only from our side.
using InArray = nanobind::ndarray<nanobind::ro, nanobind::c_contig, nanobind::device::cpu>;

/// "float32" / "float64" / "int32"; TypeError otherwise.
DType parseDType(const std::string &name);
/// A borrowed view of `a` (an aligned copy if `a` is misaligned); TypeError
/// for dtypes other than float32, float64, int32.
Array viewOf(const InArray &a, const char *what);
/// A NumPy array that owns `array`'s buffer (no copy).
nanobind::object toNumPy(Array array);

void registerGpt2(nanobind::module_ &m);
void registerIndex(nanobind::module_ &m);

} // namespace tinymlir::python
