#!/usr/bin/env python3
"""Did the CausalMask op earn its row in ops.def? A masked softmax of (T, T) float32 scores,
three ways: tinymlir.gpt2.causal_mask, np.where of an iota comparison, and np.triu of a constant.
Each is one kernel; the results must be equal bit for bit. The op measured no faster than the
other two and was removed: causal_mask is now a where of int32 positions itself
(docs/performance.md).

  .venv/bin/python bench/causal_mask_bench.py [--size 1024] [--rounds 7]

Prints each form's time per call, median [range] over rounds of 20 calls, in the same run.
"""

import argparse
import statistics
import time

import numpy as np

from tinymlir import jit
from tinymlir.gpt2 import causal_mask


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def forms(T):
    def with_op(s):
        return softmax(s + causal_mask(T, np.float32))

    def with_where(s):
        r = np.arange(T)
        return softmax(np.where(r[None, :] > r[:, None], np.float32(-1e10), s))

    def with_triu(s):
        return softmax(s + np.triu(np.full((T, T), -1e10, np.float32), 1))

    return {"op": with_op, "where": with_where, "triu": with_triu}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=7)
    opts = parser.parse_args()
    s = np.random.default_rng(0).standard_normal((opts.size, opts.size)).astype(np.float32)
    fns = {k: jit(f, disk_cache=False) for k, f in forms(opts.size).items()}
    ref = fns["op"](s)
    for name, f in fns.items():
        if not np.array_equal(f(s), ref):
            raise SystemExit(f"{name}: not the op's result bit for bit")
    times = {name: [] for name in fns}
    for _ in range(opts.rounds):
        for name, f in fns.items():
            t = time.perf_counter()
            for _ in range(20):
                f(s)
            times[name].append((time.perf_counter() - t) / 20 * 1e3)
    for name, v in times.items():
        print(f"{name:6s} {statistics.median(v):.3f} ms [{min(v):.3f}, {max(v):.3f}]")


if __name__ == "__main__":
    main()
