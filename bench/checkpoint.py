#!/usr/bin/env python3
"""The checkpoint's size and its write and read times at a large vocabulary (the text8 prefix's 80 982 words x
300: two tables, 194 MB of weights, and the vocabulary), through the program's own core::write_checkpoint and
core::read_checkpoint. Compiles bench/checkpoint_write.cpp against a build's core library (--src and --build name
another checkout's, e.g. an older commit's in a git worktree, to compare in the same run) and writes to --dir
(default: a temporary folder under /tmp). Prints the median of --reps writes and reads.

Usage: /usr/bin/python3 bench/checkpoint.py [--words 80982] [--dim 300] [--reps 7] [--src SRC --build BUILD ...]
       [--dir DIR] [--json]
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import jobs  # noqa: E402


def compile_against(src, build, exe):
    """Builds checkpoint_write against the core library of `build` (a per-folder build, or the older single
    library) and the headers of `src`."""
    lib = next((p for p in (build / "src" / "libfedavg_core.a", build / "src" / "libfedavg.a") if p.exists()), None)
    if lib is None:
        sys.exit(f"checkpoint: no core library under {build}/src: build it first")
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "hdf5"], capture_output=True, text=True,
                           check=True).stdout.split()
    subprocess.run(["g++", "-O2", "-std=c++17", f"-I{src}", f"-I{build / 'src'}", str(HERE / "checkpoint_write.cpp"),
                    str(lib), *flags, "-lxxhash", "-pthread", "-o", str(exe)], check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--words", type=int, default=80982)
    ap.add_argument("--dim", type=int, default=300)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--src", type=Path, nargs="+", default=[jobs.ROOT / "src"])
    ap.add_argument("--build", type=Path, nargs="+", default=[jobs.BUILD])
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if len(args.src) != len(args.build):
        sys.exit("checkpoint: give as many --src as --build")
    results = {}
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        exes = []
        for k, (src, build) in enumerate(zip(args.src, args.build)):
            exe = Path(tmp) / f"checkpoint_write_{k}"
            compile_against(src.resolve(), build.resolve(), exe)
            resolved = build.resolve()
            name = str(resolved.relative_to(jobs.ROOT)) if resolved.is_relative_to(jobs.ROOT) else str(build)
            exes.append((name, exe))
        # Interleaved, so that a change in the machine's load hits every build alike.
        samples = {name: {"write": [], "read": []} for name, _ in exes}
        for _ in range(args.reps):
            for name, exe in exes:
                folder = Path(tmp) / f"{exe.name}.out"
                folder.mkdir(exist_ok=True)
                out = subprocess.run([str(exe), str(folder), str(args.words), str(args.dim), "1"], check=True,
                                     capture_output=True, text=True, timeout=600).stdout.split()
                samples[name]["bytes"] = int(out[1])
                samples[name]["write"].append(float(out[3]))
                samples[name]["read"].append(float(out[5]))
        for name, s in samples.items():
            results[name] = {"bytes": s["bytes"], "write_s": statistics.median(s["write"]),
                             "read_s": statistics.median(s["read"])}
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"\n### A checkpoint of {args.words} words x {args.dim} (two tables), median of {args.reps}\n")
    rows = [[name, f"{r['bytes'] / 1e6:.1f} MB", f"{r['write_s']:.3f} s", f"{r['read_s']:.3f} s"]
            for name, r in results.items()]
    print(jobs.table(rows, ["build", "file", "write", "read"]))


if __name__ == "__main__":
    main()
