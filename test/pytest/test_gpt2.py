"""GPT-2 from Python: a plain NumPy GPT-2 traced unmodified by jit, and tinymlir.gpt2
(the C++ incremental decoder) against the tinymlir-gpt2 command line."""

import dataclasses
import json
import struct
import subprocess

import numpy as np
import pytest

import tinymlir
import tinymlir.gpt2
from tinymlir import jit

# --- A plain NumPy GPT-2 (the style of the public NumPy references) ----------------


@dataclasses.dataclass
class LayerNorm:
    g: np.ndarray
    b: np.ndarray


@dataclasses.dataclass
class Linear:
    w: np.ndarray
    b: np.ndarray


@dataclasses.dataclass
class Block:
    ln_1: LayerNorm
    attn: Linear
    attn_proj: Linear
    ln_2: LayerNorm
    fc: Linear
    fc_proj: Linear


@dataclasses.dataclass
class ModelParams:
    wte: np.ndarray
    wpe: np.ndarray
    blocks: list
    ln_f: LayerNorm


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def softmax(x):
    exp_x = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return exp_x / np.sum(exp_x, axis=-1, keepdims=True)


def layer_norm(x, p, eps=1e-5):
    mean = np.mean(x, axis=-1, keepdims=True)
    variance = np.var(x, axis=-1, keepdims=True)
    x = (x - mean) / np.sqrt(variance + eps)
    return p.g * x + p.b


def linear(x, p):
    return x @ p.w + p.b


def ffn(x, block):
    return linear(gelu(linear(x, block.fc)), block.fc_proj)


def attention(q, k, v, mask):
    return softmax(q @ k.T / np.sqrt(q.shape[-1]) + mask) @ v


def mha(x, block, n_head):
    x = linear(x, block.attn)
    qkv = np.split(x, 3, axis=-1)
    qkv_heads = list(map(lambda x: np.split(x, n_head, axis=-1), qkv))
    causal_mask = (1 - np.tri(x.shape[0], dtype=x.dtype)) * -1e10
    out_heads = [attention(q, k, v, causal_mask) for q, k, v in zip(*qkv_heads)]
    x = np.hstack(out_heads)
    return linear(x, block.attn_proj)


def transformer_block(x, block, n_head):
    x = x + mha(layer_norm(x, block.ln_1), block, n_head)
    x = x + ffn(layer_norm(x, block.ln_2), block)
    return x


def gpt2(inputs, params, n_head):
    x = params.wte[inputs] + params.wpe[range(len(inputs))]
    for block in params.blocks:
        x = transformer_block(x, block, n_head)
    x = layer_norm(x, params.ln_f)
    return x @ params.wte.T


# --- Checkpoints --------------------------------------------------------------------


