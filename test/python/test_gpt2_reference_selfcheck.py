#!/usr/bin/python3
"""Self-check of the NumPy GPT-2 reference and the safetensors helper.

Run: /usr/bin/python3 test/python/test_gpt2_reference_selfcheck.py
"""

import os

os.environ.setdefault("NPY_PROMOTION_STATE", "weak")

import json
import shutil
import subprocess
import sys
import tempfile
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gpt2_reference as ref  # noqa: E402
import safetensors_np as st  # noqa: E402

TMP = tempfile.mkdtemp(prefix="gpt2ref_selfcheck_")
MODEL = os.path.join(TMP, "tiny")
st.make_random_checkpoint(MODEL, n_layer=2, n_head=2, n_embd=16, vocab=50, positions=32, seed=1)
HP = ref.load_hparams(MODEL)
PARAMS = ref.load_params(MODEL, HP)
PROMPT = [3, 14, 15, 9, 26, 5]


def run_traced(ids):
    trace = []
    logits = ref.gpt2(ids, **PARAMS, n_head=HP["n_head"], trace=trace)
    return logits, trace


def test_promotion_state():
    assert np._get_promotion_state() == "weak"


def test_dtypes():
    logits, trace = run_traced(PROMPT)
    kinds = [k for k, _ in trace]
    assert kinds == ["embed"] + ["attn", "ffn"] * 2 + ["logits"], kinds
    d = dict((k, a) for k, a in trace if k in ("embed", "logits"))
    assert d["embed"].dtype == np.float32, d["embed"].dtype
    assert trace[1][1].dtype == np.float64, trace[1][1].dtype  # block0 attn
    assert trace[2][1].dtype == np.float64
    assert logits.dtype == np.float64, logits.dtype
    assert logits.shape == (len(PROMPT), 50)
    assert np.isfinite(logits).all()


def test_causality():
    a, _ = run_traced(PROMPT)
    b, _ = run_traced(PROMPT[:-1] + [(PROMPT[-1] + 7) % 50])
    assert np.array_equal(a[:-1], b[:-1])
    assert not np.array_equal(a[-1], b[-1])


def test_prefix_consistency():
    a, _ = run_traced(PROMPT)
    b, _ = run_traced(PROMPT[:3])
    # The two runs differ only in rounding: NumPy's BLAS may block the float32
    # products of 3 and 6 rows differently. Each product of at most
    # K = 4 * n_embd = 64 terms is within gamma_K (K * u32) of the exact value
    # relative to magnitudes below 4; both runs err (factor 2) and two blocks
    # and the unembedding amplify by less than 8. A leak from a future
    # position changes these rows by far more (see test_causality).
    K, u32 = 4 * 16, 2.0**-24
    tol = 2 * 8 * 4 * K * u32
    np.testing.assert_allclose(a[:3], b, rtol=tol, atol=tol)


def test_formulas():
    x = np.linspace(-3, 3, 13).astype(np.float32)
    g = ref.gelu(x)
    assert g.dtype == np.float64
    assert abs(float(g[-1]) - 2.99636) < 1e-4 and abs(float(g[6])) < 1e-12
    s = ref.softmax(np.array([[1.0, 2.0, 3.0]], np.float32))
    assert s.dtype == np.float32
    np.testing.assert_allclose(s.sum(-1), 1.0, rtol=1e-6)
    y = ref.layer_norm(
        np.arange(8, dtype=np.float32).reshape(2, 4),
        np.ones(4, np.float32),
        np.zeros(4, np.float32),
    )
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.mean(-1), 0, atol=1e-6)


def test_safetensors_roundtrip():
    rng = np.random.default_rng(0)
    t = {
        "a.f32": rng.standard_normal((3, 4)).astype(np.float32),
        "b.f16": rng.standard_normal((5,)).astype(np.float16),
        "c.f64": rng.standard_normal((2, 1, 3)),
        "d.i32": np.arange(-3, 3, dtype=np.int32),
        "e.i64": np.array([1 << 40], np.int64),
        "f.u8": np.arange(7, dtype=np.uint8),
        "g.scalar": np.array(2.5, np.float32),
        "h.empty": np.zeros((0, 4), np.float32),
    }
    p = os.path.join(TMP, "rt.safetensors")
    st.save(p, t, metadata={"format": "pt"})
    with open(p, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
    assert n % 8 == 0
    assert header["__metadata__"] == {"format": "pt"}
    assert header["a.f32"]["dtype"] == "F32"
    assert header["b.f16"]["dtype"] == "F16"
    assert header["d.i32"]["dtype"] == "I32"
    back, meta = st.load(p, with_metadata=True)
    assert meta == {"format": "pt"}
    assert sorted(back) == sorted(t)
    for k in t:
        assert back[k].dtype == t[k].dtype, k
        assert back[k].shape == t[k].shape, k
        assert np.array_equal(back[k], t[k]), k
        assert back[k].flags.writeable


def test_safetensors_bf16():
    # hand-build a BF16 tensor: 1.0 = 0x3F80, -2.0 = 0xC000
    header = json.dumps({"x": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}}).encode()
    header += b" " * ((-len(header)) % 8)
    p = os.path.join(TMP, "bf16.safetensors")
    with open(p, "wb") as f:
        f.write(
            len(header).to_bytes(8, "little") + header + np.array([0x3F80, 0xC000], "<u2").tobytes()
        )
    x = st.load(p)["x"]
    assert x.dtype == np.float32 and x.tolist() == [1.0, -2.0]


