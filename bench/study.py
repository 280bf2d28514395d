#!/usr/bin/env python3
"""Scaling study: fedavg_mpi runs over learner counts, pipeline modes and strategies, each until the test
loss reaches the target or the time limit passes; results table and figures.

Usage:
    /usr/bin/python3 bench/study.py --corpus bible|text8|PATH --out DIR [--learners 1,2,4,8,12]
        [--pipelines shared,per-learner] [--strategies fedavg,bsp,bmuf,diloco,easgd,hogwild] [--time-limit 300]
        [--target T] [--vocab-size N] [--set key=value ...] [--slow-learners K] [--slow-factor F]
        [--repeat R] [--fresh] [--classic] [--also-targets T1,T2,...] [--reference STUDY_DIR ...]

The corpus is prepared once into DIR/data (python/prepare.py: test windows held out of the training text;
vocabulary 5000 words for bible, 10000 otherwise); "per-learner" mode with L learners trains on L shards of
the training text (line i in shard i mod L, cached in DIR/data/shards_L/). Strategies: fedavg, bsp, easgd and
hogwild as named; bmuf is block momentum with block_lr 1 and block_momentum 0.3, diloco the same with nesterov
(--classic: the published settings, block_momentum 1 - 1/L for bmuf, block_lr 0.7 and block_momentum 0.9 for
diloco). Every run gets target, max_seconds = time limit, max_rounds 100000, then
the --set overrides (values parsed as JSON, else taken as strings). With one learner both pipeline modes are
the same job, which runs once. The 1-learner fedavg run, the reference for the speedups, is always run, unless
--reference is given and --learners leaves out 1.

Each run lives in DIR/runs/STRATEGY_L<L>[_MODE][_r<repeat>]/ (config/, the job's outputs, job.stdout,
job.stderr, job.rc, spec.json) and is reused when it finished with status 0 and spec.json (config, command,
data) is unchanged, so an interrupted study continues where it stopped; --fresh runs everything again.

Writes DIR/results.csv, DIR/results.md and DIR/figures/: STRATEGY_MODE_loss_vs_windows.{png,pdf} and
STRATEGY_MODE_loss_vs_seconds.{png,pdf} (one line per learner count), speedup.{png,pdf} (windows per learner
to target, the 1-learner reference over this run) and time_speedup.{png,pdf} (training seconds to target, likewise).
--also-targets adds, from the same runs, the speedups at other (higher) test losses: in results.md a grid per
target and a table of every run's speedups, speedup_at_T.{png,pdf}, and speedup_vs_target.{png,pdf} (one line per
strategy, pipeline mode and learner count). Speedups depend on the target (docs/results.md says why).
--reference STUDY_DIR takes the reference from another finished study on the same prepared data instead: its
1-learner fedavg runs, read again at this study's targets; use it to measure against a single learner tuned
separately (another lr or batch size), which is the fair reference where this study's settings suit many
learners but not one. Given more than once, each target takes, among the folders whose runs all reached it,
the one with the fewest windows per learner on average for the speedup in data, and the one with the fewest
training seconds for the time speedup (the best single learner in each); results.md names them.
"""

import argparse
import csv
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import corpus  # noqa: E402
import jobs  # noqa: E402
import plots  # noqa: E402

MODES = ("shared", "per-learner")
MAX_ROUNDS = 100000
TEST_WINDOWS = 1000
SEED = 1
COLUMNS = ["strategy", "pipelines", "learners", "repeat", "ranks", "rc", "stopped", "windows_to_target",
           "seconds_to_target", "final_loss", "rounds", "windows_per_learner", "seconds", "sync_bytes",
           "sync_bytes_per_learner_round", "speedup", "time_speedup", "run", "error"]


