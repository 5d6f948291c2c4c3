// tinymlir.jit's specialization cache: the C++ cache (detail::BasicCache,
// include/tinymlir/jit.h) holding Python Specialization objects, and the
// key of a call computed here, so that a call that hits touches no Python
// code until the Specialization runs.
//
// The key is text in the grammar of include/tinymlir/key.h, written by its
// KeyWriter as the C++ jit's is: the argument tree with each array's dtype,
// shape and layout, each static value's type and exact value, which leaves
// are one array, and the options. A tree with anything else (NumPy scalars,
// named tuples, dataclasses, other static objects) has no such text here:
// _jit.py then keys it by flatten's tree definition.
#include "binding.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <tinymlir/jit.h>
#include <tinymlir/key.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <vector>

namespace nb = nanobind;
using namespace nb::literals;

namespace tinymlir::python {
namespace {

/// A reference to a Python object that copies share without touching its
/// reference count (cache entries are copied under the cache's lock); the
/// last copy releases it with the GIL held.
using Shared = std::shared_ptr<PyObject>;
Shared share(nb::handle h) {
  return Shared(nb::handle(h).inc_ref().ptr(), [](PyObject *p) {
    nb::gil_scoped_acquire gil;
    Py_DECREF(p);
  });
}

/// A cache entry: a Specialization, with what CacheStats counts of it, and
/// its fast plan where it has one (Specialization._fast_plan): a call that
/// hits then runs the compiled code from C++, without entering Python.
struct Entry {
  Shared specialization;
  double seconds = 0;
  bool fromDisk = false;
  Shared compiled;    // the fast plan's Compiled object (null: no fast plan)
  Shared resultShape; // its result's shape (a tuple) and NumPy dtype, for np.empty
  Shared resultDType;
  bool scalar = false; // a rank-0 result is returned as a NumPy scalar
};
double compileSecondsOf(const Entry &e) { return e.seconds; }
bool fromDiskCacheOf(const Entry &e) { return e.fromDisk; }

/// A compilation's Python exception, carried through the cache to every
/// thread that waited for it (each raises the same exception object).
struct Failure {
  Shared exception;
};

using SpecializationCache = detail::BasicCache<Entry>;

} // namespace

std::optional<std::vector<int64_t>> elementStrides(nb::handle a) {
  const nb::tuple shape(a.attr("shape")), strides(a.attr("strides"));
  std::vector<int64_t> dims, bytes;
  for (size_t k = 0; k < shape.size(); ++k) {
    dims.push_back(nb::cast<int64_t>(shape[k]));
    bytes.push_back(nb::cast<int64_t>(strides[k]));
  }
  return layoutStrides(dims.data(), bytes.data(), dims.size(),
                       nb::cast<int64_t>(a.attr("itemsize")));
}

namespace {

/// A NumPy dtype's key text (its array-protocol string) and item size, by the
/// dtype object (NumPy's builtin dtypes are singletons; the few others are
/// kept too, each with a reference).
struct DTypeText {
  PyObject *dtype;
  std::string text;
  int64_t itemsize;
};
const DTypeText *dtypeText(PyObject *dtype) {
  static std::vector<DTypeText> known; // the GIL guards it
  for (const DTypeText &d : known)
    if (d.dtype == dtype)
      return &d;
  if (known.size() >= 64)
    return nullptr; // unusual dtypes: looked up each call
  nb::handle h(dtype);
  known.push_back({nb::handle(dtype).inc_ref().ptr(), nb::cast<std::string>(h.attr("str")),
                   nb::cast<int64_t>(h.attr("itemsize"))});
  return &known.back();
}

/// Writes an ndarray's key item (key.h's `array`); false where its
/// attributes cannot be read (flatten's tree keys it then).
bool arrayKey(PyObject *x, KeyWriter &key) {
  static PyObject *dtypeName = PyUnicode_InternFromString("dtype");
  static PyObject *shapeName = PyUnicode_InternFromString("shape");
  static PyObject *stridesName = PyUnicode_InternFromString("strides");
  nb::object dtype = nb::steal(PyObject_GetAttr(x, dtypeName));
  nb::object shape = nb::steal(PyObject_GetAttr(x, shapeName));
  nb::object strides = nb::steal(PyObject_GetAttr(x, stridesName));
  if (!dtype.is_valid() || !shape.is_valid() || !strides.is_valid() ||
      !PyTuple_Check(shape.ptr()) || !PyTuple_Check(strides.ptr())) {
    PyErr_Clear();
    return false;
  }
  const DTypeText *d = dtypeText(dtype.ptr());
  std::string text;
  int64_t item = 0;
  if (d) {
    text = d->text;
    item = d->itemsize;
  } else {
    text = nb::cast<std::string>(dtype.attr("str"));
    item = nb::cast<int64_t>(dtype.attr("itemsize"));
  }
  const Py_ssize_t rank = PyTuple_GET_SIZE(shape.ptr());
  int64_t dims[64], steps[64];
  if (rank > 64 || PyTuple_GET_SIZE(strides.ptr()) != rank)
    return false;
  for (Py_ssize_t k = 0; k < rank; ++k) {
    dims[k] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape.ptr(), k));
    steps[k] = PyLong_AsLongLong(PyTuple_GET_ITEM(strides.ptr(), k));
  }
  const size_t n = static_cast<size_t>(rank);
  key.array(text, dims, n, layoutStrides(dims, steps, n, item));
  return true;
}

