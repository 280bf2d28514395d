"""Figures of fedavg_mpi runs (matplotlib, Agg backend; no torch import).

Usage:
    /usr/bin/python3 python/plots.py --out FIGDIR RUN_DIR [RUN_DIR ...]
        [--labels a,b,...] [--formats png,pdf]

A run directory is the --out folder of one fedavg_mpi job: it holds one
NAME_metrics.csv (one row per round, columns read by name; sync_bytes may
be absent) and one NAME_stats.txt (the line "final: key=value ...").  The
command writes FIGDIR/loss_vs_windows.* and FIGDIR/loss_vs_seconds.*: the
test loss of every run against windows per learner and against training
seconds, with the target as a dashed line.

Library use (bench/study.py):
    load_run(dir, label=None)             a Run: metrics rows, stats, label
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


def describe(stats, fallback):
    """A legend label from the stats' strategy, learners and pipelines keys;
    fallback when the stats carry none of them."""
    parts = []
    if "strategy" in stats:
        parts.append(str(stats["strategy"]))
    if "learners" in stats:
        parts.append(f"{stats['learners']:g} learners")
    if "pipelines" in stats:
        parts.append(f"{stats['pipelines']:g} pipelines")
    return ", ".join(parts) or fallback


def load_run(directory, label=None):
    """The Run in directory; label defaults to describe(stats, dir name)."""
    directory = Path(directory)
    metrics = read_metrics(_only_file(directory, "*_metrics.csv"))
    stats = read_stats(_only_file(directory, "*_stats.txt"))
    return Run(directory, metrics, stats,
               label or describe(stats, directory.name))


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
                      if isinstance(r.stats.get("target"), float)})
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
    out = Path(args.out)
    written = plot_loss_vs_windows(runs, out / "loss_vs_windows",
                                   formats=args.formats)
    written += plot_loss_vs_seconds(runs, out / "loss_vs_seconds",
                                    formats=args.formats)
    print("\n".join(f"plots: wrote {p}" for p in written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
