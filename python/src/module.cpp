// The Python module tinymlir._tinymlir: a thin nanobind layer over the C++ core
// (the compiler alone: GPT-2 and its kernels are tinymlir._gpt2, python/src/gpt2).
//
// Tracing happens in the C++ Tensor graph: Python's traced values hold a
// tinymlir::Tensor, and every operation here is one call of the C++ frontend
// (its type rules, broadcasting and NEP 50 promotion). compileGraph and the
// calls of compiled code run with the GIL released. NumPy arrays cross the
// boundary without copies: C-contiguous inputs are viewed, outputs are NumPy
// arrays that own the native buffer.
#include "binding.h"

#include <tinymlir/environment.h>
#include <tinymlir/index.h>
#include <tinymlir/interrupt.h>
#include <tinymlir/jit.h>
#include <tinymlir/numpy.h>
#include <tinymlir/tensor.h>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <limits>

namespace nb = nanobind;
using namespace nb::literals;

namespace tinymlir::python {

namespace {

std::string dlpackName(nb::dlpack::dtype d) {
  using Code = nb::dlpack::dtype_code;
  const char *kind = d.code == uint8_t(Code::Float)     ? "float"
                     : d.code == uint8_t(Code::Int)     ? "int"
                     : d.code == uint8_t(Code::UInt)    ? "uint"
                     : d.code == uint8_t(Code::Complex) ? "complex"
                     : d.code == uint8_t(Code::Bool)    ? "bool"
                                                        : "other";
  if (d.code == uint8_t(Code::Bool))
    return "bool";
  return std::string(kind) + std::to_string(d.bits);
}

DType fromDLPack(nb::dlpack::dtype d, const char *what) {
  if (d.lanes == 1)
    for (int i = 0; i <= static_cast<int>(DType::c128); ++i)
      if (dlpackDType(static_cast<DType>(i)) == d)
        return static_cast<DType>(i);
  throw nb::type_error((std::string(what) + " has dtype " + dlpackName(d) +
                        "; tinymlir supports bool, int8 to int64, uint8 to uint64, float16, "
                        "float32, float64, complex64 and complex128 (convert with .astype)")
                           .c_str());
}

} // namespace

Array viewOf(const InArray &a, const char *what) {
  Shape shape(a.ndim());
  for (size_t i = 0; i < a.ndim(); ++i)
    shape[i] = static_cast<int64_t>(a.shape(i));
  DType dtype = fromDLPack(a.dtype(), what);
  if (reinterpret_cast<uintptr_t>(a.data()) % dtypeSize(realPart(dtype)) != 0) {
    // Misaligned (a view into a byte buffer): an aligned copy.
    Array copy = Array::empty(shape, dtype);
    std::memcpy(copy.data(), a.data(), copy.nbytes());
    return copy;
  }
  return Array::view(const_cast<void *>(a.data()), shape, dtype);
}

namespace {
/// A compiled function's inputs as views of the NumPy arrays.
std::vector<Array> inputViews(const std::vector<InArray> &inputs) {
  std::vector<Array> views;
  views.reserve(inputs.size());
  for (const InArray &a : inputs)
    views.push_back(viewOf(a, "an input"));
  return views;
}
} // namespace

namespace {

/// A captured array: a borrowed view whose owner keeps the NumPy array alive.
Tensor constantTensor(const InArray &a) {
  Array view = viewOf(a, "a captured array");
  auto *keep = new InArray(a);
  std::shared_ptr<void> owner(keep, [](void *p) {
    nb::gil_scoped_acquire gil;
    delete static_cast<InArray *>(p);
  });
  Array held = Array::view(view.data(), view.shape(), view.dtype(), {}, std::move(owner));
  return Tensor(held);
}

thread_local std::vector<std::unique_ptr<detail::TraceScope>> traceScopes;

/// np.array's nested sequence: Python lists and tuples of tensors.
Nested nestedOf(nb::handle h) {
  if (nb::isinstance<Tensor>(h))
    return {nb::cast<Tensor>(h)};
  std::vector<Nested> items;
  for (nb::handle item : h)
    items.push_back(nestedOf(item));
  return {std::move(items)};
}

nb::tuple shapeTuple(const Shape &shape) {
  nb::list out;
  for (int64_t d : shape) {
    if (d <= std::numeric_limits<int64_t>::min() / 2) // Graph.h's symbolic extent: no number
      throw Error("tinymlir: the shape of a slice with traced bounds (x[i:]) is known only when "
                  "the kernel runs",
                  ErrorKind::Trace);
    out.append(d);
  }
  return nb::tuple(out);
}

nb::list shapeList(const std::vector<Shape> &shapes) {
  nb::list out;
  for (const Shape &s : shapes)
    out.append(shapeTuple(s));
  return out;
}

nb::list dtypeList(const std::vector<DType> &dtypes) {
  nb::list out;
  for (DType d : dtypes)
    out.append(dtypeName(d));
  return out;
}

Target parseTarget(const std::string &target) {
  if (target == "cpu")
    return Target::CPU;
  if (target == "gpu")
    return Target::GPU;
  throw nb::value_error(("target must be 'cpu' or 'gpu', not '" + target + "'").c_str());
}

/// Which Python exception a tinymlir::Error becomes: TypeError for dtype
/// problems, ValueError for everything else (shapes, axes, compilation).
} // namespace

} // namespace tinymlir::python

using namespace tinymlir;
using namespace tinymlir::python;

