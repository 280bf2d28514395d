#!/usr/bin/env python3
"""Rounds across hosts against rounds on one host, and what a checkpoint every round costs.

Hosts are emulated with network namespaces (scripts/emulate_hosts.sh: UCX uses TCP between them and shared
memory within one). For the default `neg` model and the report's `softmax` model, on the King James Bible with
2 learners, it alternates runs on one host (every rank together) and on two (the Dispatcher and the pipeline on
one, the learners on the other) and compares their median round and weight exchange (sync_seconds). Then, on one
host, it alternates checkpoint_every 1 with checkpoints only at the end (checkpoint_every 0, checkpoint_seconds 0)
and reports the share of a round a checkpoint takes. Every run must exit by itself.

Usage: /usr/bin/python3 bench/multihost.py [--pairs 3] [--json]     (needs root; about 5 minutes)
"""

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import jobs  # noqa: E402

HOSTS = jobs.EMULATE_HOSTS
PREFIX = "fedavgb"
MODELS = {"neg": {"max_rounds": 30}, "softmax": {"model": "softmax", "bs": 256, "bpe": 50, "max_rounds": 20}}


def run(tmp, name, layout, corpus, **settings):
    """Median round seconds and sync seconds (rounds 3 on) of one run on `layout` (the ranks on each host)."""
    cfg = jobs.bible_config(tmp / name, target=0, max_seconds=300, progress_seconds=0, **settings)
    out = tmp / name / "out"
    cmd = jobs.emulated_mpiexec(PREFIX, layout) + [str(jobs.APP), "--config", str(cfg), "--out", str(out), str(corpus)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=400,
                          env={**os.environ, "MPIEXEC_TIMEOUT": "390"})
    if done.returncode != 0:
        raise RuntimeError(f"{name} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    with open(out / "kjv_metrics.csv") as f:
        rows = list(csv.DictReader(f))
    rounds = [float(b["seconds"]) - float(a["seconds"]) for a, b in zip(rows[3:], rows[4:])]
    return statistics.median(rounds), statistics.median(float(r["sync_seconds"]) for r in rows[4:])


def bytes_received(host):
    out = subprocess.run(["bash", str(HOSTS), "bytes", PREFIX], capture_output=True, text=True, check=True).stdout
    return {f[0]: int(f[2]) for f in (line.split() for line in out.splitlines())}[f"{PREFIX}-h{host}"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("multihost: not measured: emulating hosts needs root")
        return
    corpus = jobs.bible_corpus()
    figures = {"models": {}, "clean_exits": 0}
    subprocess.run(["bash", str(HOSTS), "up", "2", PREFIX], check=True, capture_output=True)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            for model, settings in MODELS.items():
                one, two, received = [], [], []
                for k in range(args.pairs):
                    one.append(run(tmp, f"{model}_one_{k}", [6], corpus, **settings))
                    before = bytes_received(1)
                    two.append(run(tmp, f"{model}_two_{k}", [4, 2], corpus, **settings))
                    received.append((bytes_received(1) - before) / settings["max_rounds"])
                    figures["clean_exits"] += 2
                figures["models"][model] = {
                    "round_one_host": statistics.median(r for r, _ in one),
                    "round_two_hosts": statistics.median(r for r, _ in two),
                    "sync_one_host": statistics.median(s for _, s in one),
                    "sync_two_hosts": statistics.median(s for _, s in two),
                    "mb_per_round": statistics.median(received) / 1e6,
                }
            every, never = [], []
            for k in range(args.pairs):
                every.append(run(tmp, f"ck1_{k}", [6], corpus, max_rounds=30, checkpoint_every=1)[0])
                never.append(run(tmp, f"ck0_{k}", [6], corpus, max_rounds=30, checkpoint_every=0,
                                 checkpoint_seconds=0)[0])
                figures["clean_exits"] += 2
            figures["checkpoint_round"] = statistics.median(every)
            figures["no_checkpoint_round"] = statistics.median(never)
    finally:
        subprocess.run(["bash", str(HOSTS), "down", PREFIX], capture_output=True)
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"### A round across two hosts against one (King James Bible, 2 learners, median of {args.pairs} runs "
          "each, alternated)\n")
    rows = []
    for model, f in figures["models"].items():
        rows.append([model, f"{f['round_one_host']:.3f} s", f"{f['round_two_hosts']:.3f} s",
                     f"{f['round_two_hosts'] / f['round_one_host']:.2f}x",
                     f"{1000 * f['sync_one_host']:.1f} ms", f"{1000 * f['sync_two_hosts']:.1f} ms",
                     f"{f['mb_per_round']:.1f} MB"])
    print(jobs.table(rows, ["model", "round, one host", "round, two hosts", "two / one", "exchange, one host",
                            "exchange, two hosts", "learners' host receives per round"]))
    share = figures["checkpoint_round"] / figures["no_checkpoint_round"] - 1
    print("\n### A checkpoint every round (neg, one host)\n")
    print(jobs.table([[f"{figures['checkpoint_round']:.3f} s", f"{figures['no_checkpoint_round']:.3f} s",
                       f"{100 * share:.1f} %"]],
                     ["round, checkpoint_every 1", "round, no checkpoints", "share of a round"]))
    print(f"\nevery run exited by itself: {figures['clean_exits']} of {figures['clean_exits']}")


if __name__ == "__main__":
    main()
