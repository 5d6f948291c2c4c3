#!/usr/bin/env python3
"""Checks that lib/ is layered as docs/architecture.md says: a file includes
only headers of its own layer or of lower ones, core and runtime include no
MLIR or LLVM header, and models include only the public API and models. The
Python package's modules are layered too: each imports (at any depth, local
imports included) only modules below it in PY_LAYERS, so there is no import
cycle.

  test/check_layers.py [SOURCE_DIR]

Layers, lowest first (public headers in include/tinymlir belong to a layer too).
"""

import os
import re
import sys

LAYERS = ["core", "runtime", "frontend", "builder", "passes", "targets", "jit", "models"]
NO_MLIR = {"core", "runtime"}
PUBLIC = {
    "array.h": "core",
    "options.h": "targets",
    "gpu.h": "runtime",
    "tensor.h": "frontend",
    "ops.def": "frontend",
    "kernels.h": "frontend",
    "index.h": "frontend",
    "numpy.h": "frontend",
    "jit.h": "jit",
    "tinymlir.h": "jit",
}
# python/tinymlir's modules, lowest first (the extension _tinymlir is below them all).
PY_LAYERS = ["_trace", "_creation", "_numpy", "_functions", "_jit", "_ops", "gpt2", "__init__"]
PY_IMPORT = re.compile(r"^\s*from \.(\w*) import ([\w, ]+)", re.M)
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def layer_of_header(path):
    """The layer of an included header, or None for system headers."""
    if path.startswith("tinymlir/"):
        return PUBLIC.get(path[len("tinymlir/") :])
    first = path.split("/")[0]
    return first if first in LAYERS else None


def python_problems(root):
    """Imports of a module of python/tinymlir from one at or below its layer."""
    problems, package = [], os.path.join(root, "python", "tinymlir")
    found = sorted(n[:-3] for n in os.listdir(package) if n.endswith(".py"))
    if found != sorted(PY_LAYERS):
        return [f"python/tinymlir has {found}; PY_LAYERS lists {sorted(PY_LAYERS)}"]
    for module in PY_LAYERS:
        with open(os.path.join(package, module + ".py"), encoding="utf-8") as f:
            text = f.read()
        for source, names in PY_IMPORT.findall(text):
            targets = [source] if source else [n.split(" as ")[0].strip() for n in names.split(",")]
            for target in targets:
                if target not in PY_LAYERS:
                    continue  # _tinymlir, _elementwise (generated from the op table)
                if PY_LAYERS.index(target) >= PY_LAYERS.index(module):
                    problems.append(
                        f"python/tinymlir/{module}.py imports {target}, at or above its layer"
                    )
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    problems, files = [], 0
    sources = []
    for layer in LAYERS:
        for dirpath, _, names in os.walk(os.path.join(root, "lib", layer)):
            sources += [
                (layer, os.path.join(dirpath, n)) for n in names if n.endswith((".cpp", ".h"))
            ]
    for name, layer in PUBLIC.items():
        sources.append((layer, os.path.join(root, "include", "tinymlir", name)))
    for layer, path in sources:
        files += 1
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for bracket, header in INCLUDE.findall(text):
            if layer in NO_MLIR and header.split("/")[0] in ("mlir", "llvm"):
                problems.append(f"{rel}: includes <{header}>, but the {layer} layer has no MLIR")
            target = layer_of_header(header)
            if (
                layer == "models"
                and target not in (None, "models")
                and not header.startswith("tinymlir/")
            ):
                problems.append(
                    f"{rel} (models) includes {header}: a model uses the public API "
                    f"(include/tinymlir) only, so the compiler builds and tests without it"
                )
            if target and LAYERS.index(target) > LAYERS.index(layer):
                problems.append(f"{rel} ({layer}) includes {header} ({target}, a higher layer)")
    problems += python_problems(root)
    for p in problems:
        print(p)
    if files < 40:
        problems.append(f"only {files} files found under {root}: wrong source directory?")
        print(problems[-1])
    print(f"{files} files, {len(problems)} layering problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
