#!/usr/bin/env bash
# Checks the style, changing nothing (CI and .pre-commit-config.yaml run it too):
# clang-format-22 on the C++ of lib/, include/, tools/, python/src/, and ruff's formatter
# and linter (pyproject.toml) on python/, bench/, scripts/, test/. Fails on any difference.
# Fix with clang-format-22 -i, ruff format, ruff check --fix. VENV: the venv with ruff.
set -euo pipefail
cd "$(dirname "$0")/.."
ruff=${VENV:-.venv}/bin/ruff
status=0
find lib include tools python/src -type f \( -name '*.cpp' -o -name '*.h' \) -print0 |
  xargs -0 clang-format-22 --dry-run -Werror || status=1
"$ruff" format --check python bench scripts test || status=1
"$ruff" check python bench scripts test || status=1
exit $status
