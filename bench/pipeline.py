#!/usr/bin/env python3
"""Pipeline and system figures on the King James Bible, measured with the real binary under mpiexec:

- pipeline throughput: windows/s one pipeline delivers with training switched off (cfg "train": false);
- what the learners consume at the default settings, and the ratio of the two;
- CPU share of every role while training (waiting ranks should sleep, not spin), and the CPU of every role per
  window the learners train, at 2 and 8 learners, with the whole job's CPU over the learners' own (on a small
  machine whatever the other roles use comes out of the learners');
- peak RSS of every role;
- the averaging share of a round: the weight exchange (broadcast + averaging collectives, timed by the
  Dispatcher once every learner is in them: the metrics' sync_seconds) against the whole round;
- the CPU of ranks that only wait (slow softmax learners: pipeline and Dispatcher idle);
- the cost of a round with no training at all (exchange + test loss + messages; checkpoints follow time).

Usage: /usr/bin/python3 bench/pipeline.py [--seconds 20] [--dim D] [--json]
"""

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import jobs  # noqa: E402


def rate(metrics, learners):
    """Windows per second, all learners together, from round 1 to the last round."""
    first, last = metrics[1], metrics[-1]
    windows = (last["windows_per_learner"] - first["windows_per_learner"]) * learners
    return windows / (last["seconds"] - first["seconds"])


def cpu_per_window(metrics, samples, learners):
    """Each role's CPU (all its ranks) per window trained, in ns, from 5 s after the first sample to 1 s before the
    last (start-up and the final outputs left out), and the whole job's CPU over the learners' own."""
    start = samples[0][0][0] + 5.0
    end = max(s[0] for s in samples[0]) - 1.0
    windows_per_s = rate(metrics, learners)
    ranks, share = {}, {}
    for rank, series in sorted(samples.items()):
        role = jobs.role_of(rank, 1)
        cpu = jobs.cpu_share(series, start, end)
        ranks.setdefault(role, []).append({"rank": rank, "cpu_share": cpu,
                                           "peak_rss_mib": max(s[3] for s in series)})
        share[role] = share.get(role, 0.0) + cpu
    return {"ranks": ranks, "cpu_share": share, "windows_per_s": windows_per_s,
            "ns_per_window": {role: 1e9 * c / windows_per_s for role, c in share.items()},
            "job_over_learners": sum(share.values()) / share["Learner"]}


