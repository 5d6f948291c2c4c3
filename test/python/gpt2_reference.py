#!/usr/bin/python3
"""Independent NumPy GPT-2 reference (classic picoGPT / tiny-gpt2 formulas).

Written plainly from the formulas; weights are float32 and NumPy's own
promotion decides every intermediate dtype.  Under NEP 50 ("weak") promotion
np.sqrt(q.shape[-1]) and np.sqrt(2 / np.pi) are float64 NumPy scalars, so the
attention scores, GELU outputs, the residual stream from the first attention
sublayer on, and the logits are float64.  Nothing is cast on purpose.

CLI:
  gpt2_reference.py --model DIR (--prompt-ids 1,2,3 | --prompt TEXT)
                    --tokens N [--dump DIR] [--json] [--time]
                    [--tokenizer-data DIR] [--precision reference|float32]
--prompt TEXT is tokenized with test/python/bpe_reference.py (encoder.json +
vocab.bpe from --tokenizer-data, else the model dir, else data/gpt2).

--dump DIR writes per generation step s (0-based; step s runs the model on the
prompt plus the s tokens generated so far):
  step{s}_embed.npy         wte[ids] + wpe[positions]         (T, C) float32
  step{s}_block{i}_attn.npy residual after block i attention  (T, C)
  step{s}_block{i}_ffn.npy  residual after block i MLP        (T, C)
  step{s}_logits.npy        logits for all positions          (T, V) float64
  output_ids.json           {"prompt_ids": [...], "output_ids": [...]}
(output_ids are the generated ids only.)
"""

import os

os.environ.setdefault("NPY_PROMOTION_STATE", "weak")

import argparse
import json
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_np  # noqa: E402

# ---------------------------------------------------------------- the model
# The type of the two scalar constants: np.sqrt gives float64 NumPy scalars,
# which promote (the reference). --precision float32 makes them float32, and
# then the whole model runs in float32.
CONSTANT = np.float64


def gelu(x):
    return 0.5 * x * (1 + np.tanh(CONSTANT(np.sqrt(2 / np.pi)) * (x + 0.044715 * x**3)))


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def layer_norm(x, g, b, eps=1e-5):
    mean = np.mean(x, axis=-1, keepdims=True)
    variance = np.var(x, axis=-1, keepdims=True)
    return g * (x - mean) / np.sqrt(variance + eps) + b


def linear(x, w, b):
    return x @ w + b


def ffn(x, c_fc, c_proj):
    return linear(gelu(linear(x, **c_fc)), **c_proj)


def attention(q, k, v, mask):
    return softmax(q @ k.T / CONSTANT(np.sqrt(q.shape[-1])) + mask) @ v


def mha(x, c_attn, c_proj, n_head):
    x = linear(x, **c_attn)
    qkv = np.split(x, 3, axis=-1)
    qkv_heads = list(map(lambda x: np.split(x, n_head, axis=-1), qkv))
    causal_mask = (1 - np.tri(x.shape[0], dtype=x.dtype)) * -1e10
    out_heads = [attention(q, k, v, causal_mask) for q, k, v in zip(*qkv_heads)]
    return linear(np.hstack(out_heads), **c_proj)


def transformer_block(x, mlp, attn, ln_1, ln_2, n_head, trace=None):
    x = x + mha(layer_norm(x, **ln_1), **attn, n_head=n_head)
    if trace is not None:
        trace.append(("attn", x))
    x = x + ffn(layer_norm(x, **ln_2), **mlp)
    if trace is not None:
        trace.append(("ffn", x))
    return x


def gpt2(inputs, wte, wpe, blocks, ln_f, n_head, trace=None):
    """inputs: list of token ids.  trace: optional list that receives
    ("embed", x), then ("attn", x), ("ffn", x) per block, then
    ("logits", logits)."""
    x = wte[inputs] + wpe[range(len(inputs))]
    if trace is not None:
        trace.append(("embed", x))
    for block in blocks:
        x = transformer_block(x, **block, n_head=n_head, trace=trace)
    logits = layer_norm(x, **ln_f) @ wte.T
    if trace is not None:
        trace.append(("logits", logits))
    return logits