def read_safetensors(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    header.pop("__metadata__", None)
    out = {}
    for name, info in header.items():
        assert info["dtype"] == "F32"
        begin, end = info["data_offsets"]
        out[name] = np.frombuffer(data, np.float32, (end - begin) // 4, 8 + n + begin).reshape(
            info["shape"]
        )
    return out


def load_params(directory):
    t = read_safetensors(f"{directory}/model.safetensors")
    cfg = json.load(open(f"{directory}/config.json"))
    ln = lambda k: LayerNorm(t[f"{k}.weight"], t[f"{k}.bias"])
    lin = lambda k: Linear(t[f"{k}.weight"], t[f"{k}.bias"])
    blocks = [
        Block(
            ln(f"h.{i}.ln_1"),
            lin(f"h.{i}.attn.c_attn"),
            lin(f"h.{i}.attn.c_proj"),
            ln(f"h.{i}.ln_2"),
            lin(f"h.{i}.mlp.c_fc"),
            lin(f"h.{i}.mlp.c_proj"),
        )
        for i in range(cfg["n_layer"])
    ]
    return ModelParams(t["wte.weight"], t["wpe.weight"], blocks, ln("ln_f")), cfg


SHAPES = [
    dict(n_layer=2, n_head=4, n_embd=64, vocab_size=512, n_positions=64, seed=1),
    dict(n_layer=1, n_head=2, n_embd=32, vocab_size=300, n_positions=40, seed=2),
    dict(n_layer=3, n_head=3, n_embd=48, vocab_size=1000, n_positions=32, seed=3),
]


@pytest.mark.parametrize(
    "shape", SHAPES, ids=lambda s: f"L{s['n_layer']}H{s['n_head']}C{s['n_embd']}"
)
def test_numpy_gpt2_traced_as_one_kernel(tmp_path, shape):
    directory = tinymlir.gpt2.write_random(tmp_path / "ckpt", **shape)
    params, cfg = load_params(directory)
    n_head = cfg["n_head"]
    compiled = jit(gpt2)
    bucket = 16
    rng = np.random.default_rng(shape["seed"])
    ids = [int(i) for i in rng.integers(0, cfg["vocab_size"], size=5)]
    steps = 6
    for _ in range(steps):
        padded = np.zeros(bucket, np.int32)
        padded[: len(ids)] = ids
        got = compiled(padded, params, n_head=n_head)
        want = gpt2(padded, params, n_head)
        assert got.dtype == want.dtype == np.float64
        np.testing.assert_allclose(got[: len(ids)], want[: len(ids)], rtol=3e-4, atol=3e-4)
        token = int(np.argmax(got[len(ids) - 1]))
        assert token == int(np.argmax(want[len(ids) - 1]))
        ids.append(token)
    # One specialization (one compiled kernel) for the padded length, reused each step.
    s = compiled.stats()
    assert s.size == 1 and s.hits == steps - 1
    module = compiled.compile(padded, params, n_head=n_head).module
    assert module.count("func.func") == 1
    assert module.count("linalg.matmul") >= cfg["n_layer"] * (3 + n_head) + 1


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory):
    directory = tmp_path_factory.mktemp("gpt2-tiny")
    return tinymlir.gpt2.write_random(
        directory, n_layer=2, n_head=4, n_embd=64, vocab_size=50257, n_positions=128, seed=5
    )