@dataclass(frozen=True)
class Combo:
    """One job of the study."""
    strategy: str
    mode: str        # "shared" or "per-learner"
    learners: int
    repeat: int

    @property
    def pipeline_count(self):
        return 1 if self.mode == "shared" else self.learners

    @property
    def ranks(self):
        """Dispatcher, a Tokenizer, Filter and Batcher per pipeline, and the learners."""
        return 1 + 3 * self.pipeline_count + self.learners

    @property
    def run_name(self):
        """Folder name; with one learner both modes name the same job."""
        mode = "" if self.learners == 1 else "_" + self.mode
        repeat = f"_r{self.repeat}" if self.repeat else ""
        return f"{self.strategy}_L{self.learners}{mode}{repeat}"


# ---------------------------------------------------------------- command line

def parse_args(argv):
    p = argparse.ArgumentParser(prog="study", description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", required=True, help='"bible", "text8" or a text file')
    p.add_argument("--out", required=True, type=Path, help="study folder")
    p.add_argument("--learners", type=jobs.comma_list(int), default=[1, 2, 4, 8, 12])
    p.add_argument("--pipelines", type=jobs.comma_list(str), default=list(MODES), help="shared,per-learner")
    p.add_argument("--strategies", type=jobs.comma_list(str),
                   default=["fedavg", "bsp", "bmuf", "diloco", "easgd", "hogwild"])
    p.add_argument("--time-limit", type=float, default=300, help="max_seconds of every run (default 300)")
    p.add_argument("--target", type=float, help="test loss target (default: the prepared config's)")
    p.add_argument("--vocab-size", type=int, help="default 5000 for bible, 10000 otherwise")
    p.add_argument("--set", type=jobs.parse_set, action="append", default=[], metavar="KEY=VALUE",
                   help="cfg.json override for every run (repeatable)")
    p.add_argument("--slow-learners", type=int, help="cfg slow_learners (capped at the learner count)")
    p.add_argument("--slow-factor", type=float, help="cfg slow_factor")
    p.add_argument("--repeat", type=int, default=1, help="runs per combination, repeat k with seed + k")
    p.add_argument("--fresh", action="store_true", help="run again even where a finished run exists")
    p.add_argument("--classic", action="store_true",
                   help="published bmuf/diloco settings instead of the tuned ones (see strategy_settings)")
    p.add_argument("--also-targets", type=jobs.comma_list(float), default=[],
                   help="more test-loss targets to report speedups at (reached before --target)")
    p.add_argument("--reference", type=Path, action="append", default=[],
                   help="a finished study folder whose 1-learner fedavg runs are the speedups' reference "
                        "(repeatable: the best at each target)")
    args = p.parse_args(argv)
    if not args.learners or min(args.learners) < 1:
        p.error("--learners must be positive integers")
    if not args.pipelines or set(args.pipelines) - set(MODES):
        p.error(f"--pipelines must be among {','.join(MODES)}")
    if not args.strategies:
        p.error("--strategies is empty")
    if args.time_limit <= 0 or args.repeat < 1:
        p.error("--time-limit must be > 0 and --repeat >= 1")
    args.out = args.out.resolve()
    args.reference = [r.resolve() for r in args.reference]
    if args.vocab_size is None:
        args.vocab_size = 5000 if args.corpus == "bible" else 10000
    return args


# ---------------------------------------------------------------- data

def data_name(corpus_name):
    """cfg data_name for a corpus: "bible", "text8", or the file's stem in the allowed characters."""
    if corpus_name in ("bible", "text8"):
        return corpus_name
    return re.sub(r"[^A-Za-z0-9_.-]", "_", Path(corpus_name).stem) or "corpus"


def prepare_data(corpus_name, vocab_size, data_dir):
    """DIR/data/{corpus.txt, train.txt, config/}, made once: reused while prepare.json matches the request.

    Returns the preparation's description (part of every run's spec)."""
    spec = {"corpus": corpus_name if corpus_name in ("bible", "text8") else str(Path(corpus_name).resolve()),
            "vocab_size": vocab_size, "test_windows": TEST_WINDOWS, "seed": SEED}
    stamp = data_dir / "prepare.json"
    if stamp.exists() and json.loads(stamp.read_text()) == spec:
        return spec
    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir(parents=True)
    text_path = data_dir / "corpus.txt"
    text_path.write_text(corpus.read_corpus(corpus_name), encoding="utf-8")
    cmd = [*jobs.PREPARE, str(text_path), "--out", str(data_dir / "config"),
           "--train-out", str(data_dir / "train.txt"), "--data-name", data_name(corpus_name),
           "--vocab-size", str(vocab_size), "--test-windows", str(TEST_WINDOWS), "--seed", str(SEED)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"study: preparing {corpus_name} failed:\n{done.stderr}")
    print(done.stdout, end="", flush=True)
    stamp.write_text(json.dumps(spec) + "\n")  # last: a half-made data folder is never reused
    return spec


def shards(data_dir, count):
    """The training text split into count files by lines, round-robin; cached in DIR/data/shards_<count>/."""
    train = data_dir / "train.txt"
    if count == 1:
        return [train]
    folder = data_dir / f"shards_{count}"
    paths = [folder / f"shard_{i}.txt" for i in range(count)]
    if folder.is_dir():
        return paths
    partial = data_dir / f"shards_{count}.tmp"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    lines = train.read_bytes().splitlines(keepends=True)
    for i, path in enumerate(paths):
        (partial / path.name).write_bytes(b"".join(lines[i::count]))
    partial.rename(folder)  # whole, or not at all
    return paths


# ---------------------------------------------------------------- runs

def plan(args):
    """Every combination to run, reference first; L=1 appears once per mode (both name one job). With
    --reference and no 1 in --learners there is no 1-learner run: the reference folders hold it."""
    own_reference = 1 in args.learners or not args.reference
    reference = [Combo("fedavg", "shared", 1, r) for r in range(args.repeat)] if own_reference else []
    combos = [Combo(s, m, n, r) for r in range(args.repeat) for n in sorted(set(args.learners))
              for s in args.strategies for m in args.pipelines]
    return reference + [c for c in combos if c not in reference]


def strategy_settings(strategy, learners, classic=False):
    """cfg.json keys of a study strategy name.

    bmuf and diloco use block momentum 0.3 (diloco: Nesterov) with block_lr 1: on the Bible at 8 learners and
    lr 0.25 that beat fedavg, while the published settings (--classic: bmuf block_momentum 1 - 1/L, diloco
    block_lr 0.7, block_momentum 0.9) overshoot and even diverge at that learning rate (docs/results.md)."""
    if strategy == "diloco":
        if classic:
            return {"strategy": "bmuf", "block_lr": 0.7, "block_momentum": 0.9, "nesterov": True}
        return {"strategy": "bmuf", "block_lr": 1.0, "block_momentum": 0.3, "nesterov": True}
    if strategy == "bmuf":
        if classic:
            return {"strategy": "bmuf", "block_lr": 1.0, "block_momentum": 1.0 - 1.0 / learners}
        return {"strategy": "bmuf", "block_lr": 1.0, "block_momentum": 0.3}
    return {"strategy": strategy}


def run_config(base, combo, args):
    """The run's cfg.json: the prepared one, the strategy, the stop conditions, slow learners, --set."""
    cfg = {**base, **strategy_settings(combo.strategy, combo.learners, args.classic),
           "max_seconds": args.time_limit, "max_rounds": MAX_ROUNDS}
    if combo.pipeline_count > 1:  # learner l reads its own file through a pipeline of its own
        cfg["pipeline_per_file"] = True
    if args.target is not None:
        cfg["target"] = args.target
    if args.slow_learners is not None:
        cfg["slow_learners"] = min(args.slow_learners, combo.learners)
    if args.slow_factor is not None:
        cfg["slow_factor"] = args.slow_factor
    cfg.update(dict(args.set))
    if combo.repeat:  # a repeat is the same run with another seed (weights, sampling, subsampling)
        cfg["seed"] = cfg.get("seed", SEED) + combo.repeat
    return cfg


def execute(combo, args, data_dir, prep_spec, base):
    """Runs combo in its folder unless a finished identical run is there; returns (run_dir, rc, reused)."""
    run_dir = args.out / "runs" / combo.run_name
    cfg = run_config(base, combo, args)
    corpora = shards(data_dir, combo.pipeline_count)
    cmd = [jobs.MPIEXEC, "-n", str(combo.ranks), str(jobs.APP), "--config", str(run_dir / "config"),
           "--out", str(run_dir), *map(str, corpora)]
    spec = {"data": prep_spec, "cfg": cfg, "command": cmd}
    rc, reused = jobs.run_in(run_dir, data_dir / "config", cfg, cmd, spec, args.time_limit, args.fresh)
    return run_dir, rc, reused


# ---------------------------------------------------------------- results

def summarize(combo, run_dir, rc, study_dir):
    """The results row of one run (None where the run gives no value); run is relative to study_dir."""
    row = dict.fromkeys(COLUMNS)
    row.update(strategy=combo.strategy, pipelines=combo.mode, learners=combo.learners, repeat=combo.repeat,
               ranks=combo.ranks, rc=rc, run=str(run_dir.relative_to(study_dir)))
    if rc != 0:
        row["error"] = jobs.error_line(run_dir) or f"exit status {rc}"
    try:
        run = plots.load_run(run_dir)
    except (OSError, ValueError):
        return row
    stats, metrics = run.stats, run.metrics
    target = json.loads((run_dir / "config" / "cfg.json").read_text())["target"]
    hit = plots.reached(metrics, target)
    if hit:
        row["windows_to_target"], row["seconds_to_target"] = hit
    row.update({k: stats.get(k) for k in ("stopped", "final_loss", "rounds", "windows_per_learner", "seconds")})
    row["sync_bytes"] = metrics[-1].get("sync_bytes", stats.get("sync_bytes")) if metrics else stats.get("sync_bytes")
    if row["sync_bytes"] is not None and row["rounds"]:
        row["sync_bytes_per_learner_round"] = row["sync_bytes"] / (combo.learners * row["rounds"])
    return row


def mean(values):
    numbers = [v for v in values if isinstance(v, (int, float))]
    return sum(numbers) / len(numbers) if numbers else None


def is_reference(row):
    return row["strategy"] == "fedavg" and row["learners"] == 1 and row["pipelines"] == "shared"


MEASURES = ("windows_to_target", "seconds_to_target")


def reference_means(rows, reference=None):
    """{measure: mean over the reference rows that reached the target (None if none did)} for
    windows_to_target and seconds_to_target: what every speedup divides. reference: rows for both measures,
    {measure: rows} for a reference per measure (as reference_rows gives), or None (also per measure) for the
    1-learner fedavg rows among rows."""
    per_measure = reference if isinstance(reference, dict) else dict.fromkeys(MEASURES, reference)
    own = [r for r in rows if is_reference(r)]
    return {m: mean(r[m] for r in (own if per_measure[m] is None else per_measure[m])) for m in MEASURES}


def add_speedups(rows, reference=None):
    """speedup and time_speedup of every row against the reference rows (default: the 1-learner fedavg rows
    among rows), mean over repeats."""
    ref = reference_means(rows, reference)
    for key, measure in (("speedup", "windows_to_target"), ("time_speedup", "seconds_to_target")):
        for row in rows:
            row[key] = ref[measure] / row[measure] if ref[measure] and row[measure] else None


def at_target(rows, study_dir, target):
    """Copies of rows with windows_to_target and seconds_to_target read again from each run's metrics at
    target (None where the run did not get there or left no metrics)."""
    out = []
    for row in rows:
        try:
            hit = plots.reached(plots.load_run(study_dir / row["run"]).metrics, target)
        except (OSError, ValueError):
            hit = None
        out.append({**row, "windows_to_target": hit[0] if hit else None,
                    "seconds_to_target": hit[1] if hit else None})
    return out


def load_reference(reference_dir, data_dir):
    """The 1-learner fedavg rows of the finished study in reference_dir (from its results.csv). Exits with a
    message if it has none, or if it held out other test windows than data_dir's: its losses would not
    compare."""
    results = reference_dir / "results.csv"
    if not results.is_file():
        sys.exit(f"study: --reference {reference_dir}: no results.csv (not a finished study)")
    theirs, ours = reference_dir / "data" / "config" / "test.txt", data_dir / "config" / "test.txt"
    if not theirs.is_file() or theirs.read_bytes() != ours.read_bytes():
        sys.exit(f"study: --reference {reference_dir}: its test windows differ from {ours} "
                 "(another corpus or vocabulary size), so its losses do not compare")
    with open(results, newline="") as f:
        rows = [{**r, "learners": int(r["learners"])} for r in csv.DictReader(f)]
    rows = [r for r in rows if is_reference(r)]
    if not rows:
        sys.exit(f"study: --reference {reference_dir}: no 1-learner fedavg run in its results.csv")
    return rows


def _lowest(read, measure):
    """(study folder, rows) of read ([(folder, rows read at a target)]) whose rows all reached the target with
    the lowest mean of measure; (None, []) if none did."""
    best, best_value = (None, []), None
    for folder, at in read:
        if not all(r[measure] is not None for r in at):
            continue
        value = mean(r[measure] for r in at)
        if best_value is None or value < best_value:
            best, best_value = (folder, at), value
    return best


def reference_at(references, target):
    """{measure: (folder, rows)} the speedups at target divide: per measure the reference folder whose runs all
    reached target with the lowest mean (the single learner that needed the least data for the speedup in
    windows, the fastest one for the time speedup; (None, []) if none reached it), each folder's metrics read
    once; or (None, None) for this study's own 1-learner fedavg runs when there are no references."""
    if not references:
        return dict.fromkeys(MEASURES, (None, None))
    read = [(folder, at_target(rows, folder, target)) for folder, rows in references]
    return {m: _lowest(read, m) for m in MEASURES}


def reference_rows(choice):
    """{measure: rows} of a reference_at choice, as reference_means takes them."""
    return {m: rows for m, (_, rows) in choice.items()}


def speedups_at(rows, study_dir, targets, references=()):
    """({target: [row with "speedup" at that target]}, {target: reference_at's choice}): windows
    per learner to each extra target, read from the runs' metrics, against this study's 1-learner fedavg runs
    (folder and rows None) or, given references ([(study folder, rows)]), the best of them at that target
    per measure (reference_at; folder None and rows [] if none reached it)."""
    out, used = {}, {}
    for target in targets:
        at = at_target(rows, study_dir, target)
        used[target] = reference_at(references, target)
        add_speedups(at, reference_rows(used[target]))
        out[target] = at
    return out, used


def progress_line(index, total, combo, row, reused):
    where = f"[{index}/{total}] {combo.strategy} {combo.mode} L={combo.learners} r{combo.repeat}"
    state = f"rc={row['rc']}" + (" (reused)" if reused else "")
    if row["windows_to_target"] is not None:
        result = f"reached: {row['windows_to_target']:.0f} windows/learner, {row['seconds_to_target']:.1f} s"
    elif row["final_loss"] is not None:
        result = f"not reached: final loss {row['final_loss']:.4g} after {row['seconds']:.1f} s"
    else:
        result = f"failed: {row['error']}"
    return f"{where}: {state}, {result}"


def cell(value):
    """A results value as text: blank for None, whole numbers without decimals, others to 4 digits."""
    if value is None:
        return ""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.4g}"
    return str(value)


