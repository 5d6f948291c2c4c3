#!/usr/bin/env python3
"""Checks that lib/ is layered as docs/architecture.md says: a file includes
only headers of its own layer or of lower ones, core and runtime include no
MLIR or LLVM header, and models include only the public API and models. The
model is above the compiler: nothing but lib/models, the GPT-2 tools
(GPT2_TOOLS) and GPT-2's Python extension (python/src/gpt2) includes a model
header, so the compiler, its tools and its Python extension build without the
models. The Python package's modules are layered too: each imports (at any
depth, local imports included) only modules below it in PY_LAYERS, so there is
no import cycle, and only gpt2 imports GPT-2's extension (_gpt2).

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
    "index.h": "frontend",
    "numpy.h": "frontend",
    "jit.h": "jit",
    "tinymlir.h": "jit",
}
# python/tinymlir's modules, lowest first (the extensions _tinymlir and _gpt2 are below
# them all; only gpt2 imports _gpt2).
PY_LAYERS = [
    "_trace",
    "_creation",
    "_numpy",
    "_functions",
    "_loops",
    "_jit",
    "_ops",
    "gpt2",
    "__init__",
]
PY_IMPORT = re.compile(r"^\s*from \.(\w*) import ([\w, ]+)", re.M)
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
# The sources of tools/ that are GPT-2's (tools/gpt2 is too): they may include model headers.
GPT2_TOOLS = {"tinymlir-gpt2.cpp", "tinymlir-make-gpt2.cpp"}
# GPT-2's Python extension, tinymlir._gpt2 (the rest of python/src is the compiler's).
GPT2_EXTENSION = os.path.join("python", "src", "gpt2")
# Imports of GPT-2's extension written otherwise than `from . import _gpt2`.
GPT2_EXTENSION_IMPORT = re.compile(
    r"tinymlir\._gpt2\b|^\s*from\s+tinymlir\s+import\s+[^\n]*\b_gpt2\b|import_module\([^)]*_gpt2",
    re.M,
)


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
                if target == "_gpt2" and module != "gpt2":
                    problems.append(
                        f"python/tinymlir/{module}.py imports _gpt2: only gpt2 imports GPT-2's "
                        "extension, so the compiler's package imports without it"
                    )
                if target not in PY_LAYERS:
                    continue  # _tinymlir, _elementwise (generated from the op table)
                if PY_LAYERS.index(target) >= PY_LAYERS.index(module):
                    problems.append(
                        f"python/tinymlir/{module}.py imports {target}, at or above its layer"
                    )
        if module != "gpt2" and GPT2_EXTENSION_IMPORT.search(text):
            problems.append(
                f"python/tinymlir/{module}.py imports tinymlir._gpt2: only gpt2 imports "
                "GPT-2's extension"
            )
    return problems


def is_model_header(header):
    """A header of the models (lib/models) or of the GPT-2 tools (tools/gpt2)."""
    return header.split("/")[0] in ("models", "gpt2")


def compiler_problems(root):
    """Model headers included by the compiler's tools (tools/ but GPT-2's) or by its
    Python extension (python/src but python/src/gpt2)."""
    problems, files = [], 0
    sources = []
    for folder in ("tools", os.path.join("python", "src")):
        for dirpath, _, names in os.walk(os.path.join(root, folder)):
            rel_dir = os.path.relpath(dirpath, root)
            if rel_dir == os.path.join("tools", "gpt2") or rel_dir.startswith(
                os.path.join("tools", "gpt2") + os.sep
            ):
                continue
            if rel_dir == GPT2_EXTENSION or rel_dir.startswith(GPT2_EXTENSION + os.sep):
                continue
            sources += [
                os.path.join(dirpath, n)
                for n in names
                if n.endswith((".cpp", ".h")) and not (folder == "tools" and n in GPT2_TOOLS)
            ]
    for path in sources:
        files += 1
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for _, header in INCLUDE.findall(text):
            if is_model_header(header):
                problems.append(
                    f"{rel} includes {header}: the compiler's tools and Python extension build "
                    "without the models (GPT-2's own: tools/gpt2, GPT2_TOOLS, python/src/gpt2)"
                )
    return problems, files


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
        for _, header in INCLUDE.findall(text):
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
    more, compiler_files = compiler_problems(root)
    problems += more
    files += compiler_files
    for p in problems:
        print(p)
    if files < 40:
        problems.append(f"only {files} files found under {root}: wrong source directory?")
        print(problems[-1])
    print(f"{files} files, {len(problems)} layering problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
