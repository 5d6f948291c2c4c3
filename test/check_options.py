"""Options from one table: docs/options.md lists every row of
include/tinymlir/options.def and of include/tinymlir/environment.def, and the
environment is read only by lib/core/Environment.cpp, of those rows alone.

    python3 check_options.py SOURCE_DIR [TINYMLIR_GPT2]

With the CLI's path, also checks that its --help has a flag for every row.
"""

import re
import subprocess
import sys
from pathlib import Path

# The one reader of the environment (environment.h): every variable read is a
# row of options.def or environment.def. Scripts that run without the package
# (scripts/*.py) read os.environ themselves, but only variables of environment.def.
READER = "lib/core/Environment.cpp"
VARIABLE_ROW = re.compile(r'TINYMLIR_VARIABLE\(\s*"(\w+)"')
NAMED_READ = re.compile(r'(?:environment|environmentEnabled|variable|enabled)\("([A-Z][A-Z0-9_]+)"')
PY_READ = re.compile(r'os\.environ(?:\.get)?[\[(]\s*"(\w+)"')
READS = re.compile(r"getenv\(|os\.environ|os\.getenv")
ROW = re.compile(r'TINYMLIR_OPTION\(\s*([\w:]+),\s*(\w+),\s*"(\w+)",\s*"(\w*)"')
VARIABLE = re.compile(r'"([A-Z][A-Z0-9_]+)"')


def main(root: Path, cli: str | None) -> int:
    doc = (root / "docs/options.md").read_text()
    table = "\n".join(line for line in doc.splitlines() if line.startswith("|"))
    problems = []
    rows = ROW.findall((root / "include/tinymlir/options.def").read_text())
    if len(rows) < 10:
        problems.append(f"options.def: found only {len(rows)} rows; is the pattern stale?")
    variables = VARIABLE_ROW.findall((root / "include/tinymlir/environment.def").read_text())
    listed = set(variables) | {v for *_, v in rows if v}
    for variable in variables:
        if f"`{variable}" not in doc:
            problems.append(f"docs/options.md does not list {variable} (environment.def)")
    for _type, field, name, variable in rows:
        if f"`{name}`" not in table:
            problems.append(f"docs/options.md: the table has no row for option {name} ({field})")
        if variable and f"`{variable}" not in table:
            problems.append(f"docs/options.md: the table does not name {variable} ({name})")
    for path in (
        sorted(root.glob("lib/**/*.cpp"))
        + sorted(root.glob("lib/**/*.h"))
        + sorted(root.glob("tools/**/*.cpp"))
        + sorted(root.glob("python/src/*.cpp"))
        + sorted(root.glob("python/tinymlir/*.py"))
        + sorted(root.glob("scripts/*.py"))
    ):
        rel = path.relative_to(root).as_posix()
        text = path.read_text()
        for variable in NAMED_READ.findall(text) + PY_READ.findall(text):
            if variable not in listed:
                problems.append(
                    f"{rel} reads {variable}, a row of neither options.def nor environment.def"
                )
        if rel == READER or (
            rel.startswith("scripts/") and not READS.search(PY_READ.sub("", text))
        ):
            continue
        if READS.search(text):
            line = text[: READS.search(text).start()].count("\n") + 1
            problems.append(f"{rel}:{line}: reads the environment outside {READER}")
    if cli:
        usage = subprocess.run([cli, "--help"], capture_output=True, text=True, check=True).stdout
        for _type, _field, name, _variable in rows:
            flag = "--" + name.replace("_", "-")
            if not re.search(re.escape(flag) + r"\b", usage):
                problems.append(f"{cli} --help has no flag {flag} for option {name}")
    for problem in problems:
        print(problem)
    print(f"{len(rows)} options; {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None))