def write_csv(rows, path):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows({k: cell(v) for k, v in row.items()} for row in rows)


def grid_cell(group, reference):
    """One grid cell from a combination's repeats: "274k, 1.0×; 0.3 s, 1.0×": the mean windows per learner to
    the target over the repeats that reached it, and the reference mean (reference_means) divided by it; the
    same for training seconds; without the speedups ("274k; 0.3 s") if the reference did not reach the target.
    "not reached" if no repeat did, "(k of n)" appended when only some did."""
    hit = [r for r in group if r["windows_to_target"] is not None]
    if not hit:
        return "not reached"
    windows, seconds = mean(r["windows_to_target"] for r in hit), mean(r["seconds_to_target"] for r in hit)
    if reference["windows_to_target"]:
        text = (f"{windows / 1000:.0f}k, {reference['windows_to_target'] / windows:.1f}×; "
                f"{seconds:.1f} s, {reference['seconds_to_target'] / seconds:.1f}×")
    else:
        text = f"{windows / 1000:.0f}k; {seconds:.1f} s"
    return text if len(hit) == len(group) else f"{text} ({len(hit)} of {len(group)})"


def grids(rows, reference=None):
    """Markdown: per pipeline mode, a strategy x learners table of grid_cell (the 1-learner runs, which have
    one pipeline either way, appear under both modes); speedups against reference rows as in add_speedups."""
    learners = sorted({r["learners"] for r in rows})
    reference = reference_means(rows, reference)
    out = []
    for mode in ("shared", "per-learner"):
        in_mode = [r for r in rows if r["pipelines"] == mode]
        if not any(r["learners"] > 1 for r in in_mode):
            continue
        body = []
        for strategy in dict.fromkeys(r["strategy"] for r in rows):
            cells = []
            for n in learners:
                group = [r for r in in_mode if r["strategy"] == strategy and r["learners"] == n]
                cells.append(grid_cell(group, reference) if group else "")
            body.append([strategy] + cells)
        columns = ["strategy"] + [f"{n} learner{'s' if n > 1 else ''}" for n in learners]
        title = "One shared pipeline" if mode == "shared" else "One pipeline per learner"
        out.append(f"{title}:\n\n" + jobs.table(body, columns))
    return "\n\n".join(out)


