"""GPT-2 on the C++ core: the incremental decoder and tokenizer of ``tinymlir-gpt2``.

    model = tinymlir.gpt2.load("/path/to/gpt2")      # model.safetensors + config.json
    for token in model.generate("Alan Turing theorized that", max_new_tokens=10):
        print(model.decode([token]), end="", flush=True)

Greedy by default; ``temperature=0.8, top_k=40, top_p=0.95, repeat_penalty=1.1, seed=1``
sample as ``tinymlir-gpt2`` does with the same flags (the same seed gives the same tokens).
Generation stops at <|endoftext|> (50256, not yielded) unless ``ignore_eos=True``.

The kernels GPT-2 is written with (C++ lib/models/nn), traced or eager like the
frontend's functions: ``gelu``, ``softmax``, ``layer_norm``, ``linear``, ``attention``,
``causal_mask``. All of it is the extension ``tinymlir._gpt2``, built with the models;
``import tinymlir`` alone does not load it.
"""

from __future__ import annotations

import operator
import os
import queue
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from . import _gpt2, _tinymlir
from ._jit import _options
from ._ops import _frontend
from ._trace import Traced, dtype_name, to_tensor

_core = _gpt2

_PACKAGE = Path(__file__).resolve().parent


# --- Kernels: the C++ library's (lib/models/nn), as GPT-2 runs them ----------------


def causal_mask(n, dtype=np.float32):
    """(n, n): 0 on and below the diagonal, -1e10 above (built in the kernel)."""
    return Traced(_core.causal_mask(operator.index(n), dtype_name(dtype, "causal_mask's dtype")))


@_frontend
def gelu(x):
    """GELU, tanh form; its float64 sqrt(2/pi) promotes float32 to float64, as the seeds'."""
    return Traced(_core.gelu(to_tensor(x)))


@_frontend
def softmax(x):
    """Softmax over the last axis, stabilized by the row maximum."""
    return Traced(_core.softmax(to_tensor(x)))


@_frontend
def layer_norm(x, gain, bias, eps=1e-5):
    """Layer normalization over the last axis (centered variance)."""
    return Traced(_core.layer_norm(to_tensor(x), to_tensor(gain), to_tensor(bias), float(eps)))


@_frontend
def linear(x, weight, bias):
    """x @ weight + bias."""
    return Traced(_core.linear(to_tensor(x), to_tensor(weight), to_tensor(bias)))


@_frontend
def attention(x, qkv_weight, qkv_bias, out_weight, out_bias, heads):
    """Causal multi-head self-attention of x (T, C): packed QKV projection (C, 3C), heads,
    softmax(q k^T / sqrt(D) + causal mask) v, output projection (C, C)."""
    t = to_tensor
    return Traced(
        _core.attention(
            t(x), t(qkv_weight), t(qkv_bias), t(out_weight), t(out_bias), operator.index(heads)
        )
    )


# --- The model --------------------------------------------------------------------


def data_dir() -> str:
    """The tokenizer files (encoder.json, vocab.bpe): $TINYMLIR_GPT2_DATA, else the
    copy installed with the package."""
    env = _tinymlir.environment("TINYMLIR_GPT2_DATA")
    return env if env else str(_PACKAGE / "data" / "gpt2")


def tool(name: str) -> str:
    """Path of a command-line tool installed with the package (tinymlir-gpt2,
    tinymlir-make-gpt2)."""
    path = _PACKAGE / "bin" / name
    if not path.exists():
        raise FileNotFoundError(f"{path} is not installed")
    return str(path)


_tokenizer = None
_tokenizer_lock = threading.Lock()


def tokenizer() -> _core.Tokenizer:
    """GPT-2's byte-level BPE tokenizer (the CLI's, loaded once)."""
    global _tokenizer
    with _tokenizer_lock:
        if _tokenizer is None:
            _tokenizer = _core.Tokenizer.load(data_dir())
        return _tokenizer


def encode(text: str) -> list[int]:
    return tokenizer().encode(text)


def decode(ids: Iterable[int]) -> str:
    """The text of `ids` (invalid UTF-8, e.g. a partial character, as U+FFFD)."""
    return tokenizer().decode_bytes([int(i) for i in ids]).decode("utf-8", errors="replace")


def decode_bytes(ids: Iterable[int]) -> bytes:
    return tokenizer().decode_bytes([int(i) for i in ids])


def write_random(
    dir: str | os.PathLike[str],
    *,
    n_layer: int = 2,
    n_head: int = 4,
    n_embd: int = 64,
    vocab_size: int = 50257,
    n_positions: int = 128,
    seed: int = 0,
) -> str:
    """Writes a random GPT-2 checkpoint (as ``tinymlir-make-gpt2``); returns `dir`."""
    _core.write_random_checkpoint(str(dir), n_layer, n_head, n_embd, vocab_size, n_positions, seed)
    return str(dir)


class _Stop(Exception):
    pass


