"""tinymlir.gpt2 sampling and end-of-text against the tinymlir-gpt2 command line (the
distributions themselves are tested statistically in test/gpt2/sampling_test.cpp)."""

import json
import os
import subprocess

import numpy as np
import pytest

import tinymlir.gpt2

PROMPT = "Alan Turing theorized that computers would one day become"
SAMPLING = dict(temperature=1.2, top_k=40, top_p=0.9, repeat_penalty=1.3)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    directory = tmp_path_factory.mktemp("gpt2-sampling")
    return tinymlir.gpt2.write_random(
        directory, n_layer=1, n_head=2, n_embd=32, vocab_size=50257, n_positions=64, seed=4
    )


@pytest.fixture(scope="module")
def model(checkpoint, tmp_path_factory):
    return tinymlir.gpt2.load(checkpoint, cache_dir=tmp_path_factory.mktemp("kernels"))


def cli(args, tmp_path, check=True):
    return subprocess.run(
        [
            tinymlir.gpt2.tool("tinymlir-gpt2"),
            *args,
            "--json",
            "--cache-dir",
            str(tmp_path / "kernels"),
        ],
        check=check,
        capture_output=True,
        text=True,
    )


def flags(temperature, top_k, top_p, repeat_penalty, seed):
    return [
        "--temperature",
        str(temperature),
        "--top-k",
        str(top_k),
        "--top-p",
        str(top_p),
        "--repeat-penalty",
        str(repeat_penalty),
        "--seed",
        str(seed),
    ]


def test_a_seed_gives_the_cli_tokens(checkpoint, model, tmp_path):
    got = cli(
        ["--model", checkpoint, "--prompt", PROMPT, "--tokens", "12", *flags(seed=7, **SAMPLING)],
        tmp_path,
    )
    want = json.loads(got.stdout)["output_ids"]
    assert "sampling with --seed 7" in got.stderr
    assert list(model.generate(PROMPT, 12, seed=7, **SAMPLING)) == want
    assert model.generate_ids(PROMPT, 12, seed=7, **SAMPLING) == want
    assert model.generate_ids(PROMPT, 12, seed=7, incremental=False, **SAMPLING) == want
    assert model.generate_ids(PROMPT, 12, seed=8, **SAMPLING) != want
    assert model.generate_ids(PROMPT, 12) != want, "sampled, not greedy"
    # Without a seed, a random one: two runs differ (at 1e-12 odds of a tie).
    assert model.generate_ids(PROMPT, 12, **SAMPLING) != model.generate_ids(PROMPT, 12, **SAMPLING)


def test_repeat_runs_again_with_the_same_tokens(checkpoint, tmp_path):
    # --repeat (a benchmark's warm runs): every run decodes from scratch, so a
    # seed gives the same tokens each time; the timings list each run.
    args = ["--model", checkpoint, "--prompt", PROMPT, "--tokens", "6", *flags(seed=3, **SAMPLING)]
    once = cli(args, tmp_path)
    thrice = cli(args + ["--repeat", "3"], tmp_path)
    assert json.loads(thrice.stdout)["output_ids"] == json.loads(once.stdout)["output_ids"]
    runs = thrice.stderr.split("each run's:")[1].split(")")[0].split()
    assert len(runs) == 3 and all(float(t) > 0 for t in runs), thrice.stderr
    assert "each run's" not in once.stderr
    bad = cli(args + ["--repeat", "0"], tmp_path, check=False)
    assert bad.returncode != 0 and "--repeat" in bad.stderr


def test_temperature_zero_is_greedy(model):
    greedy = model.generate_ids(PROMPT, 8)
    assert model.generate_ids(PROMPT, 8, temperature=0, top_k=3, top_p=0.5, seed=1) == greedy
    # The repetition penalty applies to greedy decoding too.
    assert model.generate_ids(PROMPT, 8, repeat_penalty=1.0) == greedy
    assert model.generate_ids(PROMPT, 8, repeat_penalty=50.0) != greedy


def test_bad_options_name_the_option(checkpoint, model, tmp_path):
    with pytest.raises(ValueError, match=r"\[sampling\] top_p must be in \(0, 1\], got 1.5"):
        model.generate_ids(PROMPT, 2, temperature=1, top_p=1.5)
    with pytest.raises(ValueError, match=r"temperature must be a finite number >= 0"):
        list(model.generate(PROMPT, 2, temperature=-1))
    with pytest.raises(ValueError, match=r"top_k must be >= 0 \(0: off\), got -2"):
        model.generate_ids(PROMPT, 2, top_k=-2)
    with pytest.raises(ValueError, match=r"repeat_penalty must be a finite number > 0"):
        model.generate_ids(PROMPT, 2, repeat_penalty=0)
    out = cli(
        ["--model", checkpoint, "--prompt", PROMPT, "--repeat-penalty", "-1"], tmp_path, check=False
    )
    assert out.returncode == 1
    assert "repeat_penalty must be a finite number > 0 (1: off), got -1" in out.stderr