def reference_text(args, choice, target):
    """Whose 1-learner runs the speedups at target divide (choice: reference_at's), in words."""
    if not args.reference:
        return "the 1-learner fedavg run"
    windows, seconds = choice["windows_to_target"][0], choice["seconds_to_target"][0]
    if windows is None:
        return (f"the best 1-learner fedavg runs of {', '.join(map(str, args.reference))}, "
                f"none of which reached {target:g}")
    if seconds == windows:
        return f"the 1-learner fedavg runs of {windows}"
    return f"the 1-learner fedavg runs of {windows} (in seconds: of {seconds}, the fastest)"


def write_markdown(rows, path, args, target, extra, used):
    """results.md; extra: {target: rows read at that target}; used: {target: reference_at's choice} as
    speedups_at gives, for the main target and the extra ones."""
    against = reference_text(args, used[target], target)
    reference = reference_rows(used[target])
    head = (f"# Scaling study: {args.corpus}\n\nTarget test loss {target:g}, time limit {args.time_limit:g} s per run, "
            f"{args.repeat} repeat(s). Speedups are against {against}.\n\n")
    if not reference_means(rows, reference)["windows_to_target"]:
        head += f"No speedups at {target:g}: the reference did not reach it.\n\n"
    body = [[cell(row[k]).replace("|", "\\|") for k in COLUMNS] for row in rows]
    text = head
    if any(r["windows_to_target"] is not None for r in rows):
        text += ("Each cell: windows per learner to the target and its speedup; training seconds to the target and "
                 "its speedup. Means over the repeats; a speedup is the 1-learner fedavg mean divided by the "
                 "cell's.\n\n" + grids(rows, reference) + "\n\n## Every run\n\n")
    text += jobs.table(body, COLUMNS) + "\n"
    if extra:
        columns = (["strategy", "pipelines", "learners", "repeat"] + [f"speedup at {t:g}" for t in extra] +
                   [f"speedup at {target:g}"])
        body = [[cell(row[k]) for k in ("strategy", "pipelines", "learners", "repeat")] +
                [cell(extra[t][i]["speedup"]) for t in extra] + [cell(row["speedup"])] for i, row in enumerate(rows)]
        text += "\n## Other targets\n"
        for t, at in extra.items():
            text += (f"\n### Test loss {t:g}\n\nAgainst {reference_text(args, used[t], t)}.\n\n" +
                     grids(at, reference_rows(used[t])) + "\n")
        text += "\n### Every run's speedup in windows per learner\n\n" + jobs.table(body, columns) + "\n"
    path.write_text(text)


