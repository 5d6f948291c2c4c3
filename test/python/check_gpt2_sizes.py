#!/usr/bin/env python3
"""Every released GPT-2 shape loads, runs and matches the NumPy reference.

  check_gpt2_sizes.py --binary tinymlir-gpt2 --maker tinymlir-make-gpt2 [--keep-going]
                      distilgpt2 gpt2-medium gpt2-large gpt2-xl

For each name: a random checkpoint with that name's exact shapes
(tinymlir-make-gpt2 --preset NAME), checked by verify_gpt2.py on a short prompt
(every intermediate, the logits and the tokens, full-prefix and incremental),
then tinymlir-gpt2's peak resident memory against the checkpoint's size: the
weights are memory-mapped, not copied or widened, so the peak is the weights
plus what the same run needs for a tiny model (the compiler, the runtime),
within 10% of the weights. The checkpoint is deleted afterwards.

The weights' scale is 0.1 * sqrt(768 / n_embd): attention scores keep the same
spread at every width. (At scale 0.3 a 768-wide model's scores are so peaked
that the reference's own float32 rounding in the first block moves later
blocks by 1e-3, beyond verify_gpt2.py's 3e-4.)

Exits 77 (CTest's skip) when TMPDIR has too little free space, saying so.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROMPT = "Alan Turing theorized that computers would one day become"
SKIP = 77


def peak_rss_kib(cmd, env):
    """Peak resident memory of one run of cmd, in KiB (wait4's rusage)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"FAILED: {' '.join(cmd)}\n{err}")
    return usage.ru_maxrss


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--maker", required=True)
    ap.add_argument("--tokens", type=int, default=3)
    ap.add_argument("names", nargs="+")
    a = ap.parse_args()
    sizes = {
        "distilgpt2": (6, 768),
        "gpt2-medium": (24, 1024),
        "gpt2-large": (36, 1280),
        "gpt2-xl": (48, 1600),
        "gpt2": (12, 768),
    }
    work = tempfile.mkdtemp(prefix="tinymlir-sizes-")
    env = dict(os.environ, TINYMLIR_CACHE_DIR=os.path.join(work, "kernels"))
    failures = []
    try:
        # The largest checkpoint must fit, with room to spare.
        need = max(4 * (12 * sizes[n][0] * sizes[n][1] ** 2 + 51281 * sizes[n][1]) for n in a.names)
        free = shutil.disk_usage(work).free
        if free < 1.2 * need:
            print(
                f"SKIPPED: {a.names} need {need / 1e9:.1f} GB free in {os.path.dirname(work)}, "
                f"it has {free / 1e9:.1f} GB"
            )
            return SKIP
        run = [a.binary, "--prompt", PROMPT, "--tokens", str(a.tokens), "--ignore-eos"]
        tiny = os.path.join(work, "tiny")
        subprocess.run(
            [a.maker, "--preset", "tiny", "--out", tiny], check=True, stdout=subprocess.DEVNULL
        )
        base = peak_rss_kib(run + ["--model", tiny], env)
        base -= os.path.getsize(os.path.join(tiny, "model.safetensors")) // 1024
        print(f"tinymlir-gpt2 without its weights: {base / 1024:.0f} MiB peak (a tiny model)")
        for name in a.names:
            layers, width = sizes[name]
            scale = round(0.1 * (768 / width) ** 0.5, 4)
            model = os.path.join(work, name)
            subprocess.run(
                [a.maker, "--preset", name, "--scale", str(scale), "--seed", "1", "--out", model],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            with open(os.path.join(model, "config.json")) as f:
                config = json.load(f)
            assert (config["n_layer"], config["n_embd"]) == (layers, width), config
            verify = subprocess.run(
                [
                    sys.executable,
                    os.path.join(HERE, "verify_gpt2.py"),
                    "--binary",
                    a.binary,
                    "--model",
                    model,
                    "--prompt",
                    PROMPT,
                    "--tokens",
                    str(a.tokens),
                    "--min-distinct",
                    "2",
                ],
                capture_output=True,
                text=True,
                env=env,
            )
            summary = verify.stdout.strip().splitlines()
            print(f"{name}: {summary[-2] if len(summary) > 1 else verify.stdout + verify.stderr}")
            if verify.returncode != 0:
                failures.append(f"{name}: verify_gpt2.py failed:\n{verify.stdout}{verify.stderr}")
            weights = os.path.getsize(os.path.join(model, "model.safetensors")) // 1024
            peak = peak_rss_kib(run + ["--model", model], env)
            over = peak - base - weights
            print(
                f"{name}: {layers} layers x {width}, weights {weights / 1024:.0f} MiB, peak RSS "
                f"{peak / 1024:.0f} MiB: {over / 1024:+.0f} MiB beyond weights + runtime "
                f"({over / weights:+.1%} of the weights)"
            )
            if over > 0.10 * weights:
                failures.append(
                    f"{name}: peak RSS {peak} KiB is more than the weights ({weights} "
                    f"KiB) + the runtime ({base} KiB) + 10%"
                )
            shutil.rmtree(model, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("\n".join("FAIL " + f for f in failures))
        return 1
    print(
        f"OK: {', '.join(a.names)} match the reference; peak memory within weights + runtime + 10%"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
