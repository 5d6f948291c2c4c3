#!/usr/bin/python3
"""Tiny, dependency-free (NumPy only) safetensors reader/writer.

Format (https://github.com/huggingface/safetensors):
  * 8 bytes: little-endian u64 N = length of the JSON header
  * N bytes: UTF-8 JSON object {name: {"dtype": str, "shape": [..],
             "data_offsets": [begin, end]}, optional "__metadata__": {str: str}}
             (offsets are relative to the start of the data section)
  * rest:    the data section, tensors stored little-endian, row-major.

Also provides make_random_checkpoint(), which writes a random GPT-2 model
(model.safetensors + config.json) in the Hugging Face GPT-2 layout.
"""

import os

os.environ.setdefault("NPY_PROMOTION_STATE", "weak")

import json
import struct

import numpy as np

# safetensors dtype name -> little-endian NumPy dtype.
_DTYPES = {
    "F64": np.dtype("<f8"),
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "I64": np.dtype("<i8"),
    "I32": np.dtype("<i4"),
    "I16": np.dtype("<i2"),
    "I8": np.dtype("i1"),
    "U64": np.dtype("<u8"),
    "U32": np.dtype("<u4"),
    "U16": np.dtype("<u2"),
    "U8": np.dtype("u1"),
    "BOOL": np.dtype("?"),
}
_NAMES = {v: k for k, v in _DTYPES.items()}


def _bf16_to_f32(raw_u16):
    return (raw_u16.astype(np.uint32) << np.uint32(16)).view(np.float32)