/// Writes the key items of tree `x` (as _jit.flatten walks it) and appends
/// its arrays to `leaves`; false where flatten's tree must key it instead.
bool keyOf(PyObject *x, KeyWriter &key, std::vector<PyObject *> &leaves, PyObject *ndarray) {
  PyTypeObject *t = Py_TYPE(x);
  if (reinterpret_cast<PyObject *>(t) == ndarray) {
    if (!arrayKey(x, key))
      return false;
    leaves.push_back(x);
    return true;
  }
  if (t == &PyBool_Type) {
    key.boolean(x == Py_True);
  } else if (t == &PyLong_Type) {
    nb::str digits = nb::str(nb::handle(x));
    key.integerDigits(digits.c_str());
  } else if (t == &PyFloat_Type) {
    key.real(PyFloat_AS_DOUBLE(x));
  } else if (t == &PyComplex_Type) {
    key.complex(PyComplex_RealAsDouble(x), PyComplex_ImagAsDouble(x));
  } else if (x == Py_None) {
    key.none();
  } else if (t == &PyUnicode_Type) {
    Py_ssize_t size = 0;
    const char *data = PyUnicode_AsUTF8AndSize(x, &size);
    if (!data) {
      PyErr_Clear(); // unencodable text: flatten's key
      return false;
    }
    key.string({data, static_cast<size_t>(size)});
  } else if (t == &PyBytes_Type) {
    key.bytes({PyBytes_AS_STRING(x), static_cast<size_t>(PyBytes_GET_SIZE(x))});
  } else if (t == &PyTuple_Type || t == &PyList_Type) {
    const bool tuple = t == &PyTuple_Type;
    key.open(tuple ? '(' : '[');
    const Py_ssize_t n = tuple ? PyTuple_GET_SIZE(x) : PyList_GET_SIZE(x);
    for (Py_ssize_t i = 0; i < n; ++i)
      if (!keyOf(tuple ? PyTuple_GET_ITEM(x, i) : PyList_GET_ITEM(x, i), key, leaves, ndarray))
        return false;
    key.close(tuple ? ')' : ']');
  } else if (t == &PyDict_Type) {
    key.open('{');
    PyObject *name, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(x, &pos, &name, &value)) { // insertion order, as flatten's
      if (Py_TYPE(name) != &PyUnicode_Type)
        return false;
      Py_ssize_t size = 0;
      const char *data = PyUnicode_AsUTF8AndSize(name, &size);
      if (!data) {
        PyErr_Clear();
        return false;
      }
      key.keyword({data, static_cast<size_t>(size)});
      if (!keyOf(value, key, leaves, ndarray))
        return false;
    }
    key.close('}');
  } else {
    return false;
  }
  return true;
}

