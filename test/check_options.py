"""Options from one table: docs/options.md lists every row of
include/tinymlir/options.def, and the environment is read only in the
settings modules, each of whose variables the document lists too.

    python3 check_options.py SOURCE_DIR [TINYMLIR_GPT2]

With the CLI's path, also checks that its --help has a flag for every row.
"""

import re
import subprocess
import sys
from pathlib import Path

# The one module per layer that reads the environment.
SETTINGS = {
    "lib/targets/Options.cpp",  # JitOptions: the variables of options.def (and CUDA's)
    "lib/runtime/Settings.cpp",
    "lib/models/gpt2/Settings.cpp",
    "python/tinymlir/gpt2.py",  # the tokenizer files of the installed package
}
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
    ):
        rel = path.relative_to(root).as_posix()
        text = path.read_text()
        if rel in SETTINGS:
            for variable in VARIABLE.findall(text):
                if variable.startswith(("TINYMLIR_", "KMP_", "XDG_", "CUDA_", "HOME")) and (
                    f"`{variable}" not in doc
                ):
                    problems.append(f"docs/options.md does not list {variable}, read in {rel}")
        elif READS.search(text):
            line = text[: READS.search(text).start()].count("\n") + 1
            problems.append(f"{rel}:{line}: reads the environment outside a settings module")
    if cli:
        usage = subprocess.run([cli, "--help"], capture_output=True, text=True, check=True).stdout
        for _type, field, name, variable in rows:
            flag = "--" + name.replace("_", "-")
            if not re.search(re.escape(flag) + r"\b", usage):
                problems.append(f"{cli} --help has no flag {flag} for option {name}")
    for problem in problems:
        print(problem)
    print(f"{len(rows)} options; {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None))
