#!/usr/bin/python3
"""GPT-2 generation: tinymlir-gpt2 against the NumPy reference, same checkpoint, same run.

  bench/gpt2_bench.py --build build [--model DIR] [--tokens 10] [--threads N]

Without --model it writes a random GPT-2 124M checkpoint (about 500 MB) to a
temporary directory. Prompt: 10 token ids. Reports wall time, tokens/s and
tinymlir's compile time (from its stderr report).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROMPT = "36235,39141,18765,1143,326,9061,561,530,1110,1716"


def timed(cmd, env=None):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"FAILED: {' '.join(cmd)}\n{r.stderr}")
    return dt, r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--model")
    ap.add_argument("--tokens", type=int, default=10)
    ap.add_argument("--threads", type=int)
    ap.add_argument("--extra", default="", help="extra tinymlir-gpt2 arguments")
    a = ap.parse_args()
    work = None
    model = a.model
    if model is None:
        work = tempfile.mkdtemp(prefix="tinymlir-gpt2-bench-")
        model = os.path.join(work, "gpt2-124M")
        subprocess.run([os.path.join(a.build, "tools", "tinymlir-make-gpt2"), "--out", model,
                        "--preset", "124M", "--seed", "0"], check=True, capture_output=True)
    ours = [os.path.join(a.build, "tools", "tinymlir-gpt2"), "--model", model, "--prompt-ids",
            PROMPT, "--tokens", str(a.tokens), "--json"] + a.extra.split()
    if a.threads:
        ours += ["--threads", str(a.threads)]
    env = dict(os.environ)
    if a.threads:
        env["OPENBLAS_NUM_THREADS"] = str(a.threads)
    ref = ["/usr/bin/python3", os.path.join(HERE, "..", "test", "python", "gpt2_reference.py"),
           "--model", model, "--prompt-ids", PROMPT, "--tokens", str(a.tokens), "--json"]
    t_ours, r_ours = timed(ours, env)
    t_ref, r_ref = timed(ref, env)
    same = json.loads(r_ours.stdout)["output_ids"] == json.loads(r_ref.stdout)["output_ids"]
    m = re.search(r"compile ([0-9.e-]+) s, (\d+) specializations", r_ours.stderr)
    compile_s = float(m.group(1)) if m else float("nan")
    print(f"model {model}, prompt 10 tokens, {a.tokens} new tokens, same tokens: {same}")
    print(f"tinymlir: {t_ours:.2f} s wall ({a.tokens / t_ours:.2f} tokens/s), of which compile "
          f"{compile_s:.2f} s in {m.group(2) if m else '?'} specializations; "
          f"{a.tokens / max(t_ours - compile_s, 1e-9):.2f} tokens/s without compilation")
    print(f"numpy:    {t_ref:.2f} s wall ({a.tokens / t_ref:.2f} tokens/s)")
    print(f"speedup (wall, compile included): {t_ref / t_ours:.2f}x")
    print("tinymlir stderr:", r_ours.stderr.strip())
    if work:
        shutil.rmtree(work, ignore_errors=True)
    if not same:
        sys.exit("the two runs generated different tokens")


if __name__ == "__main__":
    main()
