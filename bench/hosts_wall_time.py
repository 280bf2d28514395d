#!/usr/bin/env python3
"""Wall time to a test-loss target across emulated hosts on capped links, against one host with the same learners.

Hosts are network namespaces of this machine (scripts/emulate_hosts.sh), so every layout shares the same cores and
a gap between them is the cost of the exchange and of the rounds it asks for. Each host's link is capped both ways
by a tbf qdisc (`emulate_hosts.sh limit RATE`). For every seed, in one pass, it runs one host of L learners, then
for every link H hosts of L/H learners each (the Dispatcher and the pipeline on the first), all with the same
config and a test-loss target, and prints per layout the medians over the seeds of:

  to target (s)     training seconds until the test loss first reached the target (the metrics' seconds)
  job (s)           the job's wall time from launch to exit (it stops at the target)
  vs one host       to target, over the one-host run of the same seed
  windows/s         windows trained per second by the whole job
  exchange          the share of training time the rounds' weight exchange took (the metrics' sync_seconds)
  link MB/s         bytes the hosts sent on their links per second of the job
  windows/learner   windows per learner to the target
  batches/round     batches per learner per round, in the run's last rounds
  MiB/host          peak memory of the first host (the Dispatcher, the pipeline and its learners) / of the
                    largest other host (learners only): the proportional set size (Pss) of its ranks summed, so
                    the pages they share (the host's shared weights, the libraries) count once; sampled every 0.5 s
  crossing          seconds and windows per learner where the test loss crossed the target, interpolated
                    linearly between the round before and the round that reached it: a layout with long rounds
                    reaches the target within a round but reports it at the round's end, so this compares
                    designs apart from their round lengths (an estimate: the loss between two rounds is not
                    measured)
  trained through   the share of the windows the hosts' learners trained while their leader exchanged
                    (overlap: the metrics' through_windows); the "exchange" share is then not time they wait
  learners idle     the share of training time the learners spent not training (the metrics' idle_seconds, the
                    learners' mean): the exchange, and the waits for it and for the next round, as they cost the
                    learners ("-" for a build before that column)

A job that fails (a design whose weights diverge, say) does not stop the bench: its reason is printed, and its
layout's row gives the medians of the seeds that finished, its label naming the seeds that failed ("-" where none
finished). A finished job's checkpoint, embeddings and token cache are removed once its figures are read.

--old-app runs the one-host layout with another build as well (e.g. a `git worktree` of an older commit), in the
same pass. --hosts-set KEY=VALUE sets a cfg.json key for the runs across hosts alone, so that a design for the
hosts is measured against one host with its defaults in the same pass. The corpus is the text8 prefix in lines
of 1000 words (or --corpus FILE), prepared once by python/prepare.py with the vocabulary and dim given.

Where the MPI is Open MPI, FEDAVG_MPIEXEC=$PWD/scripts/mpiexec_openmpi.sh runs the same layouts.

Usage: /usr/bin/python3 bench/hosts_wall_time.py [--out DIR] [--learners 8] [--hosts 2,4] [--links 1gbit,100mbit]
           [--seeds 1,2,3] [--vocab-size 30000] [--min-count 3] [--dim 300] [--target 2.1] [--time-limit 200]
           [--set KEY=VALUE ...] [--hosts-set KEY=VALUE ...] [--old-app PATH] [--corpus FILE]   (needs root)
"""

import argparse
import csv
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus  # noqa: E402
import jobs  # noqa: E402