/// The key of a call and its array leaves (borrowed), or false where the
/// tree has no key text here: see the header.
bool keyOfCall(nb::handle args, nb::handle kwargs, const std::string &options, KeyWriter &key,
               std::vector<PyObject *> &leaves) {
  // Held for the process's life: no reference released after Python's end.
  static PyObject *ndarray =
      nb::object(nb::module_::import_("numpy").attr("ndarray")).release().ptr();
  key.open('(');
  const Py_ssize_t n = PyTuple_GET_SIZE(args.ptr());
  for (Py_ssize_t i = 0; i < n; ++i)
    if (!keyOf(PyTuple_GET_ITEM(args.ptr(), i), key, leaves, ndarray))
      return false;
  key.close(')');
  // Keyword arguments by name, as _flatten_call sorts them.
  std::vector<std::pair<std::string, nb::handle>> named;
  if (kwargs.is_valid() && PyDict_GET_SIZE(kwargs.ptr()) > 0)
    for (auto [name, value] : nb::borrow<nb::dict>(kwargs))
      named.emplace_back(nb::cast<std::string>(name), value);
  std::sort(named.begin(), named.end(),
            [](const auto &a, const auto &b) { return a.first < b.first; });
  for (const auto &[name, value] : named) {
    key.keyword(name);
    if (!keyOf(value.ptr(), key, leaves, ndarray))
      return false;
  }
  // Which leaves are one array (_jit._aliases).
  std::vector<size_t> first(leaves.size());
  std::unordered_map<PyObject *, size_t> seen;
  for (size_t i = 0; i < leaves.size(); ++i)
    first[i] = seen.try_emplace(leaves[i], i).first->second;
  key.aliases(first);
  key.options(options);
  return true;
}

nb::list listOf(const std::vector<PyObject *> &leaves) {
  nb::list list;
  for (PyObject *leaf : leaves)
    list.append(nb::handle(leaf));
  return list;
}

/// The key of a call and its array leaves, or None: see the header.
nb::object callKey(nb::tuple args, nb::dict kwargs, const std::string &options) {
  KeyWriter key;
  std::vector<PyObject *> leaves;
  if (!keyOfCall(args, kwargs, options, key, leaves))
    return nb::none();
  return nb::make_tuple(nb::str(key.text().data(), key.text().size()), listOf(leaves));
}

/// A borrowed view of a C-contiguous, aligned NumPy input through the
/// buffer protocol (no copy, no nanobind conversion); false for others,
/// which the caller converts as call_all does (a contiguous copy).
bool bufferView(PyObject *leaf, DType dtype, Py_buffer &buffer, Array &out) {
  if (PyObject_GetBuffer(leaf, &buffer, PyBUF_C_CONTIGUOUS) != 0) {
    PyErr_Clear();
    return false;
  }
  if (buffer.itemsize != static_cast<Py_ssize_t>(dtypeSize(dtype)) ||
      reinterpret_cast<uintptr_t>(buffer.buf) % dtypeSize(realPart(dtype)) != 0) {
    PyBuffer_Release(&buffer);
    return false;
  }
  Shape shape(buffer.shape, buffer.shape + buffer.ndim);
  out = Array::view(buffer.buf, shape, dtype);
  return true;
}

