#!/usr/bin/env python3
"""Lints the Python files with flake8, using ruff's settings from pyproject.toml.

The Python rules (CONTRIBUTING.md) are pyproject.toml's [tool.ruff]. Debian 12 packages no ruff, so this runs Debian's
flake8 (pycodestyle + pyflakes) instead, with the settings read from that one table and passed on flake8's
command line (--isolated: no flake8 config file is read). A setting this script cannot translate, or a rule code
that flake8 has no checker for, stops it with an error rather than being skipped quietly.

flake8 checks a little more than ruff would with the same selection: pycodestyle's indentation and blank-line
rules (E1, E2, E3), which ruff runs only in preview. It skips W503 and W504 (a line break before, and after, a
binary operator): they contradict each other, and ruff has neither.

    /usr/bin/python3 scripts/lint.py [PATH...]     (default: the *.py files git tracks or would)
"""

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The rule families both tools check under the same codes: pycodestyle (E, W) and pyflakes (F).
SHARED_FAMILIES = ("E", "W", "F")
# pycodestyle's mutually exclusive pair; ruff implements neither.
FLAKE8_ONLY_IGNORE = ["W503", "W504"]
KNOWN = {"tool.ruff": {"line-length", "target-version", "lint"},
         "tool.ruff.lint": {"select", "ignore", "per-file-ignores"}}


def fail(message):
    print(f"lint: {message}", file=sys.stderr)
    sys.exit(2)


def codes(table, key):
    values = table.get(key, [])
    for code in values:
        if not code.startswith(SHARED_FAMILIES):
            fail(f"pyproject.toml [tool.ruff.lint] {key}: {code!r} is not a pycodestyle/pyflakes code (E, W, F), "
                 "which flake8 cannot check")
    return values


def flake8_args(pyproject):
    ruff = tomllib.loads(pyproject.read_text()).get("tool", {}).get("ruff")
    if ruff is None:
        fail(f"{pyproject} has no [tool.ruff] table")
    lint = ruff.get("lint", {})
    for name, table in (("tool.ruff", ruff), ("tool.ruff.lint", lint)):
        unknown = sorted(set(table) - KNOWN[name])
        if unknown:
            fail(f"pyproject.toml [{name}]: scripts/lint.py does not pass {', '.join(unknown)} on to flake8")
    args = ["--isolated", f"--max-line-length={ruff.get('line-length', 88)}",
            f"--select={','.join(codes(lint, 'select') or ['E4', 'E7', 'E9', 'F'])}",  # ruff's default selection
            f"--extend-ignore={','.join(codes(lint, 'ignore') + FLAKE8_ONLY_IGNORE)}"]
    per_file = lint.get("per-file-ignores", {})
    if per_file:
        for pattern in per_file:
            codes(per_file, pattern)
        args.append("--per-file-ignores=" + " ".join(f"{p}:{','.join(c)}" for p, c in per_file.items()))
    return args


def main(paths):
    args = flake8_args(ROOT / "pyproject.toml")
    if not paths:
        listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py"],
                                cwd=ROOT, capture_output=True, text=True)
        if listed.returncode != 0:
            fail("not a git checkout: name the files to lint")
        paths = listed.stdout.split()
    command = [sys.executable, "-m", "flake8", *args, *paths]
    print("lint: flake8 " + " ".join(args) + f" ({len(paths)} files)", flush=True)
    return subprocess.run(command, cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
