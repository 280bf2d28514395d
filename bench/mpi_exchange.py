#!/usr/bin/env python3
"""Why the round's exchange is point to point: times moving one model's weights between 2 and 3 local MPI
ranks with MPI_Reduce, MPI_Ireduce, MPI_Iallreduce and MPI_Ibcast against what the program does: Isend to rank 0
plus an add there (the averaging), and Isend down the learner tree (the broadcast), each polled the program's way
(MPI_Test or MPI_Iprobe with sleeps of 20 us, growing to 1 ms after 5 ms; a probed message is received at once).
Two sizes by default: 320 000 float32 (1.3 MB, the King James study's model) and 48 589 200 (194 MB, the text8
prefix's 80 982 words x 300 of bench/vocab_exchange.py; 5 repetitions). Compiles bench/mpi_exchange.cpp with
mpicxx into a temporary folder.

Usage: /usr/bin/python3 bench/mpi_exchange.py [--floats 320000 48589200] [--reps 30] [--json]
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
    ap.add_argument("--floats", type=int, nargs="+", default=[320000, 48589200])
    ap.add_argument("--reps", type=int, default=30, help="repetitions (at most 5 above 10 M floats)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "mpi_exchange"
        subprocess.run(["mpicxx", "-O2", "-std=c++17", str(HERE / "mpi_exchange.cpp"), "-o", str(exe)], check=True)
        for floats in args.floats:
            reps = args.reps if floats <= 10_000_000 else min(args.reps, 5)
            for ranks in (2, 3):
                out = subprocess.run([jobs.MPIEXEC, "-n", str(ranks), str(exe), str(floats), str(reps)],
                                     check=True, capture_output=True, text=True, timeout=300,
                                     env={**os.environ, "MPIEXEC_TIMEOUT": "280"}).stdout
                for line in out.strip().splitlines():
                    name, n, ms = line.split("\t")
                    results.setdefault(floats, {"reps": reps, "ms": {}})["ms"].setdefault(name, {})[int(n)] = float(ms)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for floats, res in results.items():
        print(f"## Moving {floats * 4 / 1e6:.2f} MB of weights between local ranks (median of {res['reps']})\n")
        rows = [[name, *(f"{by_n[r]:.2f} ms" for r in (2, 3))] for name, by_n in res["ms"].items()]
        print(jobs.table(rows, ["operation", "2 ranks", "3 ranks"]))
        print()


if __name__ == "__main__":
    main()
