#!/usr/bin/env python3
"""Wall time to the target of 2 learners against 1 on this machine, seed by seed (the goal: 1.7x faster).

Usage:
    /usr/bin/python3 bench/wall_time.py --out DIR [--seeds 12] [--seed 1] [--corpus bible] [--target 5.0]
        [--time-limit 150] [--single-lr 0.005] [--pair-lr 0.01] [--set key=value ...] [--pool DIR ...]

For each seed in turn it runs one single learner (bench/study.py --learners 1, fedavg, into DIR/single) and then
one pair (--learners 2 with balance_rounds, into DIR/pair), so the machine's drift in speed, which is large on a
shared VM, falls on both sides alike. The defaults are the report's model as docs/results.md measures it:
softmax, batches of 256, 50 a round, the single learner at its best rate (0.005), the pair at 0.01. Finished
runs are reused (bench/study.py's rules), so an interrupted study continues, and --seeds 24 after --seeds 12
adds 12 more. Seed k is --seed + k - 1. --seeds 0 runs nothing and prints the figures of what DIR holds.

It prints each seed's windows and seconds to the target and their ratio, then over all seeds: the data and time
ratios of the means, a pair learner's speed against a lone learner's, the mean of the per-seed ratios, how many
seeds reach the goal, and 95 % bootstrap intervals of the time ratio, over the runs of each side and paired by
seed. A seed where either side missed the target within the time limit is left out of those figures; where only
the single learner missed, a second set of figures counts it at its stop, which bounds the ratios from below.
--pool adds the seeds of other folders written by this script (the same corpus and target) to the figures; where
a seed is in several folders, DIR's runs count, else those of the last --pool folder that has it (a rerun of a
seed that missed, with a longer --time-limit, replaces the miss that way).
"""

import argparse
import csv
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import study  # noqa: E402

GOAL = 1.7
RESAMPLES = 10000


@dataclass(frozen=True)
class Run:
    """Windows per learner and training seconds to the target, or, for a run that missed it, when it stopped
    (lower bounds of what it would have needed)."""
    windows: float
    seconds: float
    reached: bool


@dataclass(frozen=True)
class Seed:
    """One seed's two runs."""
    name: str
    single: Run
    pair: Run

    @property
    def reached(self):
        return self.single.reached and self.pair.reached

    @property
    def time_ratio(self):
        """The single learner's seconds over the pair's: a lower bound where only the single learner missed."""
        return self.single.seconds / self.pair.seconds


def parse_args(argv):
    p = argparse.ArgumentParser(prog="wall_time", description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True, help="study folder (DIR/single, DIR/pair)")
    p.add_argument("--seeds", type=int, default=12, help="seeds to run (default 12; 0: only print the figures)")
    p.add_argument("--seed", type=int, default=study.SEED, help="the first seed (default 1)")
    p.add_argument("--corpus", default="bible", help='"bible", "text8" or a text file')
    p.add_argument("--target", type=float, default=5.0, help="test loss target (default 5.0)")
    p.add_argument("--time-limit", type=float, default=150.0,
                   help="max_seconds of every run (default 150: a slow seed's single learner needs over 75 s)")
    p.add_argument("--single-lr", type=float, default=0.005)
    p.add_argument("--pair-lr", type=float, default=0.01)
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="cfg.json override for both sides (repeatable; default model=softmax bs=256 bpe=50)")
    p.add_argument("--pool", type=Path, action="append", default=[],
                   help="another folder written by this script whose seeds count too (repeatable; see above for "
                        "a seed in several folders)")
    args = p.parse_args(argv)
    if args.seeds < 0:
        p.error("--seeds must be 0 or more")
    args.out = args.out.resolve()
    return args


def study_argvs(args, k):
    """bench/study.py's arguments for seed k (1-based): the single learner's, then the pair's. --repeat k makes
    each call run repeat k-1 and reuse the k-1 before it."""
    common = ["--corpus", args.corpus, "--pipelines", "shared", "--strategies", "fedavg",
              "--time-limit", str(args.time_limit), "--target", str(args.target), "--repeat", str(k),
              "--set", "model=softmax", "--set", "bs=256", "--set", "bpe=50", "--set", f"seed={args.seed}"]
    for item in args.set:
        common += ["--set", item]
    single = ["--out", str(args.out / "single"), "--learners", "1", *common, "--set", f"lr={args.single_lr}"]
    pair = ["--out", str(args.out / "pair"), "--learners", "2", *common, "--set", f"lr={args.pair_lr}",
            "--set", "balance_rounds=true", "--reference", str(args.out / "single")]
    return single, pair


def _to_target(row):
    if row["stopped"] == "target":
        return Run(float(row["windows_to_target"]), float(row["seconds_to_target"]), True)
    return Run(float(row["windows_per_learner"]), float(row["seconds"]), False)


def read_seeds(folder):
    """The seeds of one folder in the order of their repeats, each named by its seed (the run's cfg.json); a
    repeat with a run on one side only is left out."""
    def load(side, learners):
        path = folder / side / "results.csv"
        if not path.exists():
            return {}
        with open(path, newline="") as f:
            rows = [r for r in csv.DictReader(f) if int(r["learners"]) == learners and r["strategy"] == "fedavg"]
        return {int(r["repeat"]): (_to_target(r), _name_of(folder / side / r["run"])) for r in rows}
    single, pair = load("single", 1), load("pair", 2)
    return [Seed(single[k][1], single[k][0], pair[k][0]) for k in sorted(set(single) & set(pair))]


