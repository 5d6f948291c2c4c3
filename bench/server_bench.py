#!/usr/bin/python3
"""tinymlir-gpt2 --serve under load: per-token latency (p50, p99) of streamed
completions and requests/s, on a random GPT-2 124M by default.

  bench/server_bench.py --build build [--model DIR] [--clients 32] [--requests 200]

The load is the server test's (test/python/test_server.py: mixed prompt lengths
and settings, half streamed, some cancelled), and every completed request is
still checked against the tokens its prompt gets alone. The gap between two
consecutive streamed tokens of a request is one sample.
"""

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "python"))
import test_server  # noqa: E402
from gpt2_batch_bench import cpu_model  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--model")
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--slots", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--no-warm-up",
        action="store_true",
        help="the server compiles what requests need when they first need it",
    )
    a = ap.parse_args()
    binary = os.path.join(a.build, "tools", "tinymlir-gpt2")
    tmp = tempfile.mkdtemp(prefix="tinymlir-server-bench-")
    try:
        env = dict(os.environ, TINYMLIR_CACHE_DIR=os.path.join(tmp, "kernels"))
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
        most = 24
        rng = random.Random(1)
        prompts = [[rng.randrange(50257) for _ in range(n)] for n in (1, 5, 12, 30, 60)]
        expected = test_server.expected_ids(binary, model, env, prompts, most)
        server = test_server.Server(
            binary,
            model,
            env,
            "--slots",
            str(a.slots),
            "--queue",
            "256",
            "--threads",
            str(a.threads),
            *(["--no-warm-up"] if a.no_warm_up else []),
        )
        try:
            server.wait_warm()
            test_server.load(server, prompts, expected, 8, 16, most, seed=99, cancel_share=0)
            server.wait_idle()
            start = time.time()
            completed, cancelled, rejected, gaps = test_server.load(
                server, prompts, expected, a.clients, a.requests, most
            )
            seconds = time.time() - start
        finally:
            server.stop()
        p = test_server.percentile
        print(
            f"{a.requests} requests from {a.clients} clients, {a.slots} slots, {a.threads} threads, "
            f"{cpu_model()}: {seconds:.1f} s, {completed} completed, {cancelled} cancelled, "
            f"{rejected} rejected; per streamed token p50 {p(gaps, 50) * 1e3:.1f} ms, "
            f"p99 {p(gaps, 99) * 1e3:.1f} ms ({len(gaps)} gaps)"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
