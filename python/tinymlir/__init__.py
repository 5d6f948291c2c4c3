"""tinymlir: a small tensor JIT on MLIR 22, from Python.

    import numpy as np
    from tinymlir import jit, tanh

    @jit
    def scale_bias(x, bias):
        return x * 2.0 + bias

    scale_bias(np.arange(8, dtype=np.float32), np.ones(8, dtype=np.float32))

The C++ core is the compiler: Python traces into its Tensor graph (NumPy
broadcasting and NumPy 2 promotion), and it builds, optimizes, bufferizes,
lowers and runs the code. Unmodified NumPy code traces too: NumPy's ufuncs and
a table of array functions dispatch to traced values.

GPT-2 and the kernels it is written with (gelu, softmax, layer_norm, linear,
attention, causal_mask) are ``tinymlir.gpt2``, a module of its own (its own
extension, built with the models).
"""

import os as _os
import sys as _sys

# Generated code calls the OpenMP runtime (and libm/BLAS entry points) that the
# C++ core links: the JIT resolves them among the process's global symbols, so the
# core and its libraries are loaded RTLD_GLOBAL (Python loads extensions RTLD_LOCAL).
_flags = _sys.getdlopenflags()
_sys.setdlopenflags(_flags | _os.RTLD_GLOBAL)
try:
    from . import _tinymlir
finally:
    _sys.setdlopenflags(_flags)

# _creation, _numpy and _functions: NumPy's protocols on traced arrays and the functions
# they dispatch to, each module registering itself with _trace's layers as it is imported
# (in that order: each imports the one before). _elementwise: the elementwise functions of
# ops.def (tinymlir.exp, tinymlir.add, ...), generated from the op table at build time.
from . import _creation, _elementwise, _functions, _numpy  # noqa: F401
from ._elementwise import *  # noqa: F403 -- its __all__
from ._jit import (
    CacheStats as CacheStats,
    JitFunction as JitFunction,
    Specialization as Specialization,
    jit as jit,
)
from ._ops import (
    astype,
    cast,
    concatenate,
    gather,
    index_put,
    matmul,
    max,
    mean,
    min,
    reshape,
    slice,
    split,
    sum,
    transpose,
    var,
)
from ._trace import Traced as Traced, TracingError as TracingError

#: How a function is compiled (C++ JitOptions): Options() holds the defaults
#: with TINYMLIR_* environment variables applied; jit(f, blas=False, ...) sets fields.
Options = _tinymlir.Options
#: The keywords of jit and tinymlir.gpt2.Model besides target: the rows of
#: include/tinymlir/options.def, in order (docs/options.md).
OPTIONS: tuple[str, ...] = tuple(_tinymlir.OPTION_NAMES)

__version__ = "0.1.0"

__all__ = [
    "jit",
    "JitFunction",
    "Options",
    "OPTIONS",
    "Specialization",
    "CacheStats",
    "Traced",
    "TracingError",
    "cast",
    "astype",
    "sum",
    "max",
    "min",
    "mean",
    "var",
    "matmul",
    "slice",
    "reshape",
    "transpose",
    "split",
    "concatenate",
    "gather",
    "index_put",
    "set_threads",
    "blas_library",
    "numpy_blas_products",
]
__all__ += _elementwise.__all__


def set_threads(n: int) -> None:
    """Threads for compiled loops (OpenMP) and BLAS; 0: all cores."""
    _tinymlir.set_threads(int(n))


def blas_library() -> str:
    """The BLAS that products run on (with ``numpy_blas``, the default): ``"numpy: "`` and
    the configuration of NumPy's OpenBLAS, whose thread pool they then share with NumPy's
    products, or ``"own: "`` and tinymlir's (after ``set_threads(1)``)."""
    return str(_tinymlir.blas_library())


def numpy_blas_products() -> int:
    """How many products ran on NumPy's OpenBLAS so far in this process (each of a
    batch): ``blas_library``'s, counted."""
    return int(_tinymlir.numpy_blas_products())
