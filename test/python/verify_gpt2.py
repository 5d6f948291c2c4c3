#!/usr/bin/env python3
"""Checks tinymlir-gpt2 against the NumPy GPT-2 reference, step by step.

Runs both on the same checkpoint and prompt, then compares the embedding,
every block's two residual outputs and the logits at every step (rtol = atol =
3e-4, equal dtypes and shapes), the prompt ids, and the generated ids exactly,
for tinymlir's full-prefix mode (--dump); and the tokens and each step's
last-position logits of its default incremental (key/value cache) mode.
--precision float32 runs both in float32 throughout, compared within a bound
derived from float32 rounding (float32_tolerance).

  verify_gpt2.py --binary build/tools/tinymlir-gpt2 --model DIR \
      (--prompt TEXT | --prompt-ids 1,2,3) --tokens N [--expect 262,749,...]
  # or make a random checkpoint first:
  verify_gpt2.py --binary ... --maker build/tools/tinymlir-make-gpt2 \
      --make "--layers 2 --heads 2 --embd 32 --vocab 100 --positions 64 --seed 1" ...
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

os.environ.setdefault("NPY_PROMOTION_STATE", "weak")
import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RTOL = ATOL = 3e-4


def float32_tolerance(config):
    """rtol = atol for --precision float32: both sides compute the same
    formulas in float32, in different orders. A product of inner length K is
    within gamma_K = K u / (1 - K u) of |A| @ |B| on each side (u = 2^-24), so
    two sides differ by up to 2 gamma_K; to first order the relative
    differences of the products on a value's path add up. A path holds at most
    6 products per layer (qkv, scores, weights @ v, out, fc, fc_proj) and the
    head, each of inner length at most max(4 C, n_positions); elementwise ops
    add a few u each, which the bound's K u dwarfs."""
    u = 2.0**-24
    k = max(4 * config["n_embd"], config["n_positions"])
    gamma = k * u / (1 - k * u)
    return (6 * config["n_layer"] + 1) * 2 * gamma