def _name_of(run_dir):
    """"seed N" from the run's cfg.json, or the run folder itself if that is gone."""
    cfg = run_dir / "config" / "cfg.json"
    return f"seed {json.loads(cfg.read_text()).get('seed', study.SEED)}" if cfg.exists() else str(run_dir)


def pooled(folders):
    """The seeds of several folders; where one seed appears in more than one, the last folder's runs count (a
    rerun with a longer time limit, say)."""
    seeds = {}
    for folder in folders:
        for s in read_seeds(folder):
            seeds.pop(s.name, None)
            seeds[s.name] = s
    return list(seeds.values())


def _interval(values):
    values = sorted(values)
    return values[int(0.025 * len(values))], values[int(0.975 * len(values)) - 1]


def _figures(seeds, goal, resamples, rng_seed):
    n = len(seeds)
    w1, t1 = sum(s.single.windows for s in seeds), sum(s.single.seconds for s in seeds)
    w2, t2 = sum(s.pair.windows for s in seeds), sum(s.pair.seconds for s in seeds)
    rng = random.Random(rng_seed)
    unpaired, paired = [], []
    for _ in range(resamples):
        a = [seeds[rng.randrange(n)] for _ in range(n)]
        b = [seeds[rng.randrange(n)] for _ in range(n)]
        unpaired.append(sum(s.single.seconds for s in a) / sum(s.pair.seconds for s in b))
        paired.append(sum(s.single.seconds for s in a) / sum(s.pair.seconds for s in a))
    return {
        "seeds": n,
        "single": (w1 / n, t1 / n),
        "pair": (w2 / n, t2 / n),
        "data_ratio": w1 / w2,
        "time_ratio": t1 / t2,
        "speed_ratio": (w2 / t2) / (w1 / t1),
        "mean_of_ratios": sum(s.time_ratio for s in seeds) / n,
        "at_goal": sum(s.time_ratio >= goal for s in seeds),
        "interval": _interval(unpaired),
        "paired_interval": _interval(paired),
    }


def summary(seeds, goal=GOAL, resamples=RESAMPLES, rng_seed=1):
    """{"reached": figures over the seeds where both sides reached the target (None if none did), "missed": the
    other seeds' names, "bounded": the same figures with the seeds where only the single learner missed, counted
    at its stop (so lower bounds of the ratios; None when there are none, or when a pair missed too, which
    leaves no bound)}."""
    done = [s for s in seeds if s.reached]
    single_missed = [s for s in seeds if s.pair.reached and not s.single.reached]
    pair_missed = [s for s in seeds if not s.pair.reached]
    return {
        "reached": _figures(done, goal, resamples, rng_seed) if done else None,
        "missed": [s.name for s in seeds if not s.reached],
        "bounded": (_figures(done + single_missed, goal, resamples, rng_seed)
                    if single_missed and not pair_missed else None),
    }


def _figure_lines(f, goal, bound):
    ge = ">=" if bound else ""
    return [
        f"1 learner {ge}{f['single'][0] / 1e3:.0f}k windows {ge}{f['single'][1]:.1f} s, "
        f"2 learners {f['pair'][0] / 1e3:.0f}k windows per learner {f['pair'][1]:.1f} s",
        f"data {ge}{f['data_ratio']:.2f}x less, time {ge}{f['time_ratio']:.3f}x less (goal {goal}x); "
        f"a pair learner at {f['speed_ratio']:.3f} of a lone learner's speed",
        f"mean of the per-seed time ratios {ge}{f['mean_of_ratios']:.3f}x; {f['at_goal']} of {f['seeds']} seeds "
        f"at or above {goal}x",
        f"95 % bootstrap of the time ratio{' (of the bound)' if bound else ''}: "
        f"{f['interval'][0]:.2f}-{f['interval'][1]:.2f}x over runs, "
        f"{f['paired_interval'][0]:.2f}-{f['paired_interval'][1]:.2f}x paired by seed",
    ]


def report(seeds, goal=GOAL):
    """The printed table and figures."""
    lines = [f"{'seed':<22} {'1 learner':>24} {'2 learners':>24} {'time ratio':>10}"]
    for s in seeds:
        def side(r):
            return f"{r.windows / 1e3:.0f}k {r.seconds:.1f} s" if r.reached else f"missed in {r.seconds:.0f} s"
        ratio = "-" if not s.pair.reached else f"{'' if s.single.reached else '>'}{s.time_ratio:.2f}x"
        lines.append(f"{s.name:<22} {side(s.single):>24} {side(s.pair):>24} {ratio:>10}")
    f = summary(seeds, goal)
    if f["missed"]:
        lines.append(f"a side missed the target: {', '.join(f['missed'])}")
    if f["reached"] is None:
        lines.append("no seed reached the target on both sides")
    else:
        lines.append(f"the {f['reached']['seeds']} seeds where both sides reached the target:")
        lines += ["  " + line for line in _figure_lines(f["reached"], goal, False)]
    if f["bounded"] is not None:
        lines.append(f"all {f['bounded']['seeds']} seeds, a single learner that missed counted at its stop "
                     "(lower bounds):")
        lines += ["  " + line for line in _figure_lines(f["bounded"], goal, True)]
    return "\n".join(lines)


def main(argv=None):
    args = parse_args(argv)
    for k in range(1, args.seeds + 1):
        for argv_k in study_argvs(args, k):
            study.main(argv_k)
    print(report(pooled([*args.pool, args.out])))


if __name__ == "__main__":
    main()
