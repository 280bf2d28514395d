#!/usr/bin/env python3
"""The layer check of the build (src/meson.build runs it once per folder of src/).

    check_layers.py --src SRC --folder NAME --uses A,B --stamp OUT --depfile OUT.d

Fails, naming the file, the line and the rule, when a source or header of SRC/NAME includes a header of another
folder of SRC that is not in --uses (docs/architecture.md, "Layers"). Writes the stamp and a depfile listing every
file it read, so the build runs it again when one of them changes.
"""

import argparse
import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s*"([A-Za-z0-9_]+)/')


def violations(folder_dir, allowed, folders):
    """(path, line number, folder included) for each include of a folder of src/ outside `allowed`."""
    found = []
    for path in sorted(folder_dir.rglob("*")):
        if path.suffix not in (".cpp", ".hpp"):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = INCLUDE.match(line)
            if m and m.group(1) in folders and m.group(1) not in allowed:
                found.append((path, number, m.group(1)))
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True, type=Path)
    ap.add_argument("--folder", required=True)
    ap.add_argument("--uses", default="")
    ap.add_argument("--stamp", required=True, type=Path)
    ap.add_argument("--depfile", required=True, type=Path)
    args = ap.parse_args()

    folders = {p.name for p in args.src.iterdir() if p.is_dir()}
    uses = [u for u in args.uses.split(",") if u]
    allowed = {args.folder, *uses}
    folder_dir = args.src / args.folder
    bad = violations(folder_dir, allowed, folders)
    for path, number, other in bad:
        may = f"it uses only {', '.join(f'{u}/' for u in uses)}" if uses else "it uses no other folder"
        print(f"{path}:{number}: error: {args.folder}/ may not include {other}/: {may} "
              f"(the layers of docs/architecture.md, set in src/{args.folder}/meson.build)", file=sys.stderr)
    if bad:
        return 1
    read = sorted(p for p in folder_dir.rglob("*") if p.suffix in (".cpp", ".hpp"))
    args.stamp.write_text("")
    deps = " ".join(str(p).replace(" ", "\\ ") for p in read)
    args.depfile.write_text(f"{args.stamp}: {deps}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
