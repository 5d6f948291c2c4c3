#!/usr/bin/python3
"""Batched decoding throughput: tokens/s at batch sizes 1, 4, 8, 16, against batch 1
measured in the same round.

  bench/gpt2_batch_bench.py --build build [--model DIR] [--threads 2] [--rounds 5]
                            [--precision reference|float32]

Without --model it writes a random GPT-2 124M checkpoint to a temporary directory.
A batch of B prompts of mixed lengths (3 to 24 tokens) goes to one `tinymlir-gpt2
--prompt-file` run; each run is made twice, with SHORT and LONG new tokens, and the
decode rate is B * (LONG - SHORT) / (t_LONG - t_SHORT): start-up, loading,
compiling and the prompts cancel out. The disk cache is warmed first. Each round
measures every batch size once; the ratio to batch 1 is taken within each round
(median and range over rounds).
"""

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench_common import cpu_model

SHORT, LONG = 8, 40


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--model")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--batches", default="1,4,8,16")
    ap.add_argument("--precision", choices=("reference", "float32"), default="reference")
    a = ap.parse_args()
    binary = os.path.join(a.build, "tools", "tinymlir-gpt2")
    tmp = tempfile.mkdtemp(prefix="tinymlir-batch-bench-")
    try:
        model = a.model
        if not model:
            model = os.path.join(tmp, "model")
            subprocess.run(
                [
                    os.path.join(a.build, "tools", "tinymlir-make-gpt2"),
                    "--preset",
                    "124M",
                    "--out",
                    model,
                ],
                check=True,
                stdout=subprocess.DEVNULL,
            )
        rng = random.Random(0)
        batches = [int(b) for b in a.batches.split(",")]
        files = {}
        for b in batches:
            path = os.path.join(tmp, f"prompts{b}.txt")
            words = "the of and to in is that it for on with as was at by an be this".split()
            with open(path, "w") as f:
                for _ in range(b):
                    f.write(" ".join(rng.choice(words) for _ in range(rng.randint(3, 24))) + "\n")
            files[b] = path
        env = dict(os.environ, TINYMLIR_CACHE_DIR=os.path.join(tmp, "kernels"))

        def seconds(b, tokens):
            start = time.perf_counter()
            subprocess.run(
                [
                    binary,
                    "--model",
                    model,
                    "--prompt-file",
                    files[b],
                    "--tokens",
                    str(tokens),
                    "--ignore-eos",
                    "--threads",
                    str(a.threads),
                    "--precision",
                    a.precision,
                ],
                check=True,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            return time.perf_counter() - start

        for b in batches:  # warm the disk cache
            seconds(b, SHORT)
            seconds(b, LONG)
        rates = {b: [] for b in batches}
        ratios = {b: [] for b in batches}
        for _ in range(a.rounds):
            this = {}
            for b in batches:
                this[b] = b * (LONG - SHORT) / (seconds(b, LONG) - seconds(b, SHORT))
                rates[b].append(this[b])
            for b in batches:
                ratios[b].append(this[b] / this[batches[0]])
        print(
            f"GPT-2 {os.path.basename(model)} batched decode ({a.precision}), {a.threads} threads, "
            f"{cpu_model()}, "
            f"{a.rounds} rounds (median [min, max])"
        )
        print(f"{'batch':>5}  {'tokens/s':>26}  {'vs batch ' + str(batches[0]):>26}")
        for b in batches:
            r, q = rates[b], ratios[b]
            print(
                f"{b:>5}  {statistics.median(r):8.1f} [{min(r):7.1f}, {max(r):7.1f}]  "
                f"{statistics.median(q):8.2f}x [{min(q):5.2f}, {max(q):5.2f}]"
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
