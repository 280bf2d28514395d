#!/usr/bin/env python3
"""The layer check of the build (src/meson.build runs it once per layer of src/).

    check_layers.py --src SRC --folder NAME --uses A,B --layers L1,L2,... --stamp OUT --depfile OUT.d

A layer is a folder of SRC, or a sub-folder that is a layer of its own (training/exchange); --layers lists them
all. A file belongs to the deepest layer that holds it, and an include to the deepest layer its path names. Fails,
naming the file, the line and the rule, when a source or header of layer NAME includes a header of another layer
(or another folder of SRC) that is not in --uses (docs/architecture.md, "Layers"). Writes the stamp and a depfile
listing every file it read, so the build runs it again when one of them changes.
"""

import argparse
import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s*"([A-Za-z0-9_/]+)/[^/"]+"')


def layer_of(folder, layers):
    """The deepest of `layers` that holds `folder` (a path relative to src/, '/'-separated), else its first part."""
    held = [lay for lay in layers if folder == lay or folder.startswith(lay + "/")]
    return max(held, key=len) if held else folder.split("/")[0]


def files_of(src, name, layers):
    """The sources and headers of layer `name`: under SRC/name, but not in a deeper layer."""
    found = []
    for path in sorted((src / name).rglob("*")):
        if path.suffix in (".cpp", ".hpp") and layer_of(path.parent.relative_to(src).as_posix(), layers) == name:
            found.append(path)
    return found


def violations(files, allowed, layers, folders):
    """(path, line number, layer included) for each include of a layer or folder of src/ outside `allowed`."""
    found = []
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m or m.group(1).split("/")[0] not in folders:
                continue
            other = layer_of(m.group(1), layers)
            if other not in allowed:
                found.append((path, number, other))
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True, type=Path)
    ap.add_argument("--folder", required=True)
    ap.add_argument("--uses", default="")
    ap.add_argument("--layers", default="")
    ap.add_argument("--stamp", required=True, type=Path)
    ap.add_argument("--depfile", required=True, type=Path)
    args = ap.parse_args()

    folders = {p.name for p in args.src.iterdir() if p.is_dir()}
    layers = [lay for lay in args.layers.split(",") if lay] or sorted(folders)
    uses = [u for u in args.uses.split(",") if u]
    allowed = {args.folder, *uses}
    files = files_of(args.src, args.folder, layers)
    bad = violations(files, allowed, layers, folders)
    for path, number, other in bad:
        may = f"it uses only {', '.join(f'{u}/' for u in uses)}" if uses else "it uses no other folder"
        print(f"{path}:{number}: error: {args.folder}/ may not include {other}/: {may} "
              f"(the layers of docs/architecture.md, set in src/{args.folder}/meson.build)", file=sys.stderr)
    if bad:
        return 1
    args.stamp.write_text("")
    deps = " ".join(str(p).replace(" ", "\\ ") for p in files)
    args.depfile.write_text(f"{args.stamp}: {deps}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
