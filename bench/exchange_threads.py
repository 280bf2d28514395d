#!/usr/bin/env python3
"""The sparse exchange's work on rows shared among threads (exchange_threads), on the host it runs on.

On the text8 prefix at every word of its vocabulary (as bench/vocab_exchange.py: about 81k words x 300, 2 learners,
the same windows in every run), it runs the dense exchange, then the top 20 % of the rows in float16 on one thread
per rank and on the default share of the host's cores (its cores divided by the members of the exchange: the
learners and the Dispatcher), and prints per round: the time, the exchange's time and share of it, the bytes moved
and the test loss after the same windows. On a machine with as many cores as the exchange has members, the default
is one thread and the two sparse rows measure the same thing.

    /usr/bin/python3 bench/exchange_threads.py [--rounds 12] [--workdir DIR] [--set KEY=VALUE ...]

--set adds a cfg.json setting to every run (e.g. device=cpu, where torch sees a GPU and the learner step would
otherwise run on it).
"""

import argparse
import os
import sys
import tempfile
from pathlib import Path

import jobs

sys.path.insert(0, str(Path(__file__).resolve().parent))
import vocab_exchange  # noqa: E402

LEARNERS = 2


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--workdir", help="keep the prepared corpus and the runs here (default: a temporary folder)")
    ap.add_argument("--set", type=jobs.parse_set, action="append", default=[], metavar="KEY=VALUE")
    args = ap.parse_args()
    cores = len(os.sched_getaffinity(0))
    auto = max(1, cores // (LEARNERS + 1))
    top = vocab_exchange.SETTINGS["sparse, top 20 % float16, touched"]
    runs = [("dense", "-", {**vocab_exchange.SETTINGS["dense"]}),
            ("sparse, top 20 % float16, touched", "1", {**top, "exchange_threads": 1}),
            ("sparse, top 20 % float16, touched", f"{auto} (default)", {**top, "exchange_threads": 0})]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(args.workdir or tmp)
        tmp.mkdir(parents=True, exist_ok=True)
        cfg_dir, train = vocab_exchange.prepare(tmp)
        words = sum(1 for _ in open(cfg_dir / "vocab.txt"))
        rows = []
        dense = None
        for name, threads, settings in runs:
            r = vocab_exchange.run(tmp, f"threads {name} {threads.split()[0]}", cfg_dir, train, LEARNERS,
                                   max_rounds=args.rounds, **dict(args.set), **settings)
            dense = dense or r
            rows.append([name, threads, f"{r['round']:.2f} s", f"{r['sync'] * 1e3:.0f} ms",
                         f"{100 * r['sync'] / r['round']:.1f} %", f"{r['bytes'] / 1e6:.0f} MB",
                         f"{dense['bytes'] / r['bytes']:.1f}x", f"{r['loss']:.4f}",
                         f"{100 * (r['loss'] / dense['loss'] - 1):+.2f} %"])
    extra = "".join(f", {k}={v}" for k, v in args.set)
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), "?")
    print(f"### {words} words x 300, {LEARNERS} learners, {args.rounds} rounds of the same windows, {cores} cores "
          f"({cpu}){extra}\n")
    print(jobs.table(rows, ["exchange", "threads per rank", "round", "exchange time", "exchange share",
                            "bytes per round", "fewer than dense", "test loss", "loss against dense"]))


if __name__ == "__main__":
    main()