class Model:
    """A loaded checkpoint on the C++ GPT-2 (``tinymlir-gpt2``'s model)."""

    def __init__(
        self,
        dir: str | os.PathLike[str],
        *,
        precision: str = "reference",
        target: str | None = None,
        prefix_cache: int = 0,
        **options: Any,
    ) -> None:
        """``precision``: "reference" (the NumPy reference's dtypes and tokens) or
        "float32" (float32 throughout). ``prefix_cache``: the positions of recent
        sequences' keys and values kept for prompts that start the same way (a
        conversation resent with each turn computes only its new part); 0: none.
        ``options``: those of ``tinymlir.jit`` (blas, disk_cache, cache_dir, cpu...);
        unset ones take their defaults and TINYMLIR_* environment variables."""
        self.dir = str(dir)
        self._init = dict(
            precision=precision, target=target, prefix_cache=int(prefix_cache), **options
        )
        self._model = _core.Model(
            self.dir, _options(target, options, "tinymlir.gpt2.Model"), precision=precision
        )
        if int(prefix_cache) < 0:
            raise ValueError(f"prefix_cache must be a number of positions >= 0, not {prefix_cache}")
        self.prefix_cache: _core.PrefixCache | None = (
            _core.PrefixCache(int(prefix_cache)) if prefix_cache else None
        )
        """The prefix cache (``stats()``, ``clear()``), or None."""

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled by path and settings: the receiving process loads the checkpoint
        again (its kernels from the disk cache), with an empty prefix cache."""
        return _load_pickled, (self.dir, self._init)

    @property
    def config(self) -> dict[str, Any]:
        return self._model.config

    def encode(self, text: str) -> list[int]:
        return encode(text)

    def decode(self, ids: Iterable[int]) -> str:
        return decode(ids)

    def forward(self, ids: Iterable[int]) -> npt.NDArray[np.float64]:
        """Logits of every position, (T, V) float64."""
        return self._model.forward([int(i) for i in ids])

    def _ids(self, prompt: str | Iterable[int]) -> list[int]:
        if isinstance(prompt, str):
            return encode(prompt)
        return [int(i) for i in prompt]

    def generate(
        self,
        prompt: str | Iterable[int],
        max_new_tokens: int,
        *,
        incremental: bool = True,
        temperature: float = 0.0,
        top_k: int = 0,
        top_p: float = 1.0,
        repeat_penalty: float = 1.0,
        seed: int | None = None,
        ignore_eos: bool = False,
    ) -> Iterator[int]:
        """Decoding of `prompt` (text or token ids): yields each new token id as it is
        made. Greedy unless ``temperature > 0``; then ``top_k`` (0: all), ``top_p`` (1: all)
        and ``seed`` (None: a random one) as ``tinymlir-gpt2``'s flags; ``repeat_penalty``
        (1: off) applies to greedy decoding too. Stops at <|endoftext|> (not yielded)
        unless ``ignore_eos``. ``incremental=False`` recomputes the whole prefix per token
        (the reference's way; ``--recompute``)."""
        ids = self._ids(prompt)
        n = int(max_new_tokens)
        how = self._sampling(temperature, top_k, top_p, repeat_penalty, seed, ignore_eos)
        tokens: queue.Queue = queue.Queue()
        stop = threading.Event()

        def on_token(step, token):
            if stop.is_set():
                raise _Stop()
            tokens.put(("token", token))

        def run():
            try:
                self._model.generate(
                    ids, n, incremental, on_token, **how, prefix_cache=self.prefix_cache
                )
                tokens.put(("done", None))
            except _Stop:
                tokens.put(("done", None))
            except BaseException as e:  # handed to the consumer
                tokens.put(("error", e))

        worker = threading.Thread(target=run, name="tinymlir-gpt2", daemon=True)
        worker.start()
        try:
            while True:
                kind, value = tokens.get()
                if kind == "token":
                    yield value
                elif kind == "error":
                    raise value
                else:
                    break
        finally:
            stop.set()
            worker.join()

    def generate_ids(
        self,
        prompt: str | Iterable[int],
        max_new_tokens: int,
        *,
        incremental: bool = True,
        temperature: float = 0.0,
        top_k: int = 0,
        top_p: float = 1.0,
        repeat_penalty: float = 1.0,
        seed: int | None = None,
        ignore_eos: bool = False,
    ) -> list[int]:
        """All the new token ids at once (no thread); keywords as generate's."""
        how = self._sampling(temperature, top_k, top_p, repeat_penalty, seed, ignore_eos)
        return list(
            self._model.generate(
                self._ids(prompt),
                int(max_new_tokens),
                incremental,
                None,
                **how,
                prefix_cache=self.prefix_cache,
            )
        )

    @staticmethod
    def _sampling(
        temperature: float,
        top_k: int,
        top_p: float,
        repeat_penalty: float,
        seed: int | None,
        ignore_eos: bool,
    ) -> dict[str, Any]:
        # Checked (ranges, with the option's name) by the C++ sampler.
        return dict(
            temperature=float(temperature),
            top_k=int(top_k),
            top_p=float(top_p),
            repeat_penalty=float(repeat_penalty),
            seed=None if seed is None else int(seed),
            ignore_eos=bool(ignore_eos),
        )

    @property
    def compile_seconds(self) -> float:
        return self._model.compile_seconds


def _load_pickled(dir: str, settings: dict[str, Any]) -> Model:
    return Model(dir, **settings)


def load(dir: str | os.PathLike[str], **options: Any) -> Model:
    """Loads `dir`/config.json and `dir`/model.safetensors (Hugging Face layout)."""
    return Model(dir, **options)