def test_checkpoint_layout():
    t = st.load(os.path.join(MODEL, "model.safetensors"))
    assert t["wte.weight"].shape == (50, 16)
    assert t["wpe.weight"].shape == (32, 16)
    assert t["h.1.attn.c_attn.weight"].shape == (16, 48)
    assert t["h.1.mlp.c_proj.weight"].shape == (64, 16)
    assert all(a.dtype == np.float32 for a in t.values())
    with open(os.path.join(MODEL, "config.json")) as f:
        cfg = json.load(f)
    assert cfg["n_head"] == 2 and cfg["n_layer"] == 2 and cfg["vocab_size"] == 50


def test_prefix_and_mask_buffers_ignored():
    d = os.path.join(TMP, "prefixed")
    st.make_random_checkpoint(
        d, 2, 2, 16, 50, 32, seed=1, prefix="transformer.", include_mask_buffers=True
    )
    p2 = ref.load_params(d)
    a = ref.gpt2(PROMPT, **PARAMS, n_head=2)
    b = ref.gpt2(PROMPT, **p2, n_head=2)
    assert np.array_equal(a, b)


def test_cli_dump():
    dump = os.path.join(TMP, "dump")
    r = subprocess.run(
        [
            sys.executable,
            os.path.join(HERE, "gpt2_reference.py"),
            "--model",
            MODEL,
            "--prompt-ids",
            ",".join(map(str, PROMPT)),
            "--tokens",
            "3",
            "--dump",
            dump,
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    res = json.loads(r.stdout)
    assert res["prompt_ids"] == PROMPT and len(res["output_ids"]) == 3
    with open(os.path.join(dump, "output_ids.json")) as f:
        assert json.load(f) == res
    gen = ref.generate(PROMPT, PARAMS, 2, 3)
    assert gen == res["output_ids"]
    for s in range(3):
        T = len(PROMPT) + s
        e = np.load(os.path.join(dump, f"step{s}_embed.npy"))
        assert e.dtype == np.float32 and e.shape == (T, 16)
        for i in range(2):
            for kind in ("attn", "ffn"):
                a = np.load(os.path.join(dump, f"step{s}_block{i}_{kind}.npy"))
                assert a.dtype == np.float64 and a.shape == (T, 16)
        lg = np.load(os.path.join(dump, f"step{s}_logits.npy"))
        assert lg.dtype == np.float64 and lg.shape == (T, 50)
        assert int(np.argmax(lg[-1])) == res["output_ids"][s]
    assert not os.path.exists(os.path.join(dump, "step3_logits.npy"))


def test_prompt_tokenizer_hookup():
    # --prompt goes through test/python/bpe_reference.py, which needs the
    # tokenizer data and python3-regex (both dependencies: a failure, not a skip).
    data = ref.default_tokenizer_dir(MODEL)
    assert os.path.exists(os.path.join(HERE, "bpe_reference.py"))
    assert os.path.exists(os.path.join(data, "encoder.json")), data
    import regex  # noqa: F401

    ids = ref.encode_text("The quick brown fox jumps over the lazy dog.", data)
    assert ids == [464, 2068, 7586, 21831, 18045, 625, 262, 16931, 3290, 13], ids


def main():
    tests = [(k, v) for k, v in globals().items() if k.startswith("test_") and callable(v)]
    passed = failed = 0
    for name, fn in tests:
        try:
            fn()
            passed += 1
        except Exception:
            failed += 1
            print(f"FAIL {name}")
            traceback.print_exc()
    print(f"{passed} passed, {failed} failed")
    if not failed:
        shutil.rmtree(TMP, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
