"""The public API as the README shows it, annotated: `mypy --strict` checks it
against the package's annotations and the generated stubs (test_typing.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

import tinymlir
import tinymlir.gpt2
from tinymlir import jit


@jit
def gelu(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    y: npt.NDArray[np.float64] = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    return y


@jit(blas=False, cache_limit=8)
def scale_bias(
    x: npt.NDArray[np.float32], bias: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    return x * 2.0 + bias


def main(checkpoint: str) -> None:
    x = np.linspace(-5, 5, 31, dtype=np.float32)
    y: npt.NDArray[np.float64] = gelu(x)
    spec: tinymlir.Specialization = gelu.compile(x)
    optimized: str = spec.optimized
    types: list[tuple[tuple[int, ...], np.dtype[Any]]] = spec.input_types
    stats: tinymlir.CacheStats = gelu.stats()
    hits: int = stats.hits
    scale_bias.cache_limit = 4
    scale_bias.clear_cache()
    z = scale_bias(x, np.ones(31, np.float32), target="cpu")
    w = tinymlir.tanh(np.ones(3, np.float32))  # an elementwise function of ops.def
    options: tinymlir.Options = tinymlir.Options()
    options.blas = False
    tinymlir.set_threads(0)
    model = tinymlir.gpt2.load(checkpoint, precision="float32", prefix_cache=1024)
    ids: list[int] = model.generate_ids("Alan Turing theorized that", 4)
    text: str = model.decode(ids)
    for token in model.generate(ids, 2, temperature=0.8, seed=1):
        text += tinymlir.gpt2.decode([token])
    cache = model.prefix_cache
    saved: int = 0 if cache is None else cache.stats()["tokens_saved"]
    print(y, optimized, types, hits, z, w, text, saved)