def write_figures(rows, study_dir, target, extra):
    """study_dir/figures/: loss figures per (strategy, pipeline mode), one line per run, the two speedup
    figures, and with extra targets ({target: rows read there}) a speedup figure per target and the speedup
    against the target (the main target's rows are rows; drawn when some multi-learner run reached some
    target). Figures of an earlier study in the same folder are removed first."""
    fig_dir = study_dir / "figures"
    shutil.rmtree(fig_dir, ignore_errors=True)
    groups = {}
    for row in rows:
        groups.setdefault((row["strategy"], row["pipelines"]), []).append(row)
    for (strategy, mode), group in groups.items():
        runs = []
        for row in group:
            label = f"{row['learners']} learner{'s' if row['learners'] > 1 else ''}"
            label += f" #{row['repeat']}" if row["repeat"] else ""
            try:
                runs.append(plots.load_run(study_dir / row["run"], label))
            except (OSError, ValueError):
                continue  # a failed run has nothing to draw
        if runs:
            title = f"{strategy}, {mode} pipelines"
            plots.plot_loss_vs_windows(runs, fig_dir / f"{strategy}_{mode}_loss_vs_windows", title)
            plots.plot_loss_vs_seconds(runs, fig_dir / f"{strategy}_{mode}_loss_vs_seconds", title)
    plots.plot_speedup(rows, fig_dir / "speedup")
    plots.plot_speedup(rows, fig_dir / "time_speedup", key="time_speedup",
                       y_label="speedup in training seconds to target")
    for t, at in extra.items():
        plots.plot_speedup(at, fig_dir / f"speedup_at_{t:g}",
                           y_label=f"speedup in windows per learner to loss {t:g}")
    per_target = {**extra, target: rows}
    if extra and plots.speedups_by_target(per_target):  # some multi-learner run reached some target
        plots.plot_speedup_vs_target(per_target, fig_dir / "speedup_vs_target")