NB_MODULE(_tinymlir, m) {
  m.doc() = "tinymlir's C++ core (use the tinymlir package, not this module)";

  // The core's RuntimeWarnings (tinymlir::warn) as Python's, attributed to the
  // caller of the NumPy function (NumPy's dispatch, then the traced code); an
  // error when warnings are errors.
  setWarningHandler([](const std::string &message) {
    nb::gil_scoped_acquire gil;
    if (PyErr_WarnEx(PyExc_RuntimeWarning, message.c_str(), 4) < 0)
      throw nb::python_error();
  });
  nb::register_exception_translator([](const std::exception_ptr &p, void *) {
    try {
      std::rethrow_exception(p);
    } catch (const tinymlir::Interrupted &e) { // Ctrl-C during a kernel with loops
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    } catch (const tinymlir::Error &e) {
      // The C++ error's kind, as NumPy raises it (not its text).
      if (e.kind() == ErrorKind::LinAlg) { // NumPy's own exception (a ValueError)
        nb::object linAlgError = nb::module_::import_("numpy.linalg").attr("LinAlgError");
        PyErr_SetString(linAlgError.ptr(), e.what());
        return;
      }
      if (e.kind() == ErrorKind::Trace) { // tinymlir.TracingError, a TypeError
        nb::object tracingError = nb::module_::import_("tinymlir._trace").attr("TracingError");
        PyErr_SetString(tracingError.ptr(), e.what());
        return;
      }
      if (e.kind() == ErrorKind::Axis) { // a ValueError and an IndexError
        nb::object axisError = nb::module_::import_("numpy.exceptions").attr("AxisError");
        PyErr_SetObject(axisError.ptr(), nb::str(e.what()).ptr());
        return;
      }
      PyObject *type = e.kind() == ErrorKind::Type           ? PyExc_TypeError
                       : e.kind() == ErrorKind::Index        ? PyExc_IndexError
                       : e.kind() == ErrorKind::Overflow     ? PyExc_OverflowError
                       : e.kind() == ErrorKind::Runtime      ? PyExc_RuntimeError
                       : e.kind() == ErrorKind::ZeroDivision ? PyExc_ZeroDivisionError
                                                             : PyExc_ValueError;
      PyErr_SetString(type, e.what());
    }
  });

  nb::class_<Tensor>(m, "Tensor")
      .def_prop_ro("shape", [](const Tensor &t) { return shapeTuple(t.shape()); })
      .def_prop_ro("dtype", [](const Tensor &t) { return std::string(dtypeName(t.dtype())); })
      .def_prop_ro("ndim", &Tensor::rank)
      .def_prop_ro("is_concrete", &Tensor::isConcrete)
      .def_prop_ro("is_input", &Tensor::isInput,
                   "An input of the traced function (its values are known before each call).");

  m.def("constant", &constantTensor, "array"_a.noconvert(),
        "A tensor holding a NumPy array (borrowed, kept alive): a captured constant.");
  m.def("weak_scalar", &weakScalar, "value"_a, "integral"_a,
        "A Python number: takes the dtype of the tensor it meets (NEP 50 'weak').");
  m.def("weak_integer", nb::overload_cast<int64_t>(&weakInteger), "value"_a,
        "A Python int, exact in 64 bits: out of the range of the dtype it meets, OverflowError.");
  m.def("weak_integer", &weakUnsigned, "value"_a);
  m.def("weak_wide_integer", &weakWideInteger, "value"_a,
        "A Python int beyond 64 bits, as its nearest double (tensor.h).");
  m.def(
      "typed_integer",
      [](int64_t v, const std::string &dtype) { return cast(weakInteger(v), parseDType(dtype)); },
      "value"_a, "dtype"_a, "A NumPy integer scalar (np.int64(v)), exact: strong.");
  m.def(
      "typed_integer",
      [](uint64_t v, const std::string &dtype) { return cast(weakUnsigned(v), parseDType(dtype)); },
      "value"_a, "dtype"_a);
  m.def("weak_complex_scalar", &weakComplexScalar, "real"_a, "imag"_a,
        "A Python complex number: complex64 or complex128 by the tensor it meets (NEP 50).");
  m.def(
      "typed_scalar",
      [](double v, const std::string &dtype, double imag) {
        DType d = parseDType(dtype);
        return isComplex(d) ? cast(weakComplexScalar(v, imag), d) : ScalarType{d}(v);
      },
      "value"_a, "dtype"_a, "imag"_a = 0.0, "A NumPy scalar: strong, promotes like an array.");
  m.def(
      "placeholder",
      [](int64_t index, const std::vector<int64_t> &shape, const std::string &dtype) {
        return detail::placeholder(index, shape, parseDType(dtype));
      },
      "index"_a, "shape"_a, "dtype"_a);

  // Elementwise.
  // Elementwise: one function per Unary and Binary row of ops.def, and the
  // table ELEMENTWISE of (name, arity) that the Python layer builds on.
  nb::list elementwise;
#define TINYMLIR_BIND_Unary(f)                                                                     \
  m.def(#f, [](const Tensor &x) { return tinymlir::f(x); });                                       \
  elementwise.append(nb::make_tuple(#f, 1));
#define TINYMLIR_BIND_Binary(f)                                                                    \
  m.def(#f, [](const Tensor &a, const Tensor &b) { return tinymlir::f(a, b); });                   \
  elementwise.append(nb::make_tuple(#f, 2));
#define TINYMLIR_BIND_Compare(f) TINYMLIR_BIND_Binary(f)
#define TINYMLIR_BIND_Select(f)                                                                    \
  m.def(#f,                                                                                        \
        [](const Tensor &c, const Tensor &x, const Tensor &y) { return tinymlir::f(c, x, y); });   \
  elementwise.append(nb::make_tuple(#f, 3));
#define TINYMLIR_BIND_Convert(f)
#define TINYMLIR_OP(...)
#define TINYMLIR_ELEMENTWISE_OP(Name, spelling, Kind, Ints, FloatLowering, IntLowering,            \
                                ComplexLowering, Function)                                         \
  TINYMLIR_BIND_##Kind(Function)
#include <tinymlir/ops.def>
  m.attr("ELEMENTWISE") = nb::tuple(elementwise);
  m.def("cast",
        [](const Tensor &a, const std::string &dtype) { return cast(a, parseDType(dtype)); });
  // Reductions: NumPy's, with their keywords (numpy.h's reduce).
  auto dtypeOf = [](const std::optional<std::string> &name) -> std::optional<DType> {
    return name ? std::optional(parseDType(*name)) : std::nullopt;
  };
  m.def(
      "reduce",
      [dtypeOf](const std::string &name, const Tensor &a, const Axes &axis, bool keepdims,
                const std::optional<std::string> &dtype, std::optional<Tensor> where,
                std::optional<Tensor> initial, double ddof, std::optional<double> correction) {
        return reduce(name, a, axis, keepdims,
                      Reduction{dtypeOf(dtype), where.value_or(Tensor()),
                                initial.value_or(Tensor()), ddof, correction});
      },
      "name"_a, "x"_a, "axis"_a.none() = nb::none(), "keepdims"_a = false,
      "dtype"_a.none() = nb::none(), "where"_a.none() = nb::none(), "initial"_a.none() = nb::none(),
      "ddof"_a = 0.0, "correction"_a.none() = nb::none(),
      "NumPy's reduction `name` (sum, prod, max, min, any, all, mean, var, std and the nan "
      "ones) with its keywords; dtype is a name.");
  m.def("place", &place, "arr"_a, "mask"_a, "vals"_a);
  m.def("ufunc_where", &ufuncWhere, "result"_a, "mask"_a,
        "A ufunc's where= without out=: 0 where the mask does not hold.");
  m.def(
      "ufunc_operands",
      [](const std::string &ufunc, const std::vector<Tensor> &operands, const std::string &dtype,
         const std::string &casting) {
        return ufuncOperands(ufunc, operands, parseDType(dtype), casting);
      },
      "ufunc"_a, "operands"_a, "dtype"_a, "casting"_a = "same_kind",
      "A ufunc's operands in its dtype= (numpy.h's ufuncOperands).");
  m.def("count_nonzero", &countNonzero, "a"_a, "axis"_a.none() = nb::none(), "keepdims"_a = false);
  m.def(
      "reduce_into",
      [](Ref &out, const Tensor &result, const std::string &name) {
        reduceInto(out, result, name);
      },
      "out"_a, "result"_a, "name"_a,
      "A reduction's out=: the result's shape, cast unsafe (numpy.h's reduceInto).");
  m.def("dot_into", &dotInto, "out"_a, "result"_a, "np.dot's out= (numpy.h).");
  m.def("partition", &partition, "x"_a, "kth"_a, "axis"_a.none(), "indices"_a,
        "np.partition and np.argpartition (numpy.h).");
  m.def(
      "normalize_axes",
      [](const Axes &axis, int64_t ndim) { return normalizeAxes("axis", axis, ndim); },
      "axis"_a.none(), "ndim"_a, "NumPy's axis argument as sorted axes in [0, ndim).");
  m.def("logical_and", &logical_and);
  m.def("logical_or", &logical_or);
  m.def("logical_xor", &logical_xor);
  m.def("logical_not", &logical_not);
  // NumPy functions made of the core's operations (numpy.h).
  m.def("isnan", [](const Tensor &x) { return tinymlir::isnan(x); });
  m.def("isinf", [](const Tensor &x) { return tinymlir::isinf(x); });
  m.def("isfinite", [](const Tensor &x) { return tinymlir::isfinite(x); });
  m.def("square", &square);
  m.def("positive", &positive);
  m.def("divmod", [](const Tensor &a, const Tensor &b) {
    auto [q, r] = tinymlir::divmod(a, b);
    return nb::make_tuple(q, r);
  });
  m.def("angle", nb::overload_cast<const Tensor &, bool>(&tinymlir::angle), "z"_a, "deg"_a);
  m.def("heaviside", &heaviside);
  m.def(
      "clip",
      [](const Tensor &a, std::optional<Tensor> lo, std::optional<Tensor> hi) {
        return clip(a, lo.value_or(Tensor()), hi.value_or(Tensor()));
      },
      "a"_a, "lo"_a.none(), "hi"_a.none());
  m.def("nan_to_num", &nanToNum, "x"_a, "nan"_a = 0.0, "posinf"_a.none() = nb::none(),
        "neginf"_a.none() = nb::none());
  m.def("isclose", &isclose, "a"_a, "b"_a, "rtol"_a = 1e-5, "atol"_a = 1e-8, "equal_nan"_a = false);
  m.def("allclose", &allclose, "a"_a, "b"_a, "rtol"_a = 1e-5, "atol"_a = 1e-8,
        "equal_nan"_a = false);
  m.def("diagonal", &diagonal, "a"_a, "offset"_a = 0, "axis1"_a = 0, "axis2"_a = 1);
  m.def(
      "trace",
      [dtypeOf](const Tensor &a, int64_t offset, int64_t axis1, int64_t axis2,
                const std::optional<std::string> &dtype) {
        return trace(a, offset, axis1, axis2, dtypeOf(dtype));
      },
      "a"_a, "offset"_a = 0, "axis1"_a = 0, "axis2"_a = 1, "dtype"_a.none() = nb::none());
  m.def("diag", &diag, "v"_a, "k"_a = 0);
  m.def(
      "tensordot",
      nb::overload_cast<const Tensor &, const Tensor &, std::vector<int64_t>, std::vector<int64_t>>(
          &tensordot),
      "a"_a, "b"_a, "axes_a"_a, "axes_b"_a);
  m.def("tensordot", nb::overload_cast<const Tensor &, const Tensor &, int64_t>(&tensordot), "a"_a,
        "b"_a, "n"_a);
  m.def("dot", &dot, "a"_a, "b"_a);
  m.def("outer", &outer, "a"_a, "b"_a);
  m.def("array_power", &arrayPower, "a"_a, "b"_a);
  m.def("stack", &stack, "arrays"_a, "axis"_a = 0);
  m.def(
      "array_of",
      [dtypeOf](const nb::sequence &nested, const std::optional<std::string> &dtype) {
        return arrayOf(nestedOf(nested), dtypeOf(dtype));
      },
      "nested"_a, "dtype"_a.none() = nb::none(),
      "np.array of nested lists of tensors: NumPy's discovered shape and dtype.");
  m.def("cross", &cross, "a"_a, "b"_a, "axisa"_a = -1, "axisb"_a = -1, "axisc"_a = -1);
  m.def("ptp", &ptp, "a"_a, "axis"_a.none(), "keepdims"_a = false);
  m.def("inner", &inner);
  m.def("vdot", &vdot);
  m.def(
      "gradient",
      [](const Tensor &f, const std::vector<Tensor> &spacings, const Axes &axis, int edgeOrder) {
        return gradient(f, spacings, axis, edgeOrder);
      },
      "f"_a, "spacings"_a, "axis"_a.none(), "edge_order"_a = 1,
      "np.gradient: one array per axis (the caller returns one alone as itself).");
  m.def(
      "interp",
      [](const Tensor &x, const Tensor &xp, const Tensor &fp, std::optional<Tensor> left,
         std::optional<Tensor> right) {
        return interp(x, xp, fp, left.value_or(Tensor()), right.value_or(Tensor()));
      },
      "x"_a, "xp"_a, "fp"_a, "left"_a.none(), "right"_a.none());
  m.def("lexsort", nb::overload_cast<const std::vector<Tensor> &>(&lexsort), "keys"_a);
  m.def("lexsort", nb::overload_cast<const Tensor &>(&lexsort), "keys"_a);
  m.def("fliplr", &fliplr, "m"_a);
  m.def("flipud", &flipud, "m"_a);
  m.def("outer_operands", &outerOperands, "a"_a, "b"_a);
  m.def("squeeze", &squeeze, "x"_a, "axis"_a.none());
  m.def("expand_dims", &expandDims, "x"_a, "axes"_a);
  m.def(
      "einsum",
      [dtypeOf](const std::string &subscripts, const std::vector<Tensor> &operands,
                const std::optional<std::string> &dtype, const std::string &casting) {
        return einsum(subscripts, operands, dtypeOf(dtype), casting);
      },
      "subscripts"_a, "operands"_a, "dtype"_a.none() = nb::none(), "casting"_a = "safe",
      "np.einsum (numpy.h).");
  m.def("moveaxis_order", &moveaxisOrder, "rank"_a, "source"_a, "destination"_a);
  m.def("column_stack", &columnStack, "arrays"_a);
  m.def("append", &append, "arr"_a, "values"_a, "axis"_a.none());
  m.def(
      "trapezoid",
      [](const Tensor &y, std::optional<Tensor> x, const Tensor &dx, int64_t axis) {
        return trapezoid(y, x.value_or(Tensor()), dx, axis);
      },
      "y"_a, "x"_a.none(), "dx"_a, "axis"_a = -1);
  m.def("digitize", &digitize, "x"_a, "bins"_a, "right"_a = false);
  m.def("roll", &roll, "a"_a, "shift"_a, "axis"_a.none());
  m.def("convolve", &convolve, "a"_a, "v"_a, "mode"_a = "full");
  for (auto [name, f] :
       {std::pair{"cumulative_sum", &cumulativeSum}, std::pair{"cumulative_prod", &cumulativeProd}})
    m.def(
        name,
        [f, dtypeOf](const Tensor &x, std::optional<int64_t> axis, bool initial,
                     const std::optional<std::string> &dtype) {
          return f(x, axis, initial, dtypeOf(dtype));
        },
        "x"_a, "axis"_a.none(), "include_initial"_a = false, "dtype"_a.none() = nb::none());
  m.def("correlate", &correlate, "a"_a, "v"_a, "mode"_a = "valid");
  m.def("take",
        nb::overload_cast<const Tensor &, const Tensor &, std::optional<int64_t>,
                          const std::string &>(&take),
        "a"_a, "indices"_a, "axis"_a.none(), "mode"_a = "raise");
  m.def("take_along_axis", &takeAlongAxis, "arr"_a, "indices"_a, "axis"_a.none());
  m.def(
      "copyto",
      [](const Tensor &dst, const Tensor &src, const std::string &casting,
         const std::optional<Tensor> &where) {
        return copyto(dst, src, casting, where.value_or(Tensor()));
      },
      "dst"_a, "src"_a, "casting"_a, "where"_a.none(),
      "np.copyto's new value of dst (numpy.h's copyto).");
  m.def("fill_diagonal", &fillDiagonal, "a"_a, "val"_a, "wrap"_a = false,
        "np.fill_diagonal's new value of a (numpy.h's fillDiagonal).");
  m.def("putmask", &putmask, "a"_a, "mask"_a, "values"_a,
        "np.putmask's new value of a (numpy.h's putmask).");
  m.def(
      "ufunc_at",
      [](const std::string &ufunc, const Tensor &table, const Tensor &ids,
         std::optional<Tensor> values) { // none: a unary ufunc's (refused by name)
        return ufuncAt(ufunc, table, ids, values.value_or(Tensor()));
      },
      "ufunc"_a, "table"_a, "ids"_a, "values"_a.none(),
      "ufunc.at along axis 0 (tensor.h's ufuncAt).");
  m.def(
      "ufunc_at_tuple",
      [](const std::string &ufunc, const Tensor &table, const std::vector<Tensor> &ids,
         std::optional<Tensor> values) {
        return ufuncAt(ufunc, table, ids, values.value_or(Tensor()));
      },
      "ufunc"_a, "table"_a, "ids"_a, "values"_a.none(),
      "ufunc.at with a tuple of positions, one per leading axis (tensor.h's ufuncAt).");
  m.def("put_along_axis", &putAlongAxis, "arr"_a, "indices"_a, "values"_a, "axis"_a.none());
  m.def("round", &tinymlir::round, "a"_a, "decimals"_a = 0);
  m.def(
      "diff",
      [](const Tensor &a, int64_t n, int64_t axis, std::optional<Tensor> prepend,
         std::optional<Tensor> append) {
        return diff(a, n, axis, prepend.value_or(Tensor()), append.value_or(Tensor()));
      },
      "a"_a, "n"_a = 1, "axis"_a = -1, "prepend"_a.none() = nb::none(),
      "append"_a.none() = nb::none());
  m.def("matrix_power", &matrixPower, "a"_a, "n"_a);
  m.def(
      "norm",
      [](const Tensor &x, std::optional<double> p, const std::string &name, const Axes &axis,
         bool keepdims) { return la::norm(x, NormOrder{p, name}, axis, keepdims); },
      "x"_a, "ord"_a.none(), "ord_name"_a, "axis"_a.none(), "keepdims"_a = false);
  m.def(
      "vector_norm",
      [](const Tensor &x, std::optional<std::vector<int64_t>> axes, bool keepdims,
         std::optional<double> p,
         const std::string &name) { return la::vectorNorm(x, axes, keepdims, NormOrder{p, name}); },
      "x"_a, "axes"_a.none(), "keepdims"_a, "ord"_a.none(), "ord_name"_a,
      "np.linalg.vector_norm (numpy.h).");
  m.def(
      "cond",
      [](const Tensor &x, std::optional<double> p, const std::string &name) {
        return la::cond(x, NormOrder{p, name});
      },
      "x"_a, "ord"_a.none(), "ord_name"_a);
  m.def("pinv",
        nb::overload_cast<const Tensor &, std::optional<double>, bool, std::optional<double>>(
            &la::pinv),
        "a"_a, "rcond"_a.none(), "rtol_given"_a, "rtol"_a.none());
  m.def(
      "matrix_rank",
      [](const Tensor &a, std::optional<Tensor> tol, std::optional<double> rtol) {
        return la::matrixRank(a, tol.value_or(Tensor()), rtol);
      },
      "a"_a, "tol"_a.none(), "rtol"_a.none());
  m.def(
      "average",
      [](const Tensor &a, const Axes &axis, std::optional<Tensor> weights, bool keepdims) {
        return average(a, axis, weights.value_or(Tensor()), keepdims);
      },
      "a"_a, "axis"_a.none(), "weights"_a.none(), "keepdims"_a = false);
  m.def(
      "cov",
      [dtypeOf](const Tensor &m, std::optional<Tensor> y, bool rowvar, bool bias,
                std::optional<double> ddof, std::optional<Tensor> fweights,
                std::optional<Tensor> aweights, const std::optional<std::string> &dtype) {
        return cov(m, y.value_or(Tensor()), rowvar, bias, ddof, fweights.value_or(Tensor()),
                   aweights.value_or(Tensor()), dtypeOf(dtype));
      },
      "m"_a, "y"_a.none(), "rowvar"_a, "bias"_a, "ddof"_a.none(), "fweights"_a.none(),
      "aweights"_a.none(), "dtype"_a.none());
  m.def(
      "corrcoef",
      [dtypeOf](const Tensor &x, std::optional<Tensor> y, bool rowvar,
                const std::optional<std::string> &dtype) {
        return corrcoef(x, y.value_or(Tensor()), rowvar, dtypeOf(dtype));
      },
      "x"_a, "y"_a.none(), "rowvar"_a, "dtype"_a.none());
  m.def("median", &median, "a"_a, "axis"_a.none(), "keepdims"_a = false);
  m.def("nanmedian", &nanmedian, "a"_a, "axis"_a.none(), "keepdims"_a = false);
  m.def(
      "histogram",
      [](const Tensor &a, int64_t bins, std::optional<Tensor> edges,
         std::optional<std::pair<Tensor, Tensor>> range, bool density,
         std::optional<Tensor> weights) {
        return histogram(a,
                         HistogramOptions{bins, edges, range, density, weights.value_or(Tensor())});
      },
      "a"_a, "bins"_a, "edges"_a.none(), "range"_a.none(), "density"_a, "weights"_a.none(),
      "np.histogram (numpy.h): (counts, edges).");
  m.def(
      "pad_widths",
      [](const nb::dict &byAxis, int64_t rank) {
        std::vector<std::pair<int64_t, std::pair<int64_t, int64_t>>> widths;
        for (auto [axis, width] : byAxis) {
          if (nb::isinstance<nb::int_>(width))
            widths.push_back(
                {nb::cast<int64_t>(axis), {nb::cast<int64_t>(width), nb::cast<int64_t>(width)}});
          else if (nb::isinstance<nb::tuple>(width) && nb::len(width) == 2 &&
                   nb::isinstance<nb::int_>(width[0]) && nb::isinstance<nb::int_>(width[1]))
            widths.push_back({nb::cast<int64_t>(axis),
                              {nb::cast<int64_t>(width[0]), nb::cast<int64_t>(width[1])}});
          else
            throw Error("[pad] invalid pad width " + nb::cast<std::string>(nb::repr(width)) +
                            " for axis " + nb::cast<std::string>(nb::repr(axis)),
                        ErrorKind::Type);
        }
        return padWidths(widths, rank);
      },
      "by_axis"_a, "rank"_a, "np.pad's dict pad_width: the widths of every axis, in pairs.");
  m.def(
      "pad",
      [](const Tensor &a, const std::vector<int64_t> &widths, const Shape &widthShape,
         const std::string &mode, std::optional<Tensor> constantValues,
         std::optional<Tensor> endValues, bool statLengthGiven,
         std::optional<std::vector<double>> statLength, const Shape &statLengthShape,
         std::optional<std::string> reflectType, std::vector<std::string> otherKeywords) {
        return pad(a, widths, widthShape, mode,
                   PadOptions{constantValues, endValues, statLengthGiven, statLength,
                              statLengthShape, reflectType, otherKeywords});
      },
      "a"_a, "widths"_a, "width_shape"_a, "mode"_a, "constant_values"_a.none(),
      "end_values"_a.none(), "stat_length_given"_a, "stat_length"_a.none(), "stat_length_shape"_a,
      "reflect_type"_a.none(), "other_keywords"_a,
      "np.pad (numpy.h): widths and stat_length as flat values with their shapes.");
  for (auto [name, f] : {std::pair{"quantile", &quantile}, std::pair{"percentile", &percentile}})
    m.def(
        name,
        [f, dtypeOf](const Tensor &a, const std::vector<double> &q, const Shape &qShape,
                     const Axes &axis, bool keep, const std::optional<std::string> &qDType,
                     bool weakQ, bool ignoreNans, std::string_view method) {
          return f(a, q, qShape, axis, keep, dtypeOf(qDType), weakQ, ignoreNans, method);
        },
        "a"_a, "q"_a, "q_shape"_a, "axis"_a.none(), "keepdims"_a = false,
        "q_dtype"_a.none() = nb::none(), "weak_q"_a = false, "ignore_nans"_a = false,
        "method"_a = "linear");
  m.def("tile", &tile, "a"_a, "reps"_a);
  m.def("repeat", &repeat, "a"_a, "repeats"_a, "axis"_a.none());
  m.def("kron", &kron, "a"_a, "b"_a);
  m.def("meshgrid", &meshgrid, "xi"_a, "indexing"_a = "xy", "sparse"_a = false);
  m.def("isin", &isin, "element"_a, "test"_a, "invert"_a = false);
  m.def("polyval", &polyval, "p"_a, "x"_a);
  m.def("vander", &vander, "x"_a, "n"_a.none(), "increasing"_a = false);
  m.def(
      "polyfit",
      [](const Tensor &x, const Tensor &y, int64_t deg, const std::optional<Tensor> &w) {
        return polyfit(x, y, deg, w.value_or(Tensor()));
      },
      "x"_a, "y"_a, "deg"_a, "w"_a.none() = nb::none());
  m.def(
      "select",
      [](const std::vector<Tensor> &c, const std::vector<Tensor> &x, const Tensor &o) {
        return tinymlir::select(c, x, o);
      },
      "conditions"_a, "choices"_a, "otherwise"_a);
  m.def("sinc", &sinc, "x"_a);
  m.def("array_equal", &arrayEqual, "a"_a, "b"_a, "equal_nan"_a = false);
  m.def("deg2rad", &deg2rad, "x"_a);
  m.def("rad2deg", &rad2deg, "x"_a);
  m.def("float_power", &floatPower, "x"_a, "y"_a);
  m.def("atleast", &atleast, "x"_a, "rank"_a);
  m.def("dstack", &dstack, "arrays"_a);
  m.def(
      "joined",
      [dtypeOf](const std::string &name, const std::vector<Tensor> &arrays,
                std::optional<int64_t> axis, const std::optional<std::string> &dtype,
                const std::string &casting) {
        return joined(name, arrays, axis, dtypeOf(dtype), casting);
      },
      "name"_a, "arrays"_a, "axis"_a.none() = nb::none(), "dtype"_a.none() = nb::none(),
      "casting"_a = "same_kind",
      "np.concatenate, np.stack, np.hstack, np.vstack and np.dstack (numpy.h's joined).");
  m.def("hstack", &hstack, "arrays"_a);
  m.def("vstack", &vstack, "arrays"_a);
  m.def("rollaxis_order", &rollaxisOrder, "rank"_a, "axis"_a, "start"_a);
  m.def("swapaxes_order", &swapaxesOrder, "rank"_a, "axis1"_a, "axis2"_a);
  m.def("broadcast_arrays", &broadcastArrays, "arrays"_a);
  m.def(
      "ediff1d",
      [](const Tensor &x, std::optional<Tensor> toEnd, std::optional<Tensor> toBegin) {
        return ediff1d(x, toEnd.value_or(Tensor()), toBegin.value_or(Tensor()));
      },
      "x"_a, "to_end"_a.none(), "to_begin"_a.none());
  // Products and layout.
  m.def("matmul", &matmul);
  m.def("slice", &slice, "x"_a, "begin"_a, "end"_a, "steps"_a = std::vector<int64_t>{});
  m.def("slice_update", &sliceUpdate, "x"_a, "begin"_a, "end"_a, "steps"_a, "value"_a,
        "x with the box slice(x, begin, end, steps) replaced by value (broadcast, cast).");
  m.def("broadcast_to", &broadcastTo, "x"_a, "shape"_a);
  m.def(
      "bitcast",
      [](const Tensor &a, const std::string &dtype) { return bitcast(a, parseDType(dtype)); },
      "x"_a, "dtype"_a, "The bits of a 64-bit tensor as another 64-bit dtype (x.view(dtype)).");
  m.def("same_value", &sameValue, "a"_a, "b"_a,
        "Whether a and b compute the same value (the same node, or equal nodes).");
  m.def(
      "full",
      [dtypeOf](const std::vector<int64_t> &shape, const Tensor &value,
                const std::optional<std::string> &dtype) {
        return full(shape, value, dtypeOf(dtype));
      },
      "shape"_a, "value"_a, "dtype"_a.none(), "np.full: NumPy's default dtype and cast.");
  m.def("delete_items", &deleteItems, "arr"_a, "obj"_a, "axis"_a.none(),
        "np.delete of positions known while tracing (numpy.h's deleteItems).");
  m.def("insert_items", &insertItems, "arr"_a, "obj"_a, "values"_a, "axis"_a.none(),
        "np.insert at positions known while tracing (numpy.h's insertItems).");
  m.def("put_flat", &putFlat, "a"_a, "indices"_a, "values"_a, "mode"_a = "raise",
        "np.put as a's new value (numpy.h's putFlat).");
  m.def(
      "linspace",
      [dtypeOf](const Tensor &start, const Tensor &stop, int64_t num, bool endpoint,
                const std::optional<std::string> &dtype, int64_t axis) {
        return linspace(start, stop, num, endpoint, dtypeOf(dtype), axis);
      },
      "start"_a, "stop"_a, "num"_a = 50, "endpoint"_a = true, "dtype"_a.none() = nb::none(),
      "axis"_a = 0, "np.linspace of traced ends: (samples, step).");
  m.def(
      "full_like",
      [dtypeOf](const Tensor &a, const Tensor &value, const std::optional<std::string> &dtype,
                std::optional<Shape> shape) { return fullLike(a, value, dtypeOf(dtype), shape); },
      "a"_a, "value"_a, "dtype"_a.none(), "shape"_a.none(),
      "np.full_like: a's shape and dtype where none is given.");
  m.def("reshape", [](const Tensor &a, const std::vector<int64_t> &s) { return reshape(a, s); });
  m.def("transpose",
        [](const Tensor &a, const std::vector<int64_t> &p) { return transpose(a, p); });
  m.def("split", &split, "x"_a, "sections"_a, "axis"_a);
  m.def("concatenate", &concatenate, "parts"_a, "axis"_a);
  m.def("gather", &gather, "table"_a, "ids"_a);
  m.def("index_put", &indexPut, "a"_a, "index"_a, "values"_a);
  m.def("triu", &triu, "x"_a, "k"_a = 0);
  m.def("flip", &flip, "x"_a, "axes"_a.none());
  m.def("tril", &tril, "x"_a, "k"_a = 0);
  // Row kernels (runtime/Rows.cpp): sorts, accumulations, extreme indices, searches.
  for (auto [name, f] : {std::pair{"sort", &tinymlir::sort}, std::pair{"argsort", &argsort}})
    m.def(
        name,
        [f](const Tensor &x, std::optional<int64_t> axis, const std::optional<std::string> &kind,
            std::optional<bool> stable) {
          checkSortKind(kind, stable);
          return f(x, axis);
        },
        "x"_a, "axis"_a.none() = -1, "kind"_a.none() = nb::none(), "stable"_a.none() = nb::none(),
        "np.sort/np.argsort: stable sorts, NumPy's kinds checked.");
  m.def("multi_dot", &la::multiDot, "arrays"_a, "np.linalg.multi_dot (numpy.h).");
  m.def(
      "unravel_index",
      [](const Tensor &indices, const Shape &shape, const std::string &order) {
        return unravelIndex(indices, shape, order.empty() ? 'C' : order[0]);
      },
      "indices"_a, "shape"_a, "order"_a = "C", "np.unravel_index (numpy.h).");
  m.def(
      "ravel_multi_index",
      [](const std::vector<Tensor> &multi, const Shape &dims, const std::string &mode,
         const std::string &order) {
        return ravelMultiIndex(multi, dims, mode, order.empty() ? 'C' : order[0]);
      },
      "multi_index"_a, "dims"_a, "mode"_a = "raise", "order"_a = "C",
      "np.ravel_multi_index (numpy.h).");
  m.def("vecdot", &vecdot, "a"_a, "b"_a, "axis"_a = -1, "np.vecdot (numpy.h).");
  m.def("matvec", &matvec, "m"_a, "v"_a, "np.matvec (numpy.h).");
  m.def("vecmat", &vecmat, "v"_a, "m"_a, "np.vecmat (numpy.h).");
  for (auto [name, f] : {std::pair{"cumsum", &cumsum}, std::pair{"cumprod", &cumprod},
                         std::pair{"nancumsum", &nancumsum}, std::pair{"nancumprod", &nancumprod}})
    m.def(
        name,
        [f, dtypeOf](const Tensor &x, std::optional<int64_t> axis,
                     const std::optional<std::string> &dtype) {
          return f(x, axis, dtypeOf(dtype));
        },
        "x"_a, "axis"_a.none() = nb::none(), "dtype"_a.none() = nb::none());
  m.def(
      "accumulate",
      [dtypeOf](const std::string &ufunc, const Tensor &x, int64_t axis,
                const std::optional<std::string> &dtype) {
        return accumulate(ufunc, x, axis, dtypeOf(dtype));
      },
      "ufunc"_a, "x"_a, "axis"_a, "dtype"_a.none(), "ufunc.accumulate (tensor.h).");
  m.def(
      "reduceat",
      [dtypeOf](const std::string &ufunc, const Tensor &x, const Tensor &indices, int64_t axis,
                const std::optional<std::string> &dtype) {
        return reduceAt(ufunc, x, indices, axis, dtypeOf(dtype));
      },
      "ufunc"_a, "x"_a, "indices"_a, "axis"_a, "dtype"_a.none(), "ufunc.reduceat (tensor.h).");
  m.def("argmax", &argmax, "x"_a, "axis"_a = nb::none(), "keepdims"_a = false);
  m.def("nanargmax", &nanargmax, "x"_a, "axis"_a = nb::none(), "keepdims"_a = false);
  m.def("nanargmin", &nanargmin, "x"_a, "axis"_a = nb::none(), "keepdims"_a = false);
  m.def("argmin", &argmin, "x"_a, "axis"_a = nb::none(), "keepdims"_a = false);
  m.def(
      "searchsorted",
      [](const Tensor &a, const Tensor &v, bool right, std::optional<Tensor> sorter) {
        return searchsorted(a, v, right, sorter.value_or(Tensor()));
      },
      "sorted"_a, "values"_a, "right"_a = false, "sorter"_a.none() = nb::none());
  m.def("take", nb::overload_cast<const Tensor &, const Tensor &>(&take), "table"_a, "ids"_a);
  m.def(
      "bincount",
      [](const Tensor &ids, int64_t length, std::optional<Tensor> weights) {
        return bincount(ids, length, weights ? *weights : Tensor());
      },
      "ids"_a, "length"_a, "weights"_a = nb::none());
  // np.linalg (LAPACK kernels, runtime/Linalg.cpp).
  m.def("cholesky", &la::cholesky, "a"_a, "upper"_a = false);
  m.def("solve", &la::solve, "a"_a, "b"_a);
  m.def("inv", &la::inv, "a"_a);
  m.def("det", &la::det, "a"_a);
  m.def("slogdet", &la::slogdet, "a"_a);
  m.def("eigh", nb::overload_cast<const Tensor &, std::string_view>(&la::eigh), "a"_a,
        "UPLO"_a = "L");
  m.def("svd", &la::svd, "a"_a, "full_matrices"_a = true);
  m.def("singular_values", &la::singularValues, "a"_a);
  m.def("qr", &la::qr, "a"_a);
  m.def("lstsq", &la::lstsq, "a"_a, "b"_a);
  m.def("put", &put, "table"_a, "ids"_a, "values"_a);

  // Tracing state of this thread (the C++ core's, so that its checks agree).
  m.def("trace_enter", [] { traceScopes.push_back(std::make_unique<detail::TraceScope>()); });
  m.def("trace_exit", [] {
    if (!traceScopes.empty())
      traceScopes.pop_back();
  });
  m.def("tracing", &detail::tracing);

  nb::class_<Compiled>(m, "Compiled")
      .def_prop_ro("module", &Compiled::module)
      .def_prop_ro("optimized", &Compiled::optimized)
      .def_prop_ro("bufferized", &Compiled::bufferized)
      .def_prop_ro("lowered", &Compiled::lowered)
      .def_prop_ro("gpu_module", &Compiled::gpuModule)
      .def_prop_ro("ptx", &Compiled::ptx)
      .def_prop_ro("input_shapes", [](const Compiled &c) { return shapeList(c.inputShapes()); })
      .def_prop_ro("input_dtypes", [](const Compiled &c) { return dtypeList(c.inputDTypes()); })
      .def_prop_ro(
          "result_shape", [](const Compiled &c) { return shapeTuple(c.resultShape()); },
          "The first result's shape.")
      .def_prop_ro(
          "result_dtype", [](const Compiled &c) { return std::string(dtypeName(c.resultDType())); },
          "The first result's dtype.")
      .def_prop_ro("result_shapes", [](const Compiled &c) { return shapeList(c.resultShapes()); })
      .def_prop_ro("result_dtypes", [](const Compiled &c) { return dtypeList(c.resultDTypes()); })
      .def_prop_ro("compile_seconds", &Compiled::compileSeconds)
      .def_prop_ro("blas_calls", &Compiled::blasCalls)
      .def_prop_ro("donated", &Compiled::donated,
                   "The input updated in place as the first result, or -1.")
      .def_prop_ro("donations", &Compiled::donations,
                   "For each result, the input updated in place as that result (its "
                   "call_into output must be that input's array), or -1.")
      .def_prop_ro("from_disk_cache", &Compiled::fromDiskCache)
      .def_prop_ro("target", [](const Compiled &c) { return std::string(targetName(c.target())); })
      .def(
          "__call__",
          [](const Compiled &c, const std::vector<InArray> &inputs) {
            std::vector<Array> views = inputViews(inputs);
            Array out;
            {
              nb::gil_scoped_release release;
              out = c.call(views);
            }
            return toNumPy(std::move(out));
          },
          "inputs"_a)
      .def(
          "call_all",
          [](const Compiled &c, const std::vector<InArray> &inputs) {
            std::vector<Array> views = inputViews(inputs);
            std::vector<Array> outs;
            {
              nb::gil_scoped_release release;
              outs = c.callAll(views);
            }
            nb::list results;
            for (Array &a : outs)
              results.append(toNumPy(std::move(a)));
            return results;
          },
          "inputs"_a, "Every result, as a list of new arrays.")
      .def(
          "call_into",
          [](const Compiled &c, const std::vector<InArray> &inputs,
             const std::vector<nb::ndarray<nb::c_contig, nb::device::cpu>> &outputs) {
            std::vector<Array> views = inputViews(inputs);
            std::vector<Array> outs;
            for (const auto &output : outputs) {
              Shape shape(output.ndim());
              for (size_t i = 0; i < output.ndim(); ++i)
                shape[i] = static_cast<int64_t>(output.shape(i));
              outs.push_back(
                  Array::view(output.data(), shape, fromDLPack(output.dtype(), "an output")));
            }
            nb::gil_scoped_release release;
            c.callInto(views, outs);
          },
          "inputs"_a, "outputs"_a,
          "Runs into `outputs`, one per result (C-contiguous, aligned, writable, not "
          "overlapping): for a donated input, that input's own array.");

  // JitOptions: constructed with the defaults and TINYMLIR_* variables applied;
  // one attribute per row of options.def.
  nb::class_<JitOptions> options(m, "Options");
  options.def(nb::init<>())
      .def(nb::init<const JitOptions &>())
      .def_prop_rw(
          "target", [](const JitOptions &o) { return std::string(targetName(o.target)); },
          [](JitOptions &o, const std::string &t) { o.target = parseTarget(t); }, "cpu or gpu.");
#define TINYMLIR_OPTION(Type, field, name, variable, value, key, min, max, help)                   \
  options.def_rw(name, &JitOptions::field, help);
#include <tinymlir/options.def>
  options.def("key", &detail::optionsKey).def("__repr__", [](const JitOptions &o) {
    return "<tinymlir.Options " + detail::optionsKey(o) + ">";
  });
  // The rows' names, in order (tinymlir.OPTIONS), and their variables.
  nb::list names, variables;
  for (const OptionInfo &row : optionTable()) {
    names.append(row.name);
    variables.append(row.variable);
  }
  m.attr("OPTION_NAMES") = nb::tuple(names);
  m.attr("OPTION_VARIABLES") = nb::tuple(variables);

  m.def(
      "compile_graph",
      [](const std::vector<Tensor> &results, const std::vector<Tensor> &args,
         const JitOptions &options, const std::vector<int> &donated) {
        nb::gil_scoped_release release;
        return compileGraph(results, args, options, donated);
      },
      "results"_a, "args"_a, "options"_a, "donated"_a = std::vector<int>(),
      "One kernel with an output per result; donated: for each result, the input it "
      "updates in place, or -1 (empty: none).");

  m.def(
      "environment",
      [](const std::string &name) -> std::optional<std::string> {
        const char *value = environment(name.c_str());
        return value ? std::optional<std::string>(value) : std::nullopt;
      },
      "name"_a,
      "Environment variable `name` (a row of options.def or environment.def; another is a "
      "ValueError), or None where unset or empty: the one reader of the environment.");
  m.def("set_threads", [](int n) {
    nb::gil_scoped_release release;
    setThreads(n);
  });

  m.def("blas_library", &blasLibrary,
        "The BLAS products run on: 'numpy: ' and the configuration of NumPy's OpenBLAS "
        "(loaded with NumPy: one thread pool for both), or 'own: ' and tinymlir's "
        "(after set_threads(1)).");
  m.def("numpy_blas_products", &numpyBlasProducts,
        "Products run on NumPy's OpenBLAS so far in this process (each of a batch).");

  registerIndex(m);
  registerCache(m);
  registerLoops(m);
}