def run(cmd, **kw):
    result = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if result.returncode != 0:
        sys.exit(f"FAILED: {' '.join(cmd)}\n{result.stdout}\n{result.stderr}")
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", required=True, help="path to tinymlir-gpt2")
    ap.add_argument("--model", help="checkpoint directory (made with --maker if absent)")
    ap.add_argument("--maker", help="path to tinymlir-make-gpt2")
    ap.add_argument("--make", default="", help="arguments for the maker")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--prompt")
    g.add_argument("--prompt-ids")
    ap.add_argument("--tokens", type=int, default=10)
    ap.add_argument("--expect", help="expected generated ids, comma-separated")
    ap.add_argument("--keep", action="store_true", help="keep the dumps")
    ap.add_argument("--precision", choices=("reference", "float32"), default="reference")
    ap.add_argument(
        "--min-distinct",
        type=int,
        default=0,
        help="fail unless the reference generates at least this many distinct "
        "tokens (a checkpoint whose greedy output repeats one token tells "
        "little apart)",
    )
    a = ap.parse_args()

    work = tempfile.mkdtemp(prefix="tinymlir-verify-")
    model = a.model
    if model is None:
        if not a.maker:
            sys.exit("give --model, or --maker and --make to create one")
        model = os.path.join(work, "model")
        run([a.maker, "--out", model] + a.make.split())
    prompt = ["--prompt", a.prompt] if a.prompt is not None else ["--prompt-ids", a.prompt_ids]
    prompt += ["--precision", a.precision]
    rtol = atol = RTOL
    if a.precision == "float32":
        with open(os.path.join(model, "config.json")) as f:
            rtol = atol = float32_tolerance(json.load(f))
    ours, ref = os.path.join(work, "ours"), os.path.join(work, "reference")
    # Compiled kernels go to this run's own cache directory, never ~/.cache.
    cache = ["--cache-dir", os.path.join(work, "kernels")]
    # Greedy decoding of exactly --tokens tokens, as the reference: --ignore-eos,
    # since a random checkpoint with GPT-2's vocabulary may choose <|endoftext|>.
    run(
        [
            a.binary,
            "--model",
            model,
            *prompt,
            "--tokens",
            str(a.tokens),
            "--dump",
            ours,
            "--json",
            "--ignore-eos",
            *cache,
        ]
    )
    incremental = json.loads(
        run(
            [
                a.binary,
                "--model",
                model,
                *prompt,
                "--tokens",
                str(a.tokens),
                "--json",
                "--ignore-eos",
                *cache,
                "--logits",
                os.path.join(work, "incremental_logits.npy"),
            ]
        ).stdout
    )
    run(
        [
            sys.executable,
            os.path.join(HERE, "gpt2_reference.py"),
            "--model",
            model,
            *prompt,
            "--tokens",
            str(a.tokens),
            "--dump",
            ref,
        ]
    )

    failures = []
    names = sorted(f for f in os.listdir(ref) if f.endswith(".npy"))
    if sorted(f for f in os.listdir(ours) if f.endswith(".npy")) != names:
        failures.append("the two runs dumped different sets of arrays")
    worst = 0.0
    for name in names:
        path = os.path.join(ours, name)
        if not os.path.exists(path):
            continue
        x, y = np.load(path), np.load(os.path.join(ref, name))
        if x.dtype != y.dtype or x.shape != y.shape:
            failures.append(f"{name}: {x.dtype} {x.shape} vs reference {y.dtype} {y.shape}")
            continue
        if not np.allclose(x, y, rtol=rtol, atol=atol):
            diff = np.abs(x.astype(np.float64) - y)
            failures.append(f"{name}: max abs difference {diff.max():.3g}")
        worst = max(worst, float(np.max(np.abs(x.astype(np.float64) - y))) if x.size else 0.0)
    with open(os.path.join(ours, "output_ids.json")) as f:
        got = json.load(f)
    with open(os.path.join(ref, "output_ids.json")) as f:
        want = json.load(f)
    if got["prompt_ids"] != want["prompt_ids"]:
        failures.append(f"prompt ids {got['prompt_ids']} vs reference {want['prompt_ids']}")
    if got["output_ids"] != want["output_ids"]:
        failures.append(f"tokens {got['output_ids']} vs reference {want['output_ids']}")
    # Incremental decoding (the default mode): the same tokens, and each step's
    # last-position logits within tolerance of the reference's.
    if incremental["output_ids"] != want["output_ids"]:
        failures.append(
            f"incremental tokens {incremental['output_ids']} vs reference {want['output_ids']}"
        )
    inc = np.load(os.path.join(work, "incremental_logits.npy"))
    last = (
        np.stack([np.load(os.path.join(ref, f"step{s}_logits.npy"))[-1] for s in range(a.tokens)])
        if a.tokens
        else inc
    )
    if inc.dtype != last.dtype or inc.shape != last.shape:
        failures.append(f"incremental logits {inc.dtype} {inc.shape} vs {last.dtype} {last.shape}")
    elif not np.allclose(inc, last, rtol=rtol, atol=atol):
        failures.append(f"incremental logits: max abs difference {np.abs(inc - last).max():.3g}")
    else:
        worst = max(worst, float(np.abs(inc - last).max()) if inc.size else 0.0)
    if len(set(want["output_ids"])) < a.min_distinct:
        failures.append(
            f"the reference generated only {len(set(want['output_ids']))} distinct "
            f"tokens {want['output_ids']}, fewer than --min-distinct "
            f"{a.min_distinct}: choose another checkpoint or prompt"
        )
    if a.expect is not None:
        expected = [int(t) for t in a.expect.split(",")]
        if got["output_ids"] != expected:
            failures.append(f"tokens {got['output_ids']} vs expected {expected}")

    print(
        f"compared {len(names)} arrays over {a.tokens} steps ({a.precision}); max abs "
        f"difference {worst:.3g}; tolerance {rtol:.3g}; tokens {got['output_ids']}"
    )
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"dumps kept in {work}")
    if failures:
        print("\n".join("MISMATCH " + f for f in failures))
        sys.exit(1)
    print(
        "OK: identical tokens (full-prefix and incremental), all intermediates and logits "
        f"within rtol = atol = {rtol:.3g}, equal dtypes"
    )


if __name__ == "__main__":
    main()
