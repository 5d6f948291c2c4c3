"""Writes tinymlir/_elementwise.py at build time: one frontend function per
elementwise row of ops.def (tinymlir.exp, tinymlir.add, ...), read from the
built module's table, so that the package exports them by name.

    python generate_elementwise.py <directory holding tinymlir/_tinymlir*.so> <output>
"""

import sys

sys.path.insert(0, sys.argv[1])
from tinymlir import _tinymlir  # noqa: E402 -- the build tree's module

lines = [
    '"""The elementwise functions of ops.def, with NumPy broadcasting and promotion',
    '(generated at build time by python/generate_elementwise.py from the op table)."""',
    "",
    "from ._ops import _elementwise",
    "",
]
names = []
for name, arity in _tinymlir.ELEMENTWISE:
    lines.append(f"{name} = _elementwise({name!r}, {arity})")
    names.append(name)
lines += ["", "__all__ = [", *(f"    {n!r}," for n in names), "]", ""]
text = "\n".join(lines)
try:
    with open(sys.argv[2]) as f:
        if f.read() == text:
            sys.exit(0)
except OSError:
    pass
with open(sys.argv[2], "w") as f:
    f.write(text)
