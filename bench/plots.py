"""Figures of fedavg_mpi runs (matplotlib, Agg backend; no torch import).

Usage:
    /usr/bin/python3 bench/plots.py --out FIGDIR RUN_DIR [RUN_DIR ...]
        [--labels a,b,...] [--formats png,pdf]

A run directory is the --out folder of one fedavg_mpi job: it holds one
NAME_metrics.csv (one row per round, columns read by name; sync_bytes may
be absent) and one NAME_stats.txt (the line "final: key=value ...").  The
command writes FIGDIR/loss_vs_windows.* and FIGDIR/loss_vs_seconds.*: the
test loss of every run against windows per learner and against training
seconds, with the target as a dashed line (none for runs without one).
Without --labels a run's legend names its folder and what sets it apart
from the other runs: its name (corpus), dim, strategy, learners, pipelines.

Library use (bench/study.py):
    load_run(dir, label=None)             a Run: metrics rows, stats, label
    distinct_labels(labels)               labels less the parts all share
    reached(metrics_rows, target)         (windows_per_learner, seconds) at
                                          the first test_loss <= target
    plot_loss_vs_windows(runs, stem)      the two loss figures
    plot_loss_vs_seconds(runs, stem)
    plot_speedup(rows, stem)              speedup against learner count
    plot_speedup_vs_target(per_target, stem)
                                          speedup against the target loss
Repeats of one combination are combined as the study's tables do: the
reference divided by their mean, i.e. the harmonic mean of their speedups.
"""

import argparse
import csv
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

FORMATS = ("png", "pdf")
FIGSIZE = (6, 4)
DPI = 100


@dataclass
class Run:
    """One finished (or failed) job: its metrics rows and final statistics."""
    directory: Path
    metrics: list   # dicts column -> float, one per round
    stats: dict     # key -> float, or str where the value is not a number
    label: str


def _number(text):
    """float(text), or text itself when it is not a number."""
    try:
        return float(text)
    except ValueError:
        return text


def _only_file(directory, pattern):
    """The single file in directory matching the glob pattern."""
    found = sorted(Path(directory).glob(pattern))
    if len(found) != 1:
        raise FileNotFoundError(f"{directory}: expected one {pattern}, "
                                f"found {len(found)}")
    return found[0]


def read_metrics(path):
    """Rows of a metrics CSV as dicts of floats keyed by column name."""
    with open(path, newline="") as f:
        return [{k: float(v) for k, v in row.items()}
                for row in csv.DictReader(f)]


def read_stats(path):
    """The key=value pairs of the last "final:" line of a stats file."""
    lines = [ln for ln in Path(path).read_text().splitlines()
             if ln.startswith("final:")]
    if not lines:
        return {}
    pairs = (item.split("=", 1) for item in lines[-1].split()[1:]
             if "=" in item)
    return {k: _number(v) for k, v in pairs}


def _count(n, noun):
    """'1 pipeline', '2 pipelines'."""
    return f"{n:g} {noun}{'' if n == 1 else 's'}"


def describe(stats, fallback):
    """A legend label from the stats' strategy, learners and pipelines keys;
    fallback when the stats carry none of them."""
    parts = []
    if "strategy" in stats:
        parts.append(str(stats["strategy"]))
    if "learners" in stats:
        parts.append(_count(stats["learners"], "learner"))
    if "pipelines" in stats:
        parts.append(_count(stats["pipelines"], "pipeline"))
    return ", ".join(parts) or fallback


def _dim(directory, name):
    """The embedding dimension of the run in directory: its NAME.w2v.txt
    header's, else its config/cfg.json's "dim"; None if neither says."""
    try:
        with open(directory / f"{name}.w2v.txt", encoding="utf-8") as f:
            return int(f.readline().split()[1])
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open(directory / "config" / "cfg.json", encoding="utf-8") as f:
            return int(json.load(f).get("dim", 32))
    except (OSError, ValueError, TypeError, AttributeError):
        return None


def run_label(directory, name, stats):
    """'out_a: kjv, dim 32, fedavg, 2 learners, 1 pipeline': the folder, the
    run's name (its corpus), its dimension and describe(stats)."""
    dim = _dim(directory, name)
    parts = [name] + ([f"dim {dim}"] if dim else [])
    described = describe(stats, "")
    return f"{directory.name}: " + ", ".join(parts + ([described] if described
                                                      else []))