def round_seconds(metrics):
    return statistics.median(b["seconds"] - a["seconds"] for a, b in zip(metrics[1:], metrics[2:]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=20, help="training time of the default-settings run")
    ap.add_argument("--dim", type=int, default=0, help="the model's dim (default: the Bible config's, 32)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    extra = {"dim": args.dim} if args.dim else {}
    corpus = jobs.bible_corpus()
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        # 1. The pipeline alone: one learner that asks for windows and does not train.
        cfg = jobs.bible_config(tmp / "p", train=False, bpe=100, bs=1024, target=0, max_rounds=200, max_seconds=60)
        m, samples, _ = jobs.run(5, [corpus], cfg, tmp / "p" / "out")
        figures["pipeline_windows_per_s"] = rate(m, 1)

        # 2. Default settings, 2 and 8 learners: consumption, CPU per role per window trained, RSS, round time.
        for learners in (2, 8):
            cfg = jobs.bible_config(tmp / f"d{learners}", target=0, max_rounds=100000, max_seconds=args.seconds,
                                    **extra)
            m, samples, _ = jobs.run(4 + learners, [corpus], cfg, tmp / f"d{learners}" / "out")
            figures[f"cpu_{learners}"] = cpu_per_window(m, samples, learners)
            if learners == 2:
                figures["learners_windows_per_s"] = rate(m, 2)
                figures["roles"] = figures["cpu_2"]["ranks"]
                figures["default_round_seconds"] = round_seconds(m)
                figures["sync_seconds"] = statistics.median(r["sync_seconds"] for r in m[1:])
        figures["pipeline_over_learners"] = figures["pipeline_windows_per_s"] / figures["learners_windows_per_s"]
        for role in ("Tokenizer", "Filter", "Batcher"):
            figures[f"{role.lower()}_ns_per_window"] = figures["cpu_2"]["ns_per_window"][role]
        figures["averaging_share"] = figures["sync_seconds"] / figures["default_round_seconds"]

        # 3. Waiting ranks: with the slow softmax model the pipeline and the Dispatcher spend almost all their
        #    time waiting for the learners.
        cfg = jobs.bible_config(tmp / "w", model="softmax", bs=256, bpe=100, target=0, max_rounds=100000,
                                max_seconds=args.seconds)
        m, samples, _ = jobs.run(6, [corpus], cfg, tmp / "w" / "out")
        start = samples[0][0][0] + 5.0
        end = max(s[0] for s in samples[0]) - 1.0
        figures["waiting"] = {jobs.role_of(r, 1): jobs.cpu_share(series, start, end)
                              for r, series in sorted(samples.items()) if jobs.role_of(r, 1) != "Learner"}

        # 4. Overhead of a round without training: broadcast + average + test loss + checkpoint.
        cfg = jobs.bible_config(tmp / "o", train=False, bpe=1, bs=1, target=0, max_rounds=60, max_seconds=60)
        m, _, _ = jobs.run(6, [corpus], cfg, tmp / "o" / "out")
        figures["overhead_round_seconds"] = round_seconds(m)
        figures["overhead_share"] = figures["overhead_round_seconds"] / figures["default_round_seconds"]

    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print("## Pipeline and system (King James Bible, default config, 2 cores)\n")
    print(jobs.table([
        ["pipeline alone (training off, 1 pipeline)", f"{figures['pipeline_windows_per_s']:,.0f} windows/s"],
        ["2 learners consume (default settings)", f"{figures['learners_windows_per_s']:,.0f} windows/s"],
        ["pipeline / learners", f"{figures['pipeline_over_learners']:.1f}x"],
        ["pipeline CPU per window consumed (Tokenizer + Filter + Batcher)",
         " + ".join(f"{figures[f'{r}_ns_per_window']:.0f}" for r in ("tokenizer", "filter", "batcher"))
         + f" = {sum(figures[f'{r}_ns_per_window'] for r in ('tokenizer', 'filter', 'batcher')):.0f} ns"],
        ["round at default settings", f"{figures['default_round_seconds']:.3f} s"],
        ["weight exchange per round (broadcast + averaging)",
         f"{figures['sync_seconds'] * 1000:.1f} ms ({100 * figures['averaging_share']:.1f} % of a round)"],
        ["round with no training (broadcast + average + test loss; checkpoints by time)",
         f"{figures['overhead_round_seconds']:.3f} s ({100 * figures['overhead_share']:.1f} % of a round)"],
    ], ["figure", "value"]))
    print()
    rows = []
    for role, ranks in figures["roles"].items():
        for r in ranks:
            rows.append([r["rank"], role, f"{100 * r['cpu_share']:.1f} %", f"{r['peak_rss_mib']:.0f} MiB"])
    print(jobs.table(rows, ["rank", "role", "CPU while training", "peak RSS"]))
    print("\nWaiting ranks (softmax model: learners are the bottleneck, everyone else waits):\n")
    print(jobs.table([[role, f"{100 * share:.1f} %"] for role, share in figures["waiting"].items()],
                     ["role", "CPU"]))
    print("\nCPU per window trained, by role (default settings; ns of CPU per window the learners train):\n")
    rows = []
    for role in ("Dispatcher", "Tokenizer", "Filter", "Batcher", "Learner"):
        rows.append([role] + [f"{figures[f'cpu_{n}']['ns_per_window'][role]:.0f} ns" for n in (2, 8)])
    rows.append(["whole job / learners"] + [f"{figures[f'cpu_{n}']['job_over_learners']:.3f}" for n in (2, 8)])
    print(jobs.table(rows, ["role", "2 learners", "8 learners"]))


if __name__ == "__main__":
    main()