/// A call that hits, run from C++ as JAX's _cpp_pjit runs one: the key, the
/// lookup and, for a specialization with a fast plan, the native call into a
/// new NumPy array, with no Python frame. `miss` where the key has no text
/// here or is not cached (or while tracing): the caller's Python path
/// handles it. A hit without a fast plan runs its Specialization's run().
nb::object callCached(SpecializationCache &cache, nb::handle args, nb::handle kwargs,
                      const std::string &options, nb::handle miss) {
  if (detail::tracing())
    return nb::borrow(miss);
  // Scratch of this thread: a warm call allocates no key text.
  thread_local KeyWriter key;
  thread_local std::vector<PyObject *> leaves;
  key.text().clear();
  leaves.clear();
  if (!keyOfCall(args, kwargs, options, key, leaves))
    return nb::borrow(miss);
  std::optional<Entry> entry = cache.find(key.text());
  if (!entry)
    return nb::borrow(miss);
  if (!entry->compiled)
    return nb::handle(entry->specialization.get()).attr("run")(listOf(leaves));
  const Compiled &compiled = nb::cast<const Compiled &>(nb::handle(entry->compiled.get()));
  const std::vector<DType> &dtypes = compiled.inputDTypes();
  std::vector<Array> views(leaves.size());
  std::vector<Py_buffer> buffers(leaves.size());
  std::vector<char> held(leaves.size(), 0);
  auto release = [&] {
    for (size_t i = 0; i < buffers.size(); ++i)
      if (held[i])
        PyBuffer_Release(&buffers[i]);
  };
  // Held for the process's life: no reference released after Python's end.
  static PyObject *empty = nb::object(nb::module_::import_("numpy").attr("empty")).release().ptr();
  nb::object result;
  try {
    for (size_t i = 0; i < leaves.size(); ++i) {
      held[i] = i < dtypes.size() && bufferView(leaves[i], dtypes[i], buffers[i], views[i]);
      if (!held[i])
        views[i] = viewOf(nb::cast<InArray>(nb::handle(leaves[i])), "an input");
    }
    result = nb::handle(empty)(nb::handle(entry->resultShape.get()),
                               nb::handle(entry->resultDType.get()));
    Py_buffer out;
    if (PyObject_GetBuffer(result.ptr(), &out, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) != 0)
      throw nb::python_error();
    Array output = Array::view(out.buf, compiled.resultShapes()[0], compiled.resultDTypes()[0]);
    {
      nb::gil_scoped_release unlocked;
      compiled.callInto(views, output);
    }
    PyBuffer_Release(&out);
  } catch (...) {
    release();
    throw;
  }
  release();
  if (entry->scalar)
    result = result[nb::tuple()];
  return result;
}

/// The C++ half of tinymlir.jit's JitFunction (its Python class derives from
/// it): the specialization cache, and __call__, which runs a hit from C++
/// (callCached) and enters Python (`_call`) only for a miss, a call it cannot
/// key (captures, trees only Python keys), or a `target=` keyword.
struct JitBase {
  SpecializationCache cache;
  nb::object options; // the tinymlir.Options object Python reads and writes
  bool plain = false; // whether C++ alone keys its calls (_jit.py sets it)
  // The options' key text, kept while the options are equal to these.
  std::optional<JitOptions> keyed;
  std::string optionsKey;

  const std::string &keyOfOptions() {
    const JitOptions &now = nb::cast<const JitOptions &>(options);
    if (!keyed || !(*keyed == now)) {
      keyed = now;
      optionsKey = detail::optionsKey(now);
    }
    return optionsKey;
  }
};

nb::object jitCall(nb::handle self, nb::args args, nb::kwargs kwargs) {
  static PyObject *miss = nb::module_::import_("builtins").attr("object")().release().ptr();
  static PyObject *targetName = PyUnicode_InternFromString("target");
  JitBase &jit = *nb::inst_ptr<JitBase>(self);
  if (jit.plain && jit.options.is_valid() && !PyDict_GetItem(kwargs.ptr(), targetName)) {
    nb::object r = callCached(jit.cache, args, kwargs, jit.keyOfOptions(), nb::handle(miss));
    if (!r.is(nb::handle(miss)))
      return r;
  }
  return self.attr("_call")(*args, **kwargs);
}