def distinct_labels(labels):
    """The labels made by run_label, less the parts that every one of them
    shares (the folder stays), so that a legend shows what differs."""
    split = [label.split(": ", 1) for label in labels]
    if len(labels) < 2 or any(len(s) != 2 for s in split):
        return list(labels)
    parts = [s[1].split(", ") for s in split]
    shared = set(parts[0]).intersection(*parts[1:])
    return [f"{folder}: " + ", ".join(p for p in mine if p not in shared)
            if any(p not in shared for p in mine) else folder
            for (folder, _), mine in zip(split, parts)]


def load_run(directory, label=None):
    """The Run in directory; label defaults to run_label (folder, corpus,
    dimension, strategy, learners, pipelines)."""
    directory = Path(directory)
    metrics_path = _only_file(directory, "*_metrics.csv")
    metrics = read_metrics(metrics_path)
    stats = read_stats(_only_file(directory, "*_stats.txt"))
    name = metrics_path.name[:-len("_metrics.csv")]
    return Run(directory, metrics, stats,
               label or run_label(directory, name, stats))


def reached(metrics_rows, target):
    """(windows_per_learner, seconds) where the test loss first reaches
    target, interpolated linearly in the loss between that row and the one
    before it (rounds are coarse); None if no row gets there."""
    before = None
    for row in metrics_rows:
        if row["test_loss"] <= target:
            if before is None or before["test_loss"] <= row["test_loss"]:
                return row["windows_per_learner"], row["seconds"]
            f = (before["test_loss"] - target) / (before["test_loss"] - row["test_loss"])
            return tuple(before[k] + f * (row[k] - before[k]) for k in ("windows_per_learner", "seconds"))
        before = row
    return None


def save(fig, path_stem, formats=FORMATS):
    """Writes fig as path_stem.FORMAT for each format and closes it;
    returns the paths written."""
    path_stem = Path(path_stem)
    path_stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [path_stem.with_name(f"{path_stem.name}.{fmt}") for fmt in formats]
    for path in paths:
        fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return paths


def _draw_targets(ax, runs):
    """One dashed horizontal line per distinct target in the runs' stats."""
    targets = sorted({r.stats["target"] for r in runs
                      if isinstance(r.stats.get("target"), float)
                      and r.stats["target"] > 0})   # 0: the run had none
    for i, target in enumerate(targets):
        ax.axhline(target, color="grey", linestyle="--", linewidth=1,
                   label="target" if i == 0 else None)


def plot_loss(runs, x_column, x_label, path_stem, title=None,
              formats=FORMATS):
    """Test loss against one metrics column, one line per run."""
    fig, ax = plt.subplots(figsize=FIGSIZE)
    for run in runs:
        ax.plot([r[x_column] for r in run.metrics],
                [r["test_loss"] for r in run.metrics], label=run.label)
    _draw_targets(ax, runs)
    ax.set_xlabel(x_label)
    ax.set_ylabel("test loss")
    if title:
        ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    return save(fig, path_stem, formats)


def plot_loss_vs_windows(runs, path_stem, title=None, formats=FORMATS):
    return plot_loss(runs, "windows_per_learner", "windows per learner",
                     path_stem, title, formats)


def plot_loss_vs_seconds(runs, path_stem, title=None, formats=FORMATS):
    return plot_loss(runs, "seconds", "training seconds", path_stem, title,
                     formats)


def _speedup_mean(values):
    """The mean of several runs' speedups as the study's tables give it: the
    reference divided by the runs' mean, i.e. the harmonic mean."""
    return len(values) / sum(1.0 / v for v in values)


def _by_combination(rows):
    """{(strategy, pipelines): rows}."""
    groups = {}
    for row in rows:
        groups.setdefault((row["strategy"], row["pipelines"]), []).append(row)
    return groups


def _mean_by_learners(rows, key):
    """{learners: _speedup_mean of the numeric values of key} over rows."""
    values = {}
    for row in rows:
        value = row.get(key)
        if isinstance(value, (int, float)):
            values.setdefault(int(row["learners"]), []).append(value)
    return {n: _speedup_mean(v) for n, v in sorted(values.items())}


def _finish_speedup(fig, ax, x_label, y_label, path_stem, formats):
    """Labels, grid and the legend outside the axes of a speedup figure; saves it."""
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.tight_layout()
    return save(fig, path_stem, formats)


