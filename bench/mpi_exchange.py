#!/usr/bin/env python3
"""Why the round's averaging is point to point: times moving one model's weights (default 320 000 float32,
1.3 MB: the King James study's model) between 2 and 3 local MPI ranks with MPI_Reduce, MPI_Ireduce,
MPI_Iallreduce, MPI_Ibcast, and Isend to rank 0 plus an add there (what the program does), each polled the
program's way (MPI_Test, 20 us sleeps). Compiles bench/mpi_exchange.cpp with mpicxx into a temporary folder.

Usage: /usr/bin/python3 bench/mpi_exchange.py [--floats 320000] [--reps 30] [--json]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import jobs  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--floats", type=int, default=320000)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "mpi_exchange"
        subprocess.run(["mpicxx", "-O2", "-std=c++17", str(HERE / "mpi_exchange.cpp"), "-o", str(exe)], check=True)
        for ranks in (2, 3):
            out = subprocess.run(["mpiexec", "-n", str(ranks), str(exe), str(args.floats), str(args.reps)],
                                 check=True, capture_output=True, text=True, timeout=300,
                                 env={**os.environ, "MPIEXEC_TIMEOUT": "280"}).stdout
            for line in out.strip().splitlines():
                name, n, ms = line.split("\t")
                results.setdefault(name, {})[int(n)] = float(ms)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    p2p = results["Isend to rank 0 + add"]
    print(f"## Moving {args.floats * 4 / 1e6:.2f} MB of weights between local ranks (median of {args.reps})\n")
    rows = [[name, *(f"{by_n[r]:.2f} ms ({by_n[r] / p2p[r]:.1f}x)" for r in (2, 3))] for name, by_n in results.items()]
    print(jobs.table(rows, ["operation", "2 ranks (vs point to point)", "3 ranks (vs point to point)"]))


if __name__ == "__main__":
    main()
