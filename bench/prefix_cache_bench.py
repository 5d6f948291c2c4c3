#!/usr/bin/env python3
"""Time to first token with and without the prefix cache (tinymlir.gpt2), on a
random checkpoint of GPT-2 124M's shapes, warm.

A 512-token prompt whose first 480 tokens were just served (a prompt of those
480, one token made) against the same prompt with no cache. Each round times
both; the report gives medians and [min, max] over rounds, and their ratio.

    .venv/bin/python bench/prefix_cache_bench.py [--rounds 5] [--precision reference]
"""

import argparse
import os
import random
import statistics
import subprocess
import tempfile
import time

from bench_common import cpu_model

import tinymlir.gpt2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--precision", default="reference", choices=["reference", "float32"])
    ap.add_argument("--shared", type=int, default=480)
    ap.add_argument("--length", type=int, default=512)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tinymlir-prefix-bench-") as tmp:
        model_dir = os.path.join(tmp, "gpt2-124M")
        subprocess.run(
            [tinymlir.gpt2.tool("tinymlir-make-gpt2"), "--preset", "124M", "--out", model_dir],
            check=True,
            capture_output=True,
        )
        model = tinymlir.gpt2.Model(
            model_dir,
            precision=a.precision,
            cache_dir=os.path.join(tmp, "kernels"),
            prefix_cache=4 * a.length,
        )
        cache = model.prefix_cache
        rng = random.Random(0)
        prompt = [rng.randrange(50257) for _ in range(a.length)]
        served = prompt[: a.shared]

        def first_token(with_cache):
            model.prefix_cache = cache if with_cache else None
            if with_cache:
                cache.clear()
                model.generate_ids(served, 1, ignore_eos=True)  # the request just served
            # Until the first token is chosen (generate yields it before the
            # sequence's keys and values are added to the cache).
            tokens = model.generate(prompt, 1, ignore_eos=True)
            t0 = time.perf_counter()
            ids = [next(tokens)]
            seconds = time.perf_counter() - t0
            tokens.close()
            return seconds, ids

        t0 = time.perf_counter()
        _, plain_ids = first_token(False)  # compiles both paths
        _, cached_ids = first_token(True)
        assert plain_ids == cached_ids, (plain_ids, cached_ids)
        print(f"warm-up (compilation) {time.perf_counter() - t0:.1f} s")
        plain, cached = [], []
        for _ in range(a.rounds):
            plain.append(first_token(False)[0])
            cached.append(first_token(True)[0])
        saved = cache.stats()["tokens_saved"] / (a.rounds + 1)
        ratios = [p / c for p, c in zip(plain, cached)]
        print(
            f"CPU: {cpu_model()} ({os.cpu_count()} CPUs); GPT-2 124M shapes, {a.precision} precision"
        )
        print(
            f"prompt of {a.length} tokens, the first {a.shared} just served; {a.rounds} rounds; "
            f"{saved:.0f} positions from the cache per prompt"
        )
        fmt = lambda v: (
            f"{statistics.median(v) * 1e3:.1f} ms [{min(v) * 1e3:.1f}, {max(v) * 1e3:.1f}]"
        )
        print(f"time to first token, no cache:   {fmt(plain)}")
        print(f"time to first token, with cache: {fmt(cached)}")
        print(f"speedup: {statistics.median(ratios):.1f}x [{min(ratios):.1f}, {max(ratios):.1f}]")


if __name__ == "__main__":
    main()