def plot_speedup(rows, path_stem, key="speedup",
                 y_label="speedup in windows per learner to target",
                 formats=FORMATS):
    """row[key] against row["learners"], one line per (strategy, pipelines)
    pair, with the ideal y = x.  Rows are dicts (bench/study.py's results);
    rows whose key is not a number (target not reached) are left out and
    repeats of one combination are combined by _speedup_mean."""
    groups = _by_combination(rows)
    strategies = sorted({strategy for strategy, _ in groups})
    fig, ax = plt.subplots(figsize=(FIGSIZE[0] + 2, FIGSIZE[1]))
    # One colour per strategy; solid for a shared pipeline, dashed for one pipeline per learner.
    for (strategy, pipelines), group in sorted(groups.items()):
        points = _mean_by_learners(group, key)
        if points:
            ax.plot(list(points), list(points.values()), marker="o",
                    color=f"C{strategies.index(strategy) % 10}",
                    linestyle="-" if pipelines == "shared" else "--",
                    label=f"{strategy}, {pipelines}")
    counts = sorted({int(r["learners"]) for r in rows} | {1})
    ax.plot([1, counts[-1]], [1, counts[-1]], color="grey", linestyle=":",
            linewidth=1, label="ideal")
    ax.set_xticks(counts)
    return _finish_speedup(fig, ax, "learners", y_label, path_stem, formats)


def speedups_by_target(per_target, key="speedup"):
    """{(strategy, pipelines, learners): {target: _speedup_mean of key over
    its repeats}} from {target: rows}; 1-learner rows and rows that did not
    reach a target are left out."""
    lines = {}
    for target, rows in per_target.items():
        for (strategy, pipelines), group in _by_combination(rows).items():
            for learners, value in _mean_by_learners(group, key).items():
                if learners > 1:
                    lines.setdefault((strategy, pipelines, learners), {})[target] = value
    return {name: dict(sorted(points.items(), reverse=True))
            for name, points in sorted(lines.items())}


def plot_speedup_vs_target(per_target, path_stem, key="speedup",
                           y_label="speedup in windows per learner",
                           formats=FORMATS):
    """The speedup at each target test loss, one line per (strategy,
    pipelines, learners) with more than one learner (speedups_by_target),
    tighter targets to the right."""
    fig, ax = plt.subplots(figsize=(FIGSIZE[0] + 2, FIGSIZE[1]))
    for name, points in speedups_by_target(per_target, key).items():
        strategy, pipelines, learners = name
        ax.plot(list(points), list(points.values()), marker="o",
                linestyle="-" if pipelines == "shared" else "--",
                label=f"{strategy}, {pipelines}, {learners} learners")
    ax.invert_xaxis()
    return _finish_speedup(fig, ax, "target test loss", y_label, path_stem, formats)


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="plots", description="Loss figures of fedavg_mpi runs.")
    p.add_argument("runs", nargs="+", metavar="RUN_DIR",
                   help="--out folder of a fedavg_mpi job")
    p.add_argument("--out", required=True, help="folder for the figures")
    p.add_argument("--labels", help="comma-separated legend labels, one per "
                   "run (default: from the stats, else the folder name)")
    p.add_argument("--formats", default=",".join(FORMATS),
                   help="comma-separated file formats (default: png,pdf)")
    args = p.parse_args(argv)
    args.labels = args.labels.split(",") if args.labels else [None] * len(
        args.runs)
    if len(args.labels) != len(args.runs):
        p.error(f"--labels has {len(args.labels)} labels for "
                f"{len(args.runs)} runs")
    args.formats = args.formats.split(",")
    return args


def main(argv=None):
    args = parse_args(argv)
    try:
        runs = [load_run(d, label) for d, label in zip(args.runs, args.labels)]
    except (OSError, ValueError, KeyError) as e:
        print(f"plots: {e}", file=sys.stderr)
        return 2
    if not any(args.labels):
        for run, label in zip(runs, distinct_labels([r.label for r in runs])):
            run.label = label
    out = Path(args.out)
    written = plot_loss_vs_windows(runs, out / "loss_vs_windows",
                                   formats=args.formats)
    written += plot_loss_vs_seconds(runs, out / "loss_vs_seconds",
                                    formats=args.formats)
    print("\n".join(f"plots: wrote {p}" for p in written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