def run_cli(args, cache_dir):
    out = subprocess.run(
        [tinymlir.gpt2.tool("tinymlir-gpt2"), *args, "--json", "--cache-dir", str(cache_dir)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


def test_tokenizer_matches_cli_and_round_trips(tiny_checkpoint, tmp_path):
    prompt = "Alan Turing theorized that computers would one day become"
    cli = run_cli(["--model", tiny_checkpoint, "--prompt", prompt, "--tokens", "0"], tmp_path)
    ids = tinymlir.gpt2.encode(prompt)
    assert ids == cli["prompt_ids"]
    assert ids == [36235, 39141, 18765, 1143, 326, 9061, 561, 530, 1110, 1716]  # GPT-2's
    assert tinymlir.gpt2.decode(ids) == prompt
    text = "naïve café — 日本語 🙂\n\n  spaces"
    assert tinymlir.gpt2.decode(tinymlir.gpt2.encode(text)) == text


def test_generate_matches_cli_tokens(tiny_checkpoint, tmp_path):
    prompt = "Alan Turing theorized that computers would one day become"
    n = 12
    cli = run_cli(["--model", tiny_checkpoint, "--prompt", prompt, "--tokens", str(n)], tmp_path)
    model = tinymlir.gpt2.load(tiny_checkpoint, cache_dir=tmp_path)
    streamed = []
    for token in model.generate(prompt, max_new_tokens=n):
        streamed.append(token)
    assert streamed == cli["output_ids"]
    assert model.generate_ids(cli["prompt_ids"], n, incremental=False) == cli["output_ids"]
    cli_ids = run_cli(
        ["--model", tiny_checkpoint, "--prompt-ids", "1,2,3", "--tokens", "5"], tmp_path
    )
    assert list(model.generate([1, 2, 3], 5)) == cli_ids["output_ids"]
    # Stopping early is clean; errors carry the core's message.
    gen = model.generate(prompt, n)
    assert next(gen) == cli["output_ids"][0]
    gen.close()
    with pytest.raises(ValueError, match="exceeds the context"):
        list(model.generate([1] * 120, 20))
    logits = model.forward(cli["prompt_ids"])
    assert logits.shape == (len(cli["prompt_ids"]), 50257) and logits.dtype == np.float64
    assert int(np.argmax(logits[-1])) == cli["output_ids"][0]


def test_float32_precision_matches_the_cli(tiny_checkpoint, tmp_path):
    ids = [36235, 39141, 18765, 1143, 326]
    cli = run_cli(
        [
            "--model",
            tiny_checkpoint,
            "--prompt-ids",
            ",".join(map(str, ids)),
            "--tokens",
            "6",
            "--precision",
            "float32",
        ],
        tmp_path,
    )
    model = tinymlir.gpt2.Model(tiny_checkpoint, precision="float32", cache_dir=tmp_path)
    logits = model.forward(ids)
    assert logits.dtype == np.float32 and logits.shape == (len(ids), 50257)
    assert list(model.generate(ids, 6)) == cli["output_ids"]
    with pytest.raises(ValueError, match="precision must be 'reference' or 'float32', not 'f16'"):
        tinymlir.gpt2.Model(tiny_checkpoint, precision="f16")


def test_a_prefix_cache_serves_a_conversation_resent_each_turn(tiny_checkpoint, tmp_path):
    """Each turn resends the conversation so far: with prefix_cache, its prompt
    starts from the previous turn's keys and values, and the tokens are the same
    as without (the C++ test bounds the logits: BatchTest.APrefixCache...)."""
    plain = tinymlir.gpt2.load(tiny_checkpoint, cache_dir=tmp_path)
    cached = tinymlir.gpt2.load(tiny_checkpoint, cache_dir=tmp_path, prefix_cache=1000)
    assert plain.prefix_cache is None and cached.prefix_cache.limit == 1000
    conversation = tinymlir.gpt2.encode("User: What did Alan Turing theorize?\nAssistant:")
    saved = previous = 0
    for turn, question in enumerate(["\nUser: And then?\nAssistant:", "\nUser: Why?\nAssistant:"]):
        sampling = {} if turn == 0 else {"temperature": 0.9, "top_k": 40, "seed": 3}
        answer = plain.generate_ids(conversation, 8, ignore_eos=True, **sampling)
        assert list(cached.generate(conversation, 8, ignore_eos=True, **sampling)) == answer
        stats = cached.prefix_cache.stats()
        if turn > 0:  # all of the last turn's prompt and all but its last answer token
            assert stats["tokens_saved"] - saved == previous + 7, stats
        saved, previous = stats["tokens_saved"], len(conversation)
        conversation = conversation + answer + tinymlir.gpt2.encode(question)
    assert stats["hits"] == 1 and stats["misses"] == 1, stats
    cached.prefix_cache.clear()
    assert cached.prefix_cache.stats()["positions"] == 0
    with pytest.raises(ValueError, match="prefix_cache must be"):
        tinymlir.gpt2.load(tiny_checkpoint, prefix_cache=-1)


def test_a_model_pickles_by_path_and_settings(tiny_checkpoint, tmp_path):
    """A model travels to other processes by path and settings (never its weights or
    native code): the copy loads the checkpoint again and gives the same tokens."""
    import concurrent.futures
    import multiprocessing
    import pickle

    model = tinymlir.gpt2.load(
        tiny_checkpoint, cache_dir=tmp_path, precision="float32", prefix_cache=64
    )
    data = pickle.dumps(model)
    assert len(data) < 2000, len(data)  # not the weights
    copy = pickle.loads(data)
    assert copy.dir == model.dir and copy.prefix_cache.limit == 64
    want = model.generate_ids([1, 2, 3], 6)
    assert copy.generate_ids([1, 2, 3], 6) == want
    with concurrent.futures.ProcessPoolExecutor(
        1, mp_context=multiprocessing.get_context("spawn")
    ) as pool:
        assert pool.submit(copy.generate_ids, [1, 2, 3], 6).result(timeout=300) == want