nb::object findOrCompile(SpecializationCache &cache, const std::string &key, size_t limit,
                         nb::callable compile) {
  auto build = [&]() -> Entry {
    try {
      nb::object specialization = compile();
      Entry entry;
      entry.specialization = share(specialization);
      entry.seconds = nb::cast<double>(specialization.attr("compile_seconds"));
      entry.fromDisk = nb::cast<bool>(specialization.attr("from_disk_cache"));
      nb::object plan = specialization.attr("_fast_plan")();
      if (!plan.is_none()) { // (compiled, the result's shape and NumPy dtype, scalar)
        nb::tuple t = nb::borrow<nb::tuple>(plan);
        entry.compiled = share(t[0]);
        entry.resultShape = share(t[1]);
        entry.resultDType = share(t[2]);
        entry.scalar = nb::cast<bool>(t[3]);
      }
      return entry;
    } catch (nb::python_error &e) {
      throw Failure{share(e.value())};
    }
  };
  // Threads waiting for another's compilation wait without the GIL: the
  // compiling thread traces (Python) with it.
  auto await = [](const std::shared_future<Entry> &pending) {
    nb::gil_scoped_release release;
    pending.wait();
  };
  try {
    Entry entry = cache.findOrCompile(key, limit, build, await);
    return nb::borrow(entry.specialization.get());
  } catch (const Failure &failure) {
    PyObject *e = failure.exception.get();
    PyErr_SetObject(reinterpret_cast<PyObject *>(Py_TYPE(e)), e);
    throw nb::python_error();
  }
}

} // namespace

void registerCache(nb::module_ &m) {
  nb::class_<CacheStats>(m, "CacheStats",
                         "A jitted function's specializations: hits, compilations, disk hits, "
                         "evictions, size, and seconds spent compiling.")
      .def_ro("hits", &CacheStats::hits)
      .def_ro("compilations", &CacheStats::compilations)
      .def_ro("disk_hits", &CacheStats::diskHits)
      .def_ro("evictions", &CacheStats::evictions)
      .def_ro("size", &CacheStats::size)
      .def_ro("compile_seconds", &CacheStats::compileSeconds)
      .def("__repr__", [](const CacheStats &s) {
        return "CacheStats(hits=" + std::to_string(s.hits) +
               ", compilations=" + std::to_string(s.compilations) +
               ", disk_hits=" + std::to_string(s.diskHits) +
               ", evictions=" + std::to_string(s.evictions) + ", size=" + std::to_string(s.size) +
               ", compile_seconds=" + std::to_string(s.compileSeconds) + ")";
      });

  nb::class_<SpecializationCache>(
      m, "SpecializationCache",
      "The C++ specialization cache (thread-safe, LRU) of one jitted Python function.")
      .def(nb::init<>())
      .def_static("element_strides", &elementStrides, "array"_a,
                  "An array's element strides where it is not C-contiguous, else None.")
      .def_static("key", &callKey, "args"_a, "kwargs"_a, "options"_a,
                  "(key, array leaves) of a call, or None where flatten's tree must key it.")
      .def("find_or_compile", &findOrCompile, "key"_a, "limit"_a, "compile"_a,
           "The Specialization of `key`, or compile()'s, inserted (threads asking for a key "
           "being compiled wait for it, without the GIL, and get its exception).")
      .def("evict", &SpecializationCache::evict, "limit"_a)
      .def("clear", &SpecializationCache::clear)
      .def("stats", &SpecializationCache::stats);

  nb::class_<JitBase>(m, "JitBase",
                      "The C++ half of a jitted function: its specialization cache, and a "
                      "__call__ that runs a cached specialization without entering Python.")
      .def(nb::init<>())
      .def_prop_ro(
          "_cache", [](JitBase &j) -> SpecializationCache & { return j.cache; },
          nb::rv_policy::reference_internal)
      .def_prop_rw(
          "options", [](JitBase &j) { return j.options; },
          [](JitBase &j, nb::object o) {
            nb::cast<const JitOptions &>(o); // a TypeError for anything else
            j.options = std::move(o);
            j.keyed.reset();
          },
          "The tinymlir.Options the function compiles with (fields may be changed).")
      .def_rw("_plain", &JitBase::plain)
      .def("__call__", &jitCall,
           "Runs the function on arrays (compiled code, compiling a specialization when "
           "needed) or, while another function is traced, inlines it.");
}

} // namespace tinymlir::python
