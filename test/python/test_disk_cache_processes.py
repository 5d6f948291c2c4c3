#!/usr/bin/env python3
"""A second tinymlir-gpt2 process with a warm disk cache compiles nothing, and a
corrupted cache is recovered from (same tokens, entries rebuilt).

  test_disk_cache_processes.py BINARY MAKER
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

binary, maker = sys.argv[1], sys.argv[2]
work = tempfile.mkdtemp(prefix="tinymlir-cache-processes-")
model, cache = os.path.join(work, "model"), os.path.join(work, "cache")
subprocess.run(
    [
        maker,
        "--out",
        model,
        "--layers",
        "2",
        "--heads",
        "2",
        "--embd",
        "32",
        "--vocab",
        "300",
        "--positions",
        "64",
        "--seed",
        "9",
    ],
    check=True,
    capture_output=True,
)
passed = failed = 0


def generate():
    r = subprocess.run(
        [
            binary,
            "--model",
            model,
            "--prompt-ids",
            "1,2,3",
            "--tokens",
            "6",
            "--json",
            "--cache-dir",
            cache,
        ],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        sys.exit(f"tinymlir-gpt2 failed:\n{r.stderr}")
    m = re.search(r"(\d+) specializations compiled, (\d+) loaded from the disk cache", r.stderr)
    return json.loads(r.stdout)["output_ids"], int(m.group(1)), int(m.group(2))


def check(condition, what):
    global passed, failed
    print(("ok   " if condition else "FAIL ") + what)
    if condition:
        passed += 1
    else:
        failed += 1


tokens, compiled, loaded = generate()
check(compiled > 0 and loaded == 0, f"cold cache: {compiled} compiled, {loaded} loaded")
entries = sorted(os.listdir(cache))
tokens2, compiled2, loaded2 = generate()
check(compiled2 == 0 and loaded2 == compiled, f"warm cache: {compiled2} compiled, {loaded2} loaded")
check(tokens2 == tokens, "same tokens from cached code")

for i, name in enumerate(entries):  # damage every entry in a different way
    path = os.path.join(cache, name)
    data = bytearray(open(path, "rb").read())
    if i % 3 == 0:
        data[len(data) // 2] ^= 0xFF
    elif i % 3 == 1:
        data = data[: len(data) // 2]
    else:
        data = b"garbage"
    open(path, "wb").write(data)
tokens3, compiled3, loaded3 = generate()
check(
    compiled3 == compiled and loaded3 == 0,
    f"corrupt cache: {compiled3} recompiled, {loaded3} loaded",
)
check(tokens3 == tokens, "same tokens after recovering")
tokens4, compiled4, loaded4 = generate()
check(compiled4 == 0 and loaded4 == compiled, "entries rebuilt: the next process loads them all")

shutil.rmtree(work, ignore_errors=True)
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