def load(path, with_metadata=False):
    """Read a .safetensors file into {name: np.ndarray}.

    BF16 tensors are widened to float32 (NumPy has no bfloat16).  With
    with_metadata=True, returns (tensors, metadata_dict_or_None)."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise ValueError(f"{path}: file too short for a safetensors header")
    (n,) = struct.unpack("<Q", blob[:8])
    if 8 + n > len(blob):
        raise ValueError(f"{path}: header length {n} exceeds file size")
    header = json.loads(blob[8 : 8 + n].decode("utf-8"))
    data = memoryview(blob)[8 + n :]
    metadata = header.pop("__metadata__", None)
    out = {}
    for name, info in header.items():
        dt, shape = info["dtype"], [int(d) for d in info["shape"]]
        begin, end = (int(o) for o in info["data_offsets"])
        if not (0 <= begin <= end <= len(data)):
            raise ValueError(f"{path}: tensor {name!r} offsets out of range")
        count = int(np.prod(shape, dtype=np.int64))
        if dt == "BF16":
            if end - begin != 2 * count:
                raise ValueError(f"{path}: tensor {name!r} size mismatch")
            raw = np.frombuffer(data[begin:end], dtype="<u2")
            arr = _bf16_to_f32(raw).reshape(shape)
        else:
            if dt not in _DTYPES:
                raise ValueError(f"{path}: unsupported dtype {dt!r} for {name!r}")
            npdt = _DTYPES[dt]
            if end - begin != npdt.itemsize * count:
                raise ValueError(f"{path}: tensor {name!r} size mismatch")
            arr = np.frombuffer(data[begin:end], dtype=npdt).reshape(shape)
            arr = arr.astype(npdt.newbyteorder("="), copy=True)
        out[name] = arr
    return (out, metadata) if with_metadata else out


def save(path, tensors, metadata=None):
    """Write {name: array} as a .safetensors file (tensors in sorted name
    order, header padded with spaces to a multiple of 8 bytes)."""
    header = {}
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    chunks, offset = [], 0
    for name in sorted(tensors):
        arr = np.asarray(tensors[name])
        le = arr.dtype.newbyteorder("<") if arr.dtype.itemsize > 1 else arr.dtype
        if le not in _NAMES:
            raise ValueError(f"unsupported dtype {arr.dtype} for {name!r}")
        buf = np.ascontiguousarray(arr, dtype=le).tobytes()
        header[name] = {
            "dtype": _NAMES[le],
            "shape": list(arr.shape),
            "data_offsets": [offset, offset + len(buf)],
        }
        chunks.append(buf)
        offset += len(buf)
    hbytes = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hbytes += b" " * ((-len(hbytes)) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hbytes)))
        f.write(hbytes)
        for c in chunks:
            f.write(c)


def make_random_checkpoint(
    dir,
    n_layer,
    n_head,
    n_embd,
    vocab,
    positions,
    seed=0,
    prefix="",
    include_mask_buffers=False,
    std=0.02,
):
    """Write dir/model.safetensors + dir/config.json: a random GPT-2 with
    Hugging Face tensor names (Conv1D weights stored (in, out)).

    prefix: e.g. "transformer." to mimic GPT2LMHeadModel exports.
    include_mask_buffers: also write h.{i}.attn.bias / masked_bias buffers
    (readers must ignore them).  Returns the path of model.safetensors."""
    assert n_embd % n_head == 0, "n_embd must be divisible by n_head"
    os.makedirs(dir, exist_ok=True)
    rng = np.random.default_rng(seed)
    C = n_embd

    def normal(*shape, scale=std):
        return (rng.standard_normal(shape, dtype=np.float32) * np.float32(scale)).astype(np.float32)

    t = {}
    t["wte.weight"] = normal(vocab, C)
    t["wpe.weight"] = normal(positions, C, scale=0.01)
    for i in range(n_layer):
        h = f"h.{i}."
        t[h + "ln_1.weight"] = 1 + normal(C, scale=0.1)
        t[h + "ln_1.bias"] = normal(C, scale=0.1)
        t[h + "attn.c_attn.weight"] = normal(C, 3 * C)
        t[h + "attn.c_attn.bias"] = normal(3 * C)
        t[h + "attn.c_proj.weight"] = normal(C, C)
        t[h + "attn.c_proj.bias"] = normal(C)
        t[h + "ln_2.weight"] = 1 + normal(C, scale=0.1)
        t[h + "ln_2.bias"] = normal(C, scale=0.1)
        t[h + "mlp.c_fc.weight"] = normal(C, 4 * C)
        t[h + "mlp.c_fc.bias"] = normal(4 * C)
        t[h + "mlp.c_proj.weight"] = normal(4 * C, C)
        t[h + "mlp.c_proj.bias"] = normal(C)
        if include_mask_buffers:
            t[h + "attn.bias"] = np.tril(np.ones((positions, positions), np.float32))[None, None]
            t[h + "attn.masked_bias"] = np.array(-1e4, np.float32)
    t["ln_f.weight"] = 1 + normal(C, scale=0.1)
    t["ln_f.bias"] = normal(C, scale=0.1)
    t = {prefix + k: v for k, v in t.items()}

    path = os.path.join(dir, "model.safetensors")
    save(path, t, metadata={"format": "pt"})
    config = {
        "architectures": ["GPT2LMHeadModel"],
        "model_type": "gpt2",
        "activation_function": "gelu_new",
        "layer_norm_epsilon": 1e-05,
        "n_layer": n_layer,
        "n_head": n_head,
        "n_embd": n_embd,
        "n_positions": positions,
        "n_ctx": positions,
        "vocab_size": vocab,
        "bos_token_id": vocab - 1,
        "eos_token_id": vocab - 1,
    }
    with open(os.path.join(dir, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    return path


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(
        description="make a random GPT-2 checkpoint (model.safetensors + config.json)"
    )
    ap.add_argument("dir")
    ap.add_argument("--n-layer", type=int, default=2)
    ap.add_argument("--n-head", type=int, default=2)
    ap.add_argument("--n-embd", type=int, default=16)
    ap.add_argument("--vocab", type=int, default=50)
    ap.add_argument("--positions", type=int, default=32)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--prefix", default="")
    ap.add_argument("--mask-buffers", action="store_true")
    a = ap.parse_args()
    p = make_random_checkpoint(
        a.dir, a.n_layer, a.n_head, a.n_embd, a.vocab, a.positions, a.seed, a.prefix, a.mask_buffers
    )
    print(p)
