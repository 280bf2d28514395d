#!/usr/bin/env python3
"""Soak test: many short rounds (default 2000, checkpoint every round) on the King James Bible, sampling every
rank's resident memory from /proc. Prints each rank's RSS after warm-up and at the end, and the growth; the goal
is under 10 % on every rank.

Usage: /usr/bin/python3 bench/soak.py [--rounds 2000] [--json]
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import jobs  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=2000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    corpus = jobs.bible_corpus()
    with tempfile.TemporaryDirectory() as tmp:
        cfg = jobs.bible_config(tmp, bpe=1, bs=64, target=0, max_rounds=args.rounds, max_seconds=3600,
                                checkpoint_every=1)
        metrics, samples, _ = jobs.run(6, [corpus], cfg, Path(tmp) / "out", timeout=3000, sample_every=1.0)
    end_t = max(s[0] for s in samples[0])
    # Warm-up: start-up (~1-2 s) and the first tenth of the training time (first allocations, first
    # checkpoint). Sample times count from the launch; training ended about when the last sample was taken.
    train_seconds = metrics[-1]["seconds"]
    warm_from = max(0.0, end_t - 0.9 * train_seconds)
    rows, figures = [], []
    for rank, series in sorted(samples.items()):
        warm = [s for s in series if s[0] >= warm_from]
        alive = [s for s in series if s[2] > 0]  # a sample taken while the process exits reads 0
        start_rss, end_rss = warm[0][2], alive[-1][2]
        growth = (end_rss - start_rss) / start_rss
        figures.append({"rank": rank, "role": jobs.role_of(rank, 1), "rss_after_warmup_mib": start_rss,
                        "rss_end_mib": end_rss, "growth": growth})
        rows.append([rank, jobs.role_of(rank, 1), f"{start_rss:.1f} MiB", f"{end_rss:.1f} MiB",
                     f"{100 * growth:+.1f} %"])
    result = {"rounds": int(metrics[-1]["round"]), "seconds": metrics[-1]["seconds"], "ranks": figures}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"## Soak: {result['rounds']} rounds in {result['seconds']:.0f} s, checkpoint every round\n")
    print(jobs.table(rows, ["rank", "role", "RSS after warm-up", "RSS at the end", "growth"]))
    worst = max(f["growth"] for f in figures)
    print(f"\nlargest growth: {100 * worst:+.1f} % (goal: under 10 %)")


if __name__ == "__main__":
    main()
