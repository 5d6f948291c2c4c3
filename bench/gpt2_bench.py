#!/usr/bin/python3
"""GPT-2 generation benchmarks: tinymlir-gpt2 against the NumPy reference and
against this machine's bounds, all measured in the same run.

  bench/gpt2_bench.py --build build [--model DIR] [--threads 2]

Without --model it writes a random GPT-2 124M checkpoint (about 500 MB) to a
temporary directory. Reports:
  - machine: memory read bandwidth and sgemm throughput (tinymlir-bench --only machine);
  - full-prefix mode (--recompute), 10-token prompt + 10 new tokens, against the
    NumPy reference (compile time included, disk cache warm);
  - incremental decoding, in reference and float32 precision: steady-state
    tokens/s against the bandwidth bound (weight bytes per token / read bandwidth);
  - prefill of a 256-token prompt: tokens/s against the sgemm- and dgemm-bound
    rates, warm (the process's second and third prompts: kernels loaded, weights
    and buffers touched) and as a fresh process's first prompt (disk cache warm);
  - time to first token with a cold and with a warm disk cache.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROMPT10 = "36235,39141,18765,1143,326,9061,561,530,1110,1716"


def run(cmd, env=None):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"FAILED: {' '.join(cmd)}\n{r.stderr}")
    return dt, r


def per_token(stderr):
    m = re.search(r"per token:([^;]*)", stderr)
    return [float(x) for x in m.group(1).split()] if m else []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--model")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--decode-tokens", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=5, help="measurement rounds (median reported)")
    a = ap.parse_args()
    tools = os.path.join(a.build, "tools")
    work = tempfile.mkdtemp(prefix="tinymlir-gpt2-bench-")
    cache = os.path.join(work, "cache")
    model = a.model
    if model is None:
        model = os.path.join(work, "gpt2-124M")
        run([os.path.join(tools, "tinymlir-make-gpt2"), "--out", model, "--preset", "124M"])
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(a.threads), OMP_NUM_THREADS=str(a.threads))
    base = [
        os.path.join(tools, "tinymlir-gpt2"),
        "--model",
        model,
        "--threads",
        str(a.threads),
        "--json",
    ]
    gpt2 = base + ["--cache-dir", cache]
    config = json.load(open(os.path.join(model, "config.json")))
    C, L, V = config["n_embd"], config["n_layer"], config["vocab_size"]
    weights = (V * C + L * (12 * C * C + 13 * C) + 2 * C) * 4  # every weight but wpe, float32

    def measure(what):
        _, r = run(
            [
                os.path.join(a.build, "bench", "tinymlir-bench"),
                "--only",
                what,
                "--threads",
                str(a.threads),
                "--seconds",
                "0.5",
            ],
            env,
        )
        return json.loads(r.stdout)

    def machine():
        m = measure("machine")
        return m["read_bandwidth_gbs"] * 1e9, m["sgemm_gflops"] * 1e9, m["dgemm_gflops"] * 1e9

    def bandwidth_now():
        return measure("bandwidth")["read_bandwidth_gbs"] * 1e9

    def percent(v):
        return f"{v * 100:.0f}%"

    def spread(values, fmt):
        return f"median {fmt(statistics.median(values))}, range {fmt(min(values))} to {fmt(max(values))}"

    # This machine's memory bandwidth changes by up to 1.7x from one second to
    # the next (neighbours): every ratio pairs a measurement with its peer
    # measured in the same round, right before and after, and the report gives
    # the median over rounds with the range.
    bandwidth, sgemm, dgemm = machine()
    print(
        f"machine: {a.threads} threads, read bandwidth {bandwidth / 1e9:.1f} GB/s, "
        f"sgemm {sgemm / 1e9:.0f} GFLOP/s, dgemm {dgemm / 1e9:.0f} GFLOP/s"
    )

    # Time to first token: cold disk cache, then warm.
    cold, r = run(gpt2 + ["--prompt-ids", PROMPT10, "--tokens", "1"], env)
    warm = [
        run(gpt2 + ["--prompt-ids", PROMPT10, "--tokens", "1"], env)[0] for _ in range(a.rounds)
    ]
    print(
        f"time to first token (10-token prompt, whole process): cold cache {cold:.2f} s, "
        f"warm cache {spread(warm, lambda v: f'{v:.3f} s')}"
    )

    # Full-prefix mode against the NumPy reference (10 + 10 tokens), alternating;
    # the first run, with an empty disk cache, compiles its specializations.
    cold_full, _ = run(
        base
        + [
            "--recompute",
            "--prompt-ids",
            PROMPT10,
            "--tokens",
            "10",
            "--cache-dir",
            os.path.join(work, "cache-recompute"),
        ],
        env,
    )
    print(f"full prefix, 10 + 10 tokens, empty disk cache: {cold_full:.2f} s")
    run(gpt2 + ["--recompute", "--prompt-ids", PROMPT10, "--tokens", "10"], env)  # warm the cache
    speedups, same = [], True
    for _ in range(a.rounds):
        t_ours, r_ours = run(
            gpt2 + ["--recompute", "--prompt-ids", PROMPT10, "--tokens", "10"], env
        )
        t_ref, r_ref = run(
            [
                "/usr/bin/python3",
                os.path.join(HERE, "..", "test", "python", "gpt2_reference.py"),
                "--model",
                model,
                "--prompt-ids",
                PROMPT10,
                "--tokens",
                "10",
                "--json",
            ],
            env,
        )
        same = (
            same
            and json.loads(r_ours.stdout)["output_ids"] == json.loads(r_ref.stdout)["output_ids"]
        )
        speedups.append(t_ref / t_ours)
    print(
        f"full prefix, 10 + 10 tokens, whole processes (warm disk cache) against NumPy: "
        f"{spread(speedups, lambda v: f'{v:.2f}x')}; same tokens: {same}"
    )

    # Incremental decoding against the bandwidth bound, bandwidth measured
    # before and after each decoding run; in both precisions (the weights are
    # float32 in both: the same bytes per token).
    for precision in ("reference", "float32"):
        args = gpt2 + [
            "--precision",
            precision,
            "--prompt-ids",
            PROMPT10,
            "--tokens",
            str(a.decode_tokens),
        ]
        rates, ratios = [], []
        for _ in range(a.rounds):
            before = bandwidth_now()
            _, r = run(args, env)
            after = bandwidth_now()
            steady = statistics.median(per_token(r.stderr)[3:])
            bound = weights / ((before + after) / 2)
            rates.append(1 / steady)
            ratios.append(bound / steady)
            print(
                f"  decode round, {precision}: {1 / steady:.1f} tokens/s, bandwidth "
                f"{before / 1e9:.1f} and {after / 1e9:.1f} GB/s, {bound / steady * 100:.0f}% of "
                f"the bound"
            )
        print(
            f"decode, {precision} ({weights / 1e6:.0f} MB of weights per token): tokens/s "
            f"{spread(rates, lambda v: f'{v:.1f}')}; against the bandwidth bound "
            f"{spread(ratios, lambda v: f'{v * 100:.0f}%')}"
        )

    # Prefill of 256 tokens against the sgemm- and dgemm-bound rates, measured
    # in each round; in both precisions. Warm: the best of a process's second
    # and third prompts; first: a fresh process's first prompt, which also
    # loads its kernels from the disk cache and faults in the weights.
    prompt256 = ",".join(str((i * 7919) % V) for i in range(256))
    flops = 2 * L * 12 * C * C + 2 * C * V / 256  # per prompt token (head: last row only)
    for precision in ("reference", "float32"):
        args = gpt2 + [
            "--precision",
            precision,
            "--prompt-ids",
            prompt256,
            "--tokens",
            "1",
            "--repeat",
            "3",
        ]
        run(args, env)  # warm the cache
        rates = {"warm": [], "first": []}
        bounds = {"sgemm": [], "dgemm": [], "products": []}
        for _ in range(a.rounds):
            _, sgemm, dgemm = machine()
            # The ceiling these BLAS calls allow: the prefill's layer products
            # alone, weights from memory (GPT-2 124M's shapes).
            if (C, L) == (768, 12):
                alone = measure("prefill-products")[
                    "sgemm_s" if precision == "float32" else "dgemm_s"
                ]
                bounds["products"].append(256 / alone)
            _, r = run(args, env)
            runs = [float(x) for x in re.search(r"each run's:([^)]*)", r.stderr).group(1).split()]
            rates["first"].append(256 / runs[0])
            rates["warm"].append(256 / min(runs[1:]))
            bounds["sgemm"].append(sgemm / flops)
            bounds["dgemm"].append(dgemm / flops)
        for when, values in rates.items():
            ratios = {b: [v / bound for v, bound in zip(values, bounds[b])] for b in bounds}
            alone = (
                f"; against the products alone {spread(ratios['products'], percent)}"
                if bounds["products"]
                else ""
            )
            print(
                f"prefill 256 tokens, {precision}, {when}: tokens/s "
                f"{spread(values, lambda v: f'{v:.0f}')}; against the sgemm-bound rate "
                f"{spread(ratios['sgemm'], percent)}; against the dgemm-bound rate "
                f"{spread(ratios['dgemm'], percent)}{alone}"
            )

    shutil.rmtree(work, ignore_errors=True)
    if not same:
        sys.exit("full-prefix tokens differ from the reference")


if __name__ == "__main__":
    main()