def test_prompt_ids_decode_with_the_tokenizer_loaded_alongside(checkpoint, tmp_path):
    # The command line loads the tokenizer on another thread while the model
    # loads; with prompt ids it is needed only for the answer's text, and a
    # tokenizer that fails to load is still an error, whichever path needs it.
    text = cli(["--model", checkpoint, "--prompt", PROMPT, "--tokens", "5"], tmp_path)
    want = json.loads(text.stdout)
    ids = cli(
        [
            "--model",
            checkpoint,
            "--prompt-ids",
            ",".join(map(str, want["prompt_ids"])),
            "--tokens",
            "5",
        ],
        tmp_path,
    )
    got = json.loads(ids.stdout)
    assert got["output_ids"] == want["output_ids"]
    assert got["text"] == want["text"] and got["text"]
    empty = tmp_path / "no-tokenizer"
    empty.mkdir()
    for prompt in (["--prompt", PROMPT], ["--prompt-ids", "1,2,3"]):
        out = subprocess.run(
            [
                tinymlir.gpt2.tool("tinymlir-gpt2"),
                "--model",
                checkpoint,
                *prompt,
                "--tokens",
                "2",
                "--json",
                "--cache-dir",
                str(tmp_path / "kernels"),
            ],
            capture_output=True,
            text=True,
            env=dict(os.environ, TINYMLIR_GPT2_DATA=str(empty)),
        )
        assert out.returncode == 1, prompt
        assert f"[tokenizer] {empty}/encoder.json: missing file" in out.stderr, prompt
        assert out.stdout == "", prompt


def read_header(path):
    data = open(path, "rb").read(8)
    n = int.from_bytes(data, "little")
    with open(path, "rb") as f:
        f.seek(8)
        return json.loads(f.read(n)), 8 + n


@pytest.fixture(scope="module")
def eos_checkpoint(tmp_path_factory):
    """A checkpoint whose every logit row has <|endoftext|> far ahead: the final layer
    norm's gain is 0 and its bias u, a unit vector, and wte[50256] = 40 u (logit 40 against
    about 0.1 for the others)."""
    directory = tinymlir.gpt2.write_random(
        tmp_path_factory.mktemp("gpt2-eos"),
        n_layer=1,
        n_head=2,
        n_embd=32,
        vocab_size=50257,
        n_positions=64,
        seed=4,
    )
    path = f"{directory}/model.safetensors"
    header, base = read_header(path)
    data = np.memmap(path, dtype=np.uint8, mode="r+")

    def tensor(name):
        begin, end = header[name]["data_offsets"]
        return data[base + begin : base + end].view(np.float32).reshape(header[name]["shape"])

    u = np.random.default_rng(0).standard_normal(32).astype(np.float32)
    u /= np.linalg.norm(u)
    tensor("ln_f.weight")[:] = 0
    tensor("ln_f.bias")[:] = u
    tensor("wte.weight")[50256] = 40 * u
    data.flush()
    return directory


def test_end_of_text_stops_generation_unless_ignored(eos_checkpoint, tmp_path):
    m = tinymlir.gpt2.load(eos_checkpoint, cache_dir=tmp_path / "kernels")
    assert int(np.argmax(m.forward([1, 2])[-1])) == 50256
    for how in ({}, dict(temperature=1.0, seed=3)):
        assert m.generate_ids([1, 2], 4, **how) == []
        assert list(m.generate([1, 2], 4, **how)) == []
        assert m.generate_ids([1, 2], 4, ignore_eos=True, **how) == [50256] * 4
    logits = tmp_path / "logits.npy"
    out = cli(
        [
            "--model",
            eos_checkpoint,
            "--prompt-ids",
            "1,2",
            "--tokens",
            "4",
            "--logits",
            str(logits),
        ],
        tmp_path,
    )
    assert json.loads(out.stdout)["output_ids"] == []
    assert "0 tokens (stopped at end-of-text)" in out.stderr
    assert np.load(logits).shape == (0, 50257)
    out = cli(
        [
            "--model",
            eos_checkpoint,
            "--prompt-ids",
            "1,2",
            "--tokens",
            "4",
            "--ignore-eos",
            "--logits",
            str(logits),
        ],
        tmp_path,
    )
    assert json.loads(out.stdout)["output_ids"] == [50256] * 4
    assert np.load(logits).shape == (4, 50257)
    # Streamed text: the prompt, and no "<|endoftext|>".
    text = subprocess.run(
        [
            tinymlir.gpt2.tool("tinymlir-gpt2"),
            "--model",
            eos_checkpoint,
            "--prompt",
            "Hello",
            "--tokens",
            "3",
            "--cache-dir",
            str(tmp_path / "kernels"),
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert text == "Hello\n"