def main(argv=None):
    args = parse_args(argv)
    data_dir = args.out / "data"
    prep_spec = prepare_data(args.corpus, args.vocab_size, data_dir)
    base = json.loads((data_dir / "config" / "cfg.json").read_text())
    # checked before any run, so that a wrong folder does not cost the whole grid
    references = [(folder, load_reference(folder, data_dir)) for folder in args.reference]
    combos = plan(args)
    rows, done = [], {}
    for index, combo in enumerate(combos, 1):
        if combo.run_name in done:  # the other pipeline mode of a 1-learner job
            (run_dir, rc), reused = done[combo.run_name], True
        else:
            run_dir, rc, reused = execute(combo, args, data_dir, prep_spec, base)
            done[combo.run_name] = (run_dir, rc)
        row = summarize(combo, run_dir, rc, args.out)
        rows.append(row)
        print(progress_line(index, len(combos), combo, row, reused), flush=True)
    target = run_config(base, combos[0], args)["target"]
    used = {target: reference_at(references, target)}
    add_speedups(rows, reference_rows(used[target]))
    extra, used_extra = speedups_at(rows, args.out, args.also_targets, references)
    write_csv(rows, args.out / "results.csv")
    write_markdown(rows, args.out / "results.md", args, target, extra, {**used_extra, **used})
    write_figures(rows, args.out, target, extra)
    print(f"study: wrote {args.out / 'results.csv'}, {args.out / 'results.md'} and {args.out / 'figures'}/")


if __name__ == "__main__":
    main()