PREFIX = "fedavgb"
PIPELINE_RANKS = 4  # the Dispatcher and one pipeline's Tokenizer, Filter and Batcher
HEAD = ["layout", "to target (s)", "job (s)", "vs one host", "windows/s", "exchange", "link MB/s", "windows/learner",
        "batches/round", "MiB/host", "crossing", "trained through", "learners idle"]


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path,
                    help="work folder: the prepared config, every run's metrics and logs (default: a temporary one)")
    ap.add_argument("--learners", type=int, default=8)
    ap.add_argument("--hosts", type=jobs.comma_list(int), default=[2, 4], help="host counts besides one")
    ap.add_argument("--links", type=jobs.comma_list(str), default=["1gbit", "100mbit"],
                    help="tc rates of each host's link (none: no cap)")
    ap.add_argument("--seeds", type=jobs.comma_list(int), default=[1, 2, 3])
    ap.add_argument("--vocab-size", type=int, default=30000)
    ap.add_argument("--min-count", type=int, default=3)
    ap.add_argument("--dim", type=int, default=300)
    ap.add_argument("--target", type=float, default=2.1)
    ap.add_argument("--time-limit", type=float, default=200.0, help="max_seconds of every run")
    ap.add_argument("--set", type=jobs.parse_set, action="append", default=[], metavar="KEY=VALUE",
                    help="a cfg.json key for every run (value parsed as JSON)")
    ap.add_argument("--hosts-set", type=jobs.parse_set, action="append", default=[], metavar="KEY=VALUE",
                    help="a cfg.json key for the runs across hosts alone, after --set (a design for the hosts "
                         "against the one host's defaults)")
    ap.add_argument("--old-app", type=Path, help="another build's fedavg_mpi, run on one host beside this one")
    ap.add_argument("--corpus", type=Path, help="a text file instead of the text8 prefix")
    args = ap.parse_args(argv)
    for h in args.hosts:
        if h < 2 or args.learners % h:
            ap.error(f"--hosts {h}: needs at least 2 hosts that divide --learners {args.learners}")
    return args


def prepare(args):
    """The prepared config folder and the training text, made once in args.out."""
    data = args.out / "data"
    train = data / "train.txt"
    if not (data / "config" / "cfg.json").exists():
        data.mkdir(parents=True, exist_ok=True)
        text = data / "corpus.txt"
        text.write_text(args.corpus.read_text(encoding="utf-8") if args.corpus else corpus.read_corpus("text8"))
        cmd = [jobs.PYTHON, str(jobs.ROOT / "python" / "prepare.py"), str(text), "--out", str(data / "config"),
               "--train-out", str(train), "--vocab-size", str(args.vocab_size), "--min-count", str(args.min_count),
               "--dim", str(args.dim), "--epoch", "0", "--target", str(args.target), "--data-name", "bench"]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"prepare.py failed: {done.stderr.strip().splitlines()[-1]}")
    return data / "config", train


def layout(learners, hosts):
    """Ranks per emulated host: the Dispatcher, the pipeline and learners/hosts learners on the first."""
    per = learners // hosts
    return [PIPELINE_RANKS + per] + [per] * (hosts - 1)


def link_bytes():
    out = subprocess.run(["bash", str(jobs.EMULATE_HOSTS), "bytes", PREFIX], capture_output=True, text=True,
                         check=True).stdout
    return sum(int(f[1]) for f in (line.split() for line in out.splitlines()))


def hosts_up(n, rate):
    subprocess.run(["bash", str(jobs.EMULATE_HOSTS), "down", PREFIX], capture_output=True)
    subprocess.run(["bash", str(jobs.EMULATE_HOSTS), "up", str(n), PREFIX], check=True, capture_output=True)
    subprocess.run(["bash", str(jobs.EMULATE_HOSTS), "limit", rate, PREFIX], check=True, capture_output=True)


class HostMemory:
    """Samples, while a job runs, the memory of each emulated host: the Pss of its ranks summed
    (/proc/PID/smaps_rollup). `tag`: the job's FEDAVG_BENCH_TAG; `ranks_per_host`: the layout, ranks in order."""

    def __init__(self, tag, ranks_per_host, every=0.5):
        self.tag, self.every = tag, every
        self.host_of = [h for h, n in enumerate(ranks_per_host) for _ in range(n)]
        self.peak = [0.0] * len(ranks_per_host)  # MiB, the largest sum seen
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _sample(self):
        pids = {}
        while not self._stop.wait(self.every):
            if len(pids) < len(self.host_of):
                pids = jobs.find_tagged(self.tag)
            sums = [0.0] * len(self.peak)
            for rank, pid in pids.items():
                try:
                    rollup = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
                except OSError:  # the rank has ended
                    continue
                pss = next((int(line.split()[1]) for line in rollup if line.startswith("Pss:")), 0)
                sums[self.host_of[rank]] += pss / 1024
            self.peak = [max(p, m) for p, m in zip(self.peak, sums)]


def crossing(rows, target):
    """(seconds, windows per learner) where the test loss crossed `target`, interpolated linearly between the
    last round above it and the first at or below it; (nan, nan) where no round reached it."""
    for before, after in zip(rows, rows[1:]):
        above, below = float(before["test_loss"]), float(after["test_loss"])
        if below <= target < above:
            part = (above - target) / (above - below)
            return tuple(float(before[k]) + part * (float(after[k]) - float(before[k]))
                         for k in ("seconds", "windows_per_learner"))
    return float("nan"), float("nan")