def generate(ids, params, n_head, n_tokens, on_step=None):
    """Greedy decoding, recomputing the whole prefix every step.
    on_step(step, ids_in, trace, seconds) is called after each step when
    given (trace is then recorded).  Returns the generated ids."""
    ids = list(ids)
    out = []
    for step in range(n_tokens):
        trace = [] if on_step is not None else None
        t0 = time.perf_counter()
        logits = gpt2(ids, **params, n_head=n_head, trace=trace)
        nxt = int(np.argmax(logits[-1]))
        dt = time.perf_counter() - t0
        if on_step is not None:
            on_step(step, list(ids), trace, dt)
        ids.append(nxt)
        out.append(nxt)
    return out


# ---------------------------------------------------------- checkpoint I/O
def load_hparams(model_dir):
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)

    def pick(*names):
        for n in names:
            if n in cfg:
                return int(cfg[n])
        raise KeyError(f"config.json lacks any of {names}")

    return {
        "n_layer": pick("n_layer", "num_hidden_layers"),
        "n_head": pick("n_head", "num_attention_heads"),
        "n_embd": pick("n_embd", "hidden_size"),
        "n_vocab": pick("vocab_size"),
        "n_ctx": pick("n_positions", "n_ctx", "max_position_embeddings"),
    }


def load_params(model_dir, hparams=None):
    """Load model.safetensors (HF GPT-2 names, optional "transformer."
    prefix, h.{i}.attn.bias / masked_bias ignored) into the nested dict the
    model functions take."""
    hp = hparams or load_hparams(model_dir)
    raw = safetensors_np.load(os.path.join(model_dir, "model.safetensors"))
    t = {}
    for k, v in raw.items():
        if k.startswith("transformer."):
            k = k[len("transformer.") :]
        if k.endswith(".attn.bias") or k.endswith(".attn.masked_bias"):
            continue
        t[k] = v

    def get(name, shape):
        if name not in t:
            raise KeyError(f"checkpoint lacks tensor {name!r}")
        a = t[name]
        if a.dtype != np.float32:
            a = a.astype(np.float32)
        if tuple(a.shape) != tuple(shape):
            raise ValueError(f"{name}: shape {a.shape}, expected {shape}")
        return a

    C, V, P = hp["n_embd"], hp["n_vocab"], hp["n_ctx"]
    blocks = []
    for i in range(hp["n_layer"]):
        h = f"h.{i}."
        blocks.append(
            {
                "ln_1": {"g": get(h + "ln_1.weight", (C,)), "b": get(h + "ln_1.bias", (C,))},
                "attn": {
                    "c_attn": {
                        "w": get(h + "attn.c_attn.weight", (C, 3 * C)),
                        "b": get(h + "attn.c_attn.bias", (3 * C,)),
                    },
                    "c_proj": {
                        "w": get(h + "attn.c_proj.weight", (C, C)),
                        "b": get(h + "attn.c_proj.bias", (C,)),
                    },
                },
                "ln_2": {"g": get(h + "ln_2.weight", (C,)), "b": get(h + "ln_2.bias", (C,))},
                "mlp": {
                    "c_fc": {
                        "w": get(h + "mlp.c_fc.weight", (C, 4 * C)),
                        "b": get(h + "mlp.c_fc.bias", (4 * C,)),
                    },
                    "c_proj": {
                        "w": get(h + "mlp.c_proj.weight", (4 * C, C)),
                        "b": get(h + "mlp.c_proj.bias", (C,)),
                    },
                },
            }
        )
    return {
        "wte": get("wte.weight", (V, C)),
        "wpe": get("wpe.weight", (P, C)),
        "blocks": blocks,
        "ln_f": {"g": get("ln_f.weight", (C,)), "b": get("ln_f.bias", (C,))},
    }


# ---------------------------------------------------------------------- CLI
def default_tokenizer_dir(model_dir):
    """encoder.json + vocab.bpe next to the model if present, else the
    repository's data/gpt2."""
    if all(os.path.exists(os.path.join(model_dir, f)) for f in ("encoder.json", "vocab.bpe")):
        return model_dir
    return os.path.normpath(
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "gpt2")
    )


