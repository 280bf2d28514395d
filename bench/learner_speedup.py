#!/usr/bin/env python3
"""Learners that scale: the windows each learner trains until the test loss reaches the target, for each
strategy and learner count, with the speedup against one learner and the final test loss (issue 42).

Speedups are against one learner of the default strategy (fedavg with no keys but --set), as the issue's are.
The King James Bible is prepared once as the issue says (python/prepare.py --vocab-size 5000 --min-count 5,
dim 32, the test windows held out of the training text) into DIR/data; every job then runs with the prepared
cfg.json (bpe 200, bs 1024, the model's own lr 0.1), --set target=T (default 2.0), one shared pipeline,
fixed_batch_order (so the counts of learners with a copy of the weights each are deterministic: they hold on any
machine, however oversubscribed; learners that share a host's weights depend on the timing of their steps), the
strategy's keys and the --set overrides. A count is taken where the job stopped at the target (a round's end),
as the job's final line gives it; "-" where it stopped at a limit.

Strategies are names of STRATEGIES below (a strategy with its keys); "name:key=value+key=value" adds keys, so
designs can be compared without editing this file, e.g. "add:add_power=0.5+add_bpe=2".

--text8 adds, for each run, the same job on the text8 prefix (bench/corpus.py, vocabulary 10000) in 5 epochs,
dim 100, and prints its WordSim353 rho and final test loss (quality at equal total data).

--text8-target T adds, for each run, the windows each learner trains on the text8 prefix (dim 100, the same
prepared data as --text8) until the test loss reaches T, and the speedup against one learner of the default
strategy there (at most --text8-epochs epochs).

Every job runs once per seed of --seeds (default 1,2,3,4,5; the cfg's `seed`: the initial weights, the noise
words, the Filter's drops and the Batcher's shuffle), and a cell gives the median count, with each seed's rounds:
at a target where the test loss flattens out, one run's count moves by whole rounds with the seed, one learner's
as well. --seeds 1 makes one run of each.

--wall (the default on a machine with 16 cores or more) adds wall-clock columns: the job's seconds of training to
the target (the median run's, the job's own `seconds`) and its speedup against one learner's; and, on one host,
gensim (Word2Vec CBOW, the jobs' dim, window 2, 5 negatives, subsampling 1e-3, the prepared vocabulary) with as
many worker threads as the job has learners: its seconds to train the data one learner needed to reach the
target (that learner's epochs times gensim's best of two one-epoch passes), and its speedup against one worker,
measured in the same run. On fewer cores than learners neither speedup means much.

--hosts 1,2,4 runs each learner count on that many emulated hosts too (scripts/emulate_hosts.sh: network
namespaces, so it needs root), the learners split evenly, the Dispatcher and the pipeline on the first host.

Usage: /usr/bin/python3 bench/learner_speedup.py [--learners 1,2,4,8] [--hosts 1,2,4]
           [--strategies fedavg,add,diloco,hogwild] [--target 2.0] [--set key=value ...] [--dir DIR]
           [--time-limit 900] [--text8] [--text8-target T] [--text8-epochs 10] [--seeds 1,2,3,4,5] [--wall]
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import corpus  # noqa: E402
import gensim_cbow  # noqa: E402
import jobs  # noqa: E402

# Name -> cfg.json keys. fedavg is the default strategy (a host's learners share its weights, the hosts' changes
# are added) and is run with no keys of its own.
STRATEGIES = {
    "fedavg": {},
    "add": {"combine": "add"},  # fedavg, adding the changes of the exchange's members
    "average": {"combine": "average"},  # fedavg, averaging them
    "diloco": {"strategy": "diloco"},
    "hogwild": {"strategy": "hogwild"},
    "bsp": {"strategy": "bsp"},
    "easgd": {"strategy": "easgd"},
}
EMULATE = jobs.EMULATE_HOSTS
PREFIX = "fedavgs"  # the emulated hosts' names: fedavgs-h0, ...


def parse_args(argv):
    p = argparse.ArgumentParser(prog="learner_speedup", description=__doc__.split("\n\n")[0])
    p.add_argument("--learners", type=jobs.comma_list(int), default=[1, 2, 4, 8])
    p.add_argument("--strategies", type=jobs.comma_list(str), default=["fedavg", "add", "diloco", "hogwild"])
    p.add_argument("--target", type=float, default=2.0)
    p.add_argument("--hosts", type=jobs.comma_list(int), default=[1],
                   help="emulated host counts (scripts/emulate_hosts.sh, needs root); the learners are split "
                   "evenly, a count that does not divide them is skipped")
    p.add_argument("--set", type=jobs.parse_set, action="append", default=[], metavar="KEY=VALUE",
                   help="cfg.json override for every run (repeatable)")
    p.add_argument("--dir", type=Path, default=Path("/tmp/fedavg_learner_speedup"), help="data and runs (reused)")
    p.add_argument("--time-limit", type=float, default=900, help="max_seconds of every job")
    p.add_argument("--text8", action="store_true", help="also WordSim353 rho on the text8 prefix")
    p.add_argument("--text8-target", type=float, default=None,
                   help="also the windows per learner to this test loss on the text8 prefix")
    p.add_argument("--text8-epochs", type=int, default=10, help="the text8 target runs' epoch limit")
    p.add_argument("--seeds", type=jobs.comma_list(int), default=[1, 2, 3, 4, 5],
                   help="run every job once per seed and give the median")
    p.add_argument("--wall", action="store_true", default=(os.cpu_count() or 1) >= 16,
                   help="wall time to the target, and gensim with as many threads (default: on 16 cores or more)")
    p.add_argument("--fresh", action="store_true", help="run again where a finished run exists")
    args = p.parse_args(argv)
    if not args.seeds:
        p.error("--seeds must name at least one seed")
    if not args.learners or min(args.learners) < 1:
        p.error("--learners must be positive integers")
    return args


def strategy_keys(spec):
    """cfg.json keys of "name" or "name:key=value+key=value"."""
    name, _, extra = spec.partition(":")
    if name not in STRATEGIES:
        sys.exit(f"learner_speedup: unknown strategy {name!r} (known: {', '.join(STRATEGIES)})")
    keys = dict(STRATEGIES[name])
    keys.update(jobs.parse_set(item) for item in extra.split("+") if item)
    return keys


def prepare(data_dir, name, text, vocab_size, extra=()):
    """data_dir/{corpus.txt, train.txt, config/}, made once."""
    stamp = data_dir / "prepared"
    if stamp.exists():
        return
    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir(parents=True)
    (data_dir / "corpus.txt").write_text(text, encoding="utf-8")
    cmd = [jobs.PYTHON, str(jobs.ROOT / "python" / "prepare.py"), str(data_dir / "corpus.txt"),
           "--out", str(data_dir / "config"), "--train-out", str(data_dir / "train.txt"), "--data-name", name,
           "--vocab-size", str(vocab_size), "--min-count", "5", "--dim", "32", *extra]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    stamp.write_text("ok\n")


def launcher(learners, hosts):
    """mpiexec and its options for 4 + learners ranks on `hosts` emulated hosts: the Dispatcher and the pipeline
    on the first, with its share of the learners; the learners split evenly."""
    if hosts <= 1:
        return [jobs.MPIEXEC, "-n", str(4 + learners)]
    each = learners // hosts
    return jobs.emulated_mpiexec(PREFIX, [each + (4 if h == 0 else 0) for h in range(hosts)])


def run_job(run_dir, data_dir, learners, keys, time_limit, fresh, hosts=1):
    """Runs the job in run_dir unless an identical finished one is there (jobs.run_in); returns its final stats,
    or {"error": the job's reason} where it failed."""
    cfg = json.loads((data_dir / "config" / "cfg.json").read_text())
    cfg.update({"fixed_batch_order": True, "max_rounds": 100000, "max_seconds": time_limit, **keys})
    cmd = launcher(learners, hosts) + [str(jobs.APP), "--config", str(run_dir / "config"),
                                       "--out", str(run_dir), str(data_dir / "train.txt")]
    # A rebuilt binary or an edited python/ file runs again.
    sources = max(f.stat().st_mtime for f in (HERE.parent / "python").rglob("*.py"))
    spec = {"cfg": cfg, "command": cmd, "binary": jobs.APP.stat().st_mtime, "python": sources}
    rc, _ = jobs.run_in(run_dir, data_dir / "config", cfg, cmd, spec, time_limit, fresh)
    stats_path = run_dir / f"{cfg['data_name']}_stats.txt"
    if rc != 0 or not stats_path.exists():
        return {"error": jobs.error_line(run_dir) or f"exit status {rc}"}
    return jobs.read_stats(stats_path)


def windows_to_target(stats):
    if stats.get("stopped") != "target":
        return None
    return stats.get("windows_per_learner")


def over_seeds(args, run):
    """run(keys, suffix) -> stats, once per seed of --seeds: (median
    windows per learner to the target, None if it is a run that did not reach it; the median run's stats; each
    run's rounds, "-" where it did not reach the target)."""
    results = []
    for seed in args.seeds:
        stats = run({"seed": seed}, f"_s{seed}")
        count = windows_to_target(stats)
        results.append((math.inf if count is None else count, stats))
    results.sort(key=lambda r: r[0])
    count, stats = results[(len(results) - 1) // 2]  # the lower median: a count some run really took
    rounds = "/".join(f"{r[1].get('rounds', 0):.0f}" if r[0] < math.inf else "-" for r in results)
    return (None if count == math.inf else count), stats, rounds


def run_name(spec, learners, hosts=1):
    """The folder name of a job: the strategy spec, the learners and (several) the hosts."""
    return f"{spec.replace(':', '_').replace('+', '_')}_L{learners}" + (f"_H{hosts}" if hosts > 1 else "")


def text8_data(args):
    """The text8 prefix prepared at dim 100, vocabulary 10000 (once)."""
    data_dir = args.dir / "text8"
    prepare(data_dir, "text8", corpus.read_corpus("text8"), 10000, ["--dim", "100"])
    return data_dir


def text8_windows(args, spec, learners, hosts=1):
    """Windows per learner until the test loss reaches --text8-target on the text8 prefix (None: not reached),
    the median over --seeds."""
    keys = {**strategy_keys(spec), **dict(args.set), "target": args.text8_target, "max_epochs": args.text8_epochs}
    name = run_name(spec, learners, hosts)
    data_dir = text8_data(args)
    return over_seeds(args, lambda seed, suffix: run_job(args.dir / "runs_text8_target" / (name + suffix), data_dir,
                                                         learners, {**keys, **seed}, args.time_limit, args.fresh,
                                                         hosts))[0]


def text8_quality(args, spec, learners):
    """(WordSim353 rho, final test loss) after 5 epochs of the text8 prefix at dim 100 (python/evaluate.py on the
    embeddings the job wrote)."""
    data_dir = text8_data(args)
    keys = {**strategy_keys(spec), **dict(args.set), "target": 0, "max_epochs": 5}
    run_dir = args.dir / "runs_text8" / run_name(spec, learners)
    stats = run_job(run_dir, data_dir, learners, keys, args.time_limit, args.fresh)
    if "error" in stats:
        return None, None
    done = subprocess.run([jobs.PYTHON, str(jobs.ROOT / "python" / "evaluate.py"),
                           str(run_dir / "text8_embeddings.txt"), "--vocab", str(data_dir / "config" / "vocab.txt"),
                           "--similarity", str(corpus.WORDSIM), "--json"], capture_output=True, text=True)
    if done.returncode != 0:
        return None, stats.get("final_loss")
    similarity = json.loads(done.stdout).get("similarity") or {}
    return similarity.get("rho"), stats.get("final_loss")


def gensim_peer(data_dir, dim):
    """gensim on a prepared corpus (its training text, its vocabulary), as the jobs train it."""
    words = [line.split()[0] for line in (data_dir / "config" / "vocab.txt").read_text(encoding="utf-8")
             .splitlines() if line.strip()]
    ids = corpus.token_lines((data_dir / "train.txt").read_text(encoding="utf-8"), words)
    return gensim_cbow.EpochSeconds(corpus.gensim_sentences(ids, words), dim)


def wall_columns(stats, reference, learners, hosts, gensim, epochs):
    """The --wall columns of one row: seconds to the target, speedup, gensim's seconds with `learners` threads for
    one learner's `epochs`, its speedup against one thread."""
    seconds = stats.get("seconds") if stats.get("stopped") == "target" else None
    ours = ["-" if seconds is None else f"{seconds:.2f}",
            f"{reference / seconds:.2f}x" if seconds and reference else "-"]
    if hosts > 1 or not epochs:
        return ours + ["-", "-"]
    theirs = gensim.epoch_seconds(learners) * epochs
    return ours + [f"{theirs:.2f}", f"{gensim.epoch_seconds(1) * epochs / theirs:.2f}x"]


def fmt_count(value):
    return "-" if value is None else f"{value:,.0f}"


def main(argv=None):
    args = parse_args(argv)
    args.dir = args.dir.resolve()
    prepare(args.dir / "kjv", "kjv", jobs.bible_corpus().read_text(encoding="utf-8"), 5000)
    header = ["strategy", "learners", "hosts", "windows per learner to target", "speedup", "final test loss",
              f"rounds (seeds {','.join(map(str, args.seeds))})"]
    if args.text8:
        header += ["text8 WordSim353 rho", "text8 test loss"]
    if args.text8_target is not None:
        header += [f"text8 windows per learner to {args.text8_target:g}", "text8 speedup"]
    if args.wall:
        header += ["seconds to target", "wall speedup", "gensim, as many threads: seconds for one learner's data",
                   "gensim speedup"]
    rows = []
    # The reference: one learner of the default strategy (fedavg, no keys but --set).
    reference, reference_stats, _ = over_seeds(args, lambda seed, suffix: run_job(
        args.dir / "runs" / f"fedavg_L1{suffix}", args.dir / "kjv", 1,
        {**dict(args.set), "target": args.target, **seed}, args.time_limit, args.fresh))
    if args.wall:
        dim = json.loads((args.dir / "kjv" / "config" / "cfg.json").read_text())["dim"]
        gensim = gensim_peer(args.dir / "kjv", dim)
        epochs = reference_stats.get("epochs") if reference else None
        reference_seconds = reference_stats.get("seconds") if reference else None
    text8_reference = text8_windows(args, "fedavg", 1) if args.text8_target is not None else None
    emulated = max(args.hosts) > 1
    if emulated:
        subprocess.run(["bash", str(EMULATE), "up", str(max(args.hosts)), PREFIX], check=True)
    try:
        for spec in args.strategies:
            for hosts in args.hosts:
                for learners in args.learners:
                    if learners % hosts or learners < hosts:
                        continue
                    keys = {**strategy_keys(spec), **dict(args.set), "target": args.target}
                    name = run_name(spec, learners, hosts)
                    count, stats, rounds = over_seeds(args, lambda seed, suffix: run_job(
                        args.dir / "runs" / (name + suffix), args.dir / "kjv", learners, {**keys, **seed},
                        args.time_limit, args.fresh, hosts))
                    speedup = f"{reference / count:.2f}x" if count and reference else "-"
                    row = [spec, learners, hosts, fmt_count(count), speedup,
                           stats.get("error") or f"{stats.get('final_loss', float('nan')):.4f}", rounds]
                    if args.text8:
                        rho, loss = (None, None) if hosts > 1 else text8_quality(args, spec, learners)
                        row += ["-" if rho is None else f"{rho:.3f}", "-" if loss is None else f"{loss:.4f}"]
                    if args.text8_target is not None:
                        count = text8_windows(args, spec, learners, hosts)
                        row += [fmt_count(count),
                                f"{text8_reference / count:.2f}x" if count and text8_reference else "-"]
                    if args.wall:
                        row += wall_columns(stats, reference_seconds, learners, hosts, gensim, epochs)
                    rows.append(row)
                    print(" | ".join(str(c) for c in row), flush=True)
    finally:
        if emulated:
            subprocess.run(["bash", str(EMULATE), "down", PREFIX], check=False)
    print()
    print(jobs.table(rows, header))


if __name__ == "__main__":
    main()
