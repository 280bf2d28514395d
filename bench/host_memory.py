#!/usr/bin/python3
"""The memory of learners that share a host: the weights and exchange buffers of 8 learners on one host, at
81k words x 300 (the text8 prefix with every word, as bench/vocab_exchange.py prepares it), with the learners sharing
one copy of the weights (share_host, the default) and with a copy each (share_host: false).

Each job trains a few short rounds. Every 0.2 s the script reads the proportional set size (PSS, which splits a
shared page among the processes that map it) of every learner from /proc/PID/smaps_rollup, and keeps the peak
of their sum. The same job at dim 8 is the baseline (interpreters, the model, batches): what a job at dim 300 holds
above it is its weights and exchange buffers, given in copies of the weights (2 x V x 300 floats).

Usage: /usr/bin/python3 bench/host_memory.py [--learners 8] [--dir DIR]     (about 5 minutes)
"""

import argparse
import json
import os
import shutil
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import jobs  # noqa: E402
import vocab_exchange  # noqa: E402


def learner_pss(first_learner, out):
    """PSS in bytes of every fedavg_mpi process of the job writing to `out` whose MPI rank is at least
    `first_learner`."""
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() != "fedavg_mpi":
                continue
            if out.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes():
                continue
            env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            rank = next((int(e.split(b"=", 1)[1]) for e in env if e.startswith(b"PMI_RANK=")), -1)
            if rank < first_learner:
                continue
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1]) * 1024
        except (OSError, ValueError):
            continue
    return total


def run(tmp, name, cfg_dir, train, learners, **settings):
    """Peak of the learners' summed PSS during one job."""
    d = tmp / name
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    cfg = json.loads((cfg_dir / "cfg.json").read_text())
    cfg.update({"target": 0.0, "bpe": 4, "max_rounds": 4, "progress_seconds": 0, "liveness_seconds": 120,
                "checkpoint_every": 1000, **settings})
    shutil.copytree(cfg_dir, d / "config")
    (d / "config" / "cfg.json").write_text(json.dumps(cfg, indent=2))
    peak = [0]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], learner_pss(4, str(d / "out")))
            time.sleep(0.2)

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    try:
        jobs.run(4 + learners, [train], d / "config", d / "out", timeout=900)
    finally:
        done.set()
        watcher.join()
    return peak[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--learners", type=int, default=8)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/fedavg_host_memory"))
    args = ap.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    cfg_dir, train = vocab_exchange.prepare(args.dir)
    words = sum(1 for _ in open(cfg_dir / "vocab.txt"))
    copy = 2 * words * 300 * 4
    print(f"### {words} words x 300, {args.learners} learners on one host: the learners' peak PSS, summed\n")
    rows = []
    for label, keys in (("shared (share_host, the default)", {}),
                        ("a copy each (share_host: false)", {"share_host": False})):
        base = run(args.dir, "base", cfg_dir, train, args.learners, dim=8, **keys)
        full = run(args.dir, "full", cfg_dir, train, args.learners, dim=300, **keys)
        rows.append([label, f"{full / 2**20:,.0f} MiB", f"{base / 2**20:,.0f} MiB",
                     f"{(full - base) / 2**20:,.0f} MiB", f"{(full - base) / copy:.1f}"])
        print(" | ".join(rows[-1]), flush=True)
    print()
    print(jobs.table(rows, ["learners' weights", "peak PSS at dim 300", "at dim 8", "above dim 8",
                            f"in copies of the weights ({copy / 1e6:.0f} MB)"]))


if __name__ == "__main__":
    main()