def encode_text(text, data_dir):
    """Tokenize with the project's independent BPE reference
    (test/python/bpe_reference.py)."""
    try:
        import bpe_reference
    except ImportError as e:
        raise SystemExit(f"--prompt needs test/python/bpe_reference.py: {e}") from None
    if hasattr(bpe_reference, "encode"):
        return [int(i) for i in bpe_reference.encode(text)]
    enc = bpe_reference.get_encoder(data_dir)
    return [int(i) for i in enc.encode(text)]


def parse_ids(s):
    return [int(p) for p in s.replace(" ", "").split(",") if p != ""]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help="dir with model.safetensors + config.json")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--prompt-ids", help="comma-separated token ids")
    g.add_argument("--prompt", help="prompt text (uses bpe_reference.encode)")
    ap.add_argument(
        "--tokenizer-data",
        help="dir with encoder.json + vocab.bpe for --prompt "
        "(default: the model dir if it has them, else data/gpt2)",
    )
    ap.add_argument("--tokens", type=int, required=True, help="number of tokens to generate")
    ap.add_argument("--dump", help="dir for per-step .npy dumps")
    ap.add_argument(
        "--json", action="store_true", help="print {prompt_ids, output_ids} JSON on stdout"
    )
    ap.add_argument(
        "--time", action="store_true", help="print per-step wall time and tokens/s on stderr"
    )
    ap.add_argument(
        "--precision",
        choices=("reference", "float32"),
        default="reference",
        help="float32: float32 scalar constants, so float32 throughout",
    )
    a = ap.parse_args(argv)
    global CONSTANT
    CONSTANT = np.float32 if a.precision == "float32" else np.float64

    hp = load_hparams(a.model)
    params = load_params(a.model, hp)
    prompt_ids = (
        parse_ids(a.prompt_ids)
        if a.prompt_ids is not None
        else encode_text(a.prompt, a.tokenizer_data or default_tokenizer_dir(a.model))
    )
    if not prompt_ids:
        raise SystemExit("empty prompt")
    if any(i < 0 or i >= hp["n_vocab"] for i in prompt_ids):
        raise SystemExit(f"prompt id out of range [0, {hp['n_vocab']})")
    if a.tokens < 0:
        raise SystemExit("--tokens must be >= 0")
    if len(prompt_ids) + a.tokens > hp["n_ctx"]:
        raise SystemExit(
            f"prompt ({len(prompt_ids)}) + tokens ({a.tokens}) exceeds n_positions ({hp['n_ctx']})"
        )

    if a.dump:
        os.makedirs(a.dump, exist_ok=True)
    step_times = []

    def on_step(step, ids_in, trace, dt):
        step_times.append(dt)
        if a.time:
            print(f"step {step}: T={len(ids_in)} {dt * 1e3:.1f} ms", file=sys.stderr)
        if a.dump:
            block = 0
            for kind, arr in trace:
                if kind == "embed":
                    name = f"step{step}_embed.npy"
                elif kind == "logits":
                    name = f"step{step}_logits.npy"
                else:
                    name = f"step{step}_block{block}_{kind}.npy"
                    if kind == "ffn":
                        block += 1
                np.save(os.path.join(a.dump, name), arr)

    need_cb = bool(a.dump) or a.time
    t0 = time.perf_counter()
    out_ids = generate(prompt_ids, params, hp["n_head"], a.tokens, on_step if need_cb else None)
    total = time.perf_counter() - t0

    result = {"prompt_ids": prompt_ids, "output_ids": out_ids}
    if a.dump:
        with open(os.path.join(a.dump, "output_ids.json"), "w") as f:
            json.dump(result, f)
            f.write("\n")
    if a.time:
        n = len(out_ids)
        tps = n / total if total > 0 else float("inf")
        print(
            f"total: {n} tokens in {total:.3f} s, {tps:.2f} tokens/s "
            f"(prompt {len(prompt_ids)} tokens, full-prefix recompute)",
            file=sys.stderr,
        )
    if a.json:
        print(json.dumps(result))
    elif not a.dump:
        print(" ".join(str(i) for i in out_ids))
    return 0


if __name__ == "__main__":
    sys.exit(main())