def figures(rows, target, learners, wall, sent, bs):
    """The printed figures of one finished run from its metrics rows."""
    last = rows[-1]
    seconds = float(last["seconds"])
    reached = next((r for r in rows[1:] if float(r["test_loss"]) <= target), None)
    cross_s, cross_windows = crossing(rows, target)
    rounds = rows[1:]
    per_round = [(float(b["windows_per_learner"]) - float(a["windows_per_learner"])) for a, b in zip(rows, rows[1:])]
    tail_windows = per_round[len(per_round) // 2:] or per_round
    return {
        "to_target": float(reached["seconds"]) if reached else float("nan"),
        "job": wall,
        "windows_s": float(last["windows_per_learner"]) * learners / seconds if seconds > 0 else float("nan"),
        "exchange": sum(float(r["sync_seconds"]) for r in rounds) / seconds if seconds > 0 else float("nan"),
        "link_mb_s": sent / wall / 1e6,
        "windows_learner": float(reached["windows_per_learner"]) if reached else float("nan"),
        "batches_round": statistics.median(tail_windows) / bs if tail_windows else float("nan"),
        "cross_s": cross_s,
        "cross_windows": cross_windows,
        "last_loss": float(last["test_loss"]),
        # The metrics of a build before through_windows have no such column, or (resumed) rows with it empty.
        "through": (sum(float(r.get("through_windows") or 0) for r in rounds) / float(last["windows_per_learner"])
                    if float(last["windows_per_learner"]) > 0 else float("nan")),
        "idle": (sum(float(r.get("idle_seconds") or 0) for r in rounds) / seconds
                 if seconds > 0 and "idle_seconds" in last else float("nan")),
    }


def job_config(args, prepared, hosts, seed):
    """The cfg.json of one job: the prepared one, the bench's keys, --set, and --hosts-set across hosts."""
    cfg = {**prepared, "target": args.target, "max_seconds": args.time_limit, "max_rounds": 0, "seed": seed,
           "progress_seconds": 5}
    cfg.update(dict(args.set))
    if hosts > 1:
        cfg.update(dict(args.hosts_set))
    return cfg


def run(args, app, name, hosts, rate, seed, config, train):
    """One job on `hosts` emulated hosts with links capped at `rate`: its figures, or {"error": its reason} where
    the job failed (a design that diverges, say)."""
    run_dir = args.out / "runs" / name
    cfg = job_config(args, json.loads((config / "cfg.json").read_text()), hosts, seed)
    hosts_up(max(hosts, 1), rate)
    try:
        before = link_bytes()
        ranks = layout(args.learners, hosts) if hosts > 1 else [PIPELINE_RANKS + args.learners]
        cmd = jobs.emulated_mpiexec(PREFIX, ranks)
        cmd += [str(app), "--config", str(run_dir / "config"), "--out", str(run_dir / "out"), str(train)]
        tag = f"{os.getpid()}-{name}"
        start = time.monotonic()
        with HostMemory(tag, ranks) as memory:
            rc, _ = jobs.run_in(run_dir, config, cfg, cmd, {"cfg": cfg, "cmd": cmd}, args.time_limit, fresh=True,
                                env={"FEDAVG_BENCH_TAG": tag})
        wall = time.monotonic() - start
        sent = link_bytes() - before
    finally:
        subprocess.run(["bash", str(jobs.EMULATE_HOSTS), "down", PREFIX], capture_output=True)
    if rc != 0:
        return {"error": f"{name} failed ({rc}): {jobs.error_line(run_dir)}"}
    with open(run_dir / "out" / "bench_metrics.csv") as f:
        rows = list(csv.DictReader(f))
    drop_weights(run_dir / "out")
    return {**figures(rows, args.target, args.learners, wall, sent, int(cfg["bs"])), "host_mib": memory.peak[0],
            "other_mib": max(memory.peak[1:], default=float("nan"))}


def drop_weights(out):
    """Removes what a finished job wrote that the bench does not read (its checkpoint, embeddings and token cache:
    hundreds of MB a job at these sizes), keeping its metrics, statistics and logs."""
    shutil.rmtree(out / "cache", ignore_errors=True)
    for pattern in ("*.h5", "*.w2v.*", "*_embeddings.txt"):
        for path in out.glob(pattern):
            path.unlink()


def memory_cell(med):
    """"first host / largest other" in MiB, or the first host's alone where there is no other."""
    first = f"{med['host_mib']:.0f}"
    return first if math.isnan(med["other_mib"]) else f"{first} / {med['other_mib']:.0f}"


def main(argv=None):
    args = parse_args(argv)
    if os.geteuid() != 0:
        print("hosts_wall_time: not measured: emulating hosts needs root")
        return
    with tempfile.TemporaryDirectory(prefix="hosts_wall_time.") as tmp:
        if args.out is None:
            args.out = Path(tmp)
        args.out.mkdir(parents=True, exist_ok=True)
        measure(args)


def layout_row(label, runs, one, failed):
    """The table row of one layout: the medians of its finished runs (runs: {seed: figures}), its time against
    the one-host run of the same seed (one: {seed: seconds to target}), and the seeds whose job failed."""
    if failed:
        label += f" (failed: seed{'s' if len(failed) > 1 else ''} {','.join(map(str, failed))})"
    if not runs:
        return [label] + ["-"] * (len(HEAD) - 1)
    ratios = [f["to_target"] / one[s] for s, f in runs.items() if s in one]
    med = {k: statistics.median(f[k] for f in runs.values()) for k in next(iter(runs.values()))}
    return [label, f"{med['to_target']:.1f}", f"{med['job']:.1f}",
            f"{statistics.median(ratios):.2f}" if ratios else "-", f"{med['windows_s']:.0f}",
            f"{100 * med['exchange']:.0f} %", f"{med['link_mb_s']:.1f}", f"{med['windows_learner']:.0f}",
            f"{med['batches_round']:.1f}", memory_cell(med), f"{med['cross_s']:.1f} s, {med['cross_windows']:.0f}",
            f"{100 * med['through']:.0f} %", "-" if math.isnan(med["idle"]) else f"{100 * med['idle']:.0f} %"]


def measure(args):
    config, train = prepare(args)
    apps = [("one host", jobs.APP)] + ([("one host, old build", args.old_app)] if args.old_app else [])
    layouts = [(label, app, 1, "none") for label, app in apps]
    layouts += [(f"{h} hosts, {rate}", jobs.APP, h, rate) for rate in args.links for h in args.hosts]
    results = {label: {} for label, *_ in layouts}
    failed = {label: [] for label, *_ in layouts}
    for seed in args.seeds:
        for label, app, hosts, rate in layouts:
            name = f"{label.replace(' ', '_').replace(',', '')}_s{seed}"
            f = run(args, app, name, hosts, rate, seed, config, train)
            if "error" in f:
                failed[label].append(seed)
                print(f"{label} seed {seed}: {f['error']}", file=sys.stderr, flush=True)
                continue
            results[label][seed] = f
            print(f"{label} seed {seed}: to target {f['to_target']:.1f} s, job {f['job']:.1f} s, "
                  f"{f['windows_s']:.0f} windows/s, exchange {100 * f['exchange']:.0f} %, "
                  f"batches/round {f['batches_round']:.1f}, MiB/host {f['host_mib']:.0f} / {f['other_mib']:.0f}, "
                  f"last test loss {f['last_loss']:.3f}, crossing {f['cross_s']:.1f} s {f['cross_windows']:.0f}",
                  file=sys.stderr, flush=True)
    one = {s: f["to_target"] for s, f in results["one host"].items()}
    table = [layout_row(label, results[label], one, failed[label]) for label, *_ in layouts]
    print(f"### {args.learners} learners on one host and across emulated hosts, text8 prefix, vocabulary "
          f"{args.vocab_size} (min count {args.min_count}), dim {args.dim}, test loss {args.target:g}; medians of "
          f"seeds {','.join(map(str, args.seeds))} (nan: not reached)\n")
    print(jobs.table(table, HEAD))
    print("\nThe hosts are network namespaces of this machine, so every layout trains on the same cores; each "
          "host's link is capped both ways by a tbf qdisc. \"to target\" is training time (the metrics' seconds), "
          "\"job\" the job's wall time from launch to exit. A run reaches the target within a round and reports it "
          "at the round's end; \"crossing\" interpolates where the test loss crossed it. A layout whose job failed "
          "for a seed (its reason is printed above) gives the medians of its other seeds; \"-\" where none finished.")


if __name__ == "__main__":
    main()
