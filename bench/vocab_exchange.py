#!/usr/bin/env python3
"""The weight exchange at a large vocabulary: dense against sparse, and as learners grow.

On the text8 prefix with every word of the vocabulary (prepare.py --vocab-size 100000 --min-count 1 --dim 300:
about 71k words, two 71k x 300 tables), it runs the same rounds (fixed_batch_order: every setting trains on the
same windows) with the dense exchange, the exact sparse exchange (both weightings), the defaults (every changed row
in float16) and the top 20 % of the rows in float16 (both weightings), and prints per round: the time, the
exchange's share of it (sync_seconds; no checkpoints, which would add the same to every round), the bytes moved and
the Dispatcher's inbound bytes, and the test loss after the same windows. Then dense, the sparse defaults and the
top 20 % for each of fedavg, bsp, bmuf and diloco. Then dense, the sparse defaults and the top 20 % at smaller
vocabularies of the same text (--smaller-words, default 15,000 and 30,000 words). Then, with 2, 4 and 8 learners
(oversubscribed on a small machine: the exchange time, not the round time, is the figure), the Dispatcher's inbound
bytes and exchange time per round: fedavg dense and sparse, and bsp's ring (dense).
Then a checkpoint every round, written between rounds
or in the background (checkpoint_background), with 1 and 2 learners. Last, as root, the same rounds on three
emulated hosts (network namespaces, TCP between them; the Dispatcher and the pipeline on one, a learner on each of
the others), on uncapped links and on links capped at --link (default 1 Gbit/s): dense against sparse, and fedavg's
tree against bsp's ring; and two learners on each learner host, on capped links. Then the same at a larger
vocabulary (--larger-words, default 300,000 made-up words of letters with Zipf frequencies, 20 M tokens written
with bench/large_corpus.py's sampler), where a round touches a smaller part of it. Last, one learner at about a
million words (--million-words made-up words sampled into 20 M tokens; those that occur are the vocabulary):
the final flush's one message, the time to write the outputs and each rank's peak memory.

    /usr/bin/python3 bench/vocab_exchange.py [--rounds 12] [--learners 2 4 8] [--only TABLE] [--workdir DIR]
        [--link 1gbit] [--smaller-words 15000 30000] [--larger-words 300000] [--million-words 1000000]
"""

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import jobs

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus  # noqa: E402
import multihost  # noqa: E402
import large_corpus  # noqa: E402

EXACT = {"exchange": "sparse", "sparse_rows": 1, "sparse_values": "float32"}
SETTINGS = {
    "dense": {"exchange": "dense"},
    "sparse, exact, windows": {**EXACT, "sparse_weighting": "windows"},
    "sparse, exact, touched": {**EXACT, "sparse_weighting": "touched"},
    "sparse (defaults: float16, touched)": {"exchange": "sparse"},
    "sparse, top 20 % float16, windows": {"exchange": "sparse", "sparse_rows": 0.2, "sparse_weighting": "windows"},
    "sparse, top 20 % float16, touched": {"exchange": "sparse", "sparse_rows": 0.2},
}


def prepare(tmp):
    if (tmp / "config" / "cfg.json").exists() and (tmp / "train.txt").exists():
        return tmp / "config", tmp / "train.txt"
    text = tmp / "text8.txt"
    text.write_text(corpus.read_corpus("text8"))
    cfg = tmp / "config"
    subprocess.run([*jobs.PREPARE, str(text), "--out", str(cfg),
                    "--train-out", str(tmp / "train.txt"), "--vocab-size", "100000", "--min-count", "1",
                    "--dim", "300", "--data-name", "text8"], check=True, capture_output=True, timeout=600)
    return cfg, tmp / "train.txt"


def prepare_smaller(tmp, words):
    """A config for the text8 prefix's `words` most frequent words (after prepare(), which writes the text)."""
    base = tmp / f"text8_{words}"
    cfg, train = base / "config", base / "train.txt"
    if (cfg / "cfg.json").exists() and train.exists():
        return cfg, train
    base.mkdir(parents=True, exist_ok=True)
    subprocess.run([*jobs.PREPARE, str(tmp / "text8.txt"), "--out", str(cfg),
                    "--train-out", str(train), "--vocab-size", str(words), "--min-count", "1", "--dim", "300",
                    "--data-name", "text8"], check=True, capture_output=True, timeout=600)
    return cfg, train


def made_up_words(n):
    """n distinct words of letters only ("za", "zb", ..., "zaa", ...), which the tokenizer keeps as they are."""
    words = []
    for k in range(1, n + 1):
        name = ""
        while k:
            k, r = divmod(k - 1, 26)
            name = chr(97 + r) + name
        words.append("z" + name)
    return words


def prepare_large(tmp, words, tokens):
    """A config for `words` made-up words sampled with Zipf frequencies (p ~ 1/rank), `tokens` tokens."""
    base = tmp / f"large_{words}"
    cfg, train = base / "config", base / "train.txt"
    if (cfg / "cfg.json").exists() and train.exists():
        return cfg, train
    base.mkdir(parents=True, exist_ok=True)
    text = base / "zipf.txt"
    large_corpus.write_corpus(text, tokens, made_up_words(words))
    subprocess.run([*jobs.PREPARE, str(text), "--out", str(cfg),
                    "--train-out", str(train), "--vocab-size", str(words), "--min-count", "1", "--dim", "300",
                    "--data-name", "large"], check=True, capture_output=True, timeout=1200)
    text.unlink()
    return cfg, train


def run(tmp, name, cfg_dir, train, learners, **settings):
    d = tmp / name.replace(" ", "_").replace(",", "").replace("%", "pc")
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir()
    cfg = json.loads((cfg_dir / "cfg.json").read_text())
    cfg.update({"target": 0.0, "fixed_batch_order": True, "progress_seconds": 0, "liveness_seconds": 120,
                "checkpoint_every": 1000,
                **settings})
    run_cfg = d / "config"
    subprocess.run(["cp", "-r", str(cfg_dir), str(run_cfg)], check=True)
    (run_cfg / "cfg.json").write_text(json.dumps(cfg, indent=2))
    rows, _, _ = jobs.run(4 + learners, [train], run_cfg, d / "out", timeout=900)
    stats = (d / "out" / f"{cfg['data_name']}_stats.txt").read_text().split()
    # Per round: without the final flush of the lossy settings (a full exchange after Stop).
    inbound = float(next(s for s in stats if s.startswith("inbound_bytes=")).split("=")[1]) - float(
        next(s for s in stats if s.startswith("flush_inbound_bytes=")).split("=")[1])
    # Round 1 follows the first broadcast of the full weights (every exchange starts dense): skip it.
    later = rows[2:]
    rounds = [float(b["seconds"]) - float(a["seconds"]) for a, b in zip(rows[1:], rows[2:])]
    sync = [float(r["sync_seconds"]) for r in later]
    moved = [float(b["sync_bytes"]) - float(a["sync_bytes"]) for a, b in zip(rows[1:], rows[2:])]
    return {"round": statistics.median(rounds), "sync": statistics.median(sync),
            "bytes": statistics.median(moved), "inbound": inbound / (len(rows) - 1),
            "loss": float(rows[-1]["test_loss"]), "windows": float(rows[-1]["windows_per_learner"])}


def run_hosts(tmp, name, cfg_dir, train, learners=(1, 1), **settings):
    """Round and exchange (median, rounds 2 on), and MB each host received per round, with the Dispatcher and the
    pipeline on one emulated host and `learners[i]` learners on host i + 1."""
    d = tmp / ("hosts_" + name)
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir()
    cfg = json.loads((cfg_dir / "cfg.json").read_text())
    cfg.update({"target": 0.0, "fixed_batch_order": True, "progress_seconds": 0, "liveness_seconds": 300,
                "checkpoint_every": 1000, **settings})
    run_cfg = d / "config"
    shutil.copytree(cfg_dir, run_cfg)
    (run_cfg / "cfg.json").write_text(json.dumps(cfg, indent=2))
    hosts = range(len(learners) + 1)
    before = [multihost.bytes_received(h) for h in hosts]
    cmd = jobs.emulated_mpiexec(multihost.PREFIX, (4, *learners)) + [
        str(jobs.APP), "--config", str(run_cfg), "--out", str(d / "out"), str(train)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1200,
                          env={**os.environ, "MPIEXEC_TIMEOUT": "1190"})
    if done.returncode != 0:
        raise RuntimeError(f"{name} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    with open(d / "out" / "text8_metrics.csv") as f:
        rows = list(csv.DictReader(f))
    received = [(multihost.bytes_received(h) - b) / (len(rows) - 1) / 1e6 for h, b in zip(hosts, before)]
    rounds = [float(b["seconds"]) - float(a["seconds"]) for a, b in zip(rows[1:], rows[2:])]
    shutil.rmtree(d / "out", ignore_errors=True)  # the runs' outputs are hundreds of MB each
    return (statistics.median(rounds), statistics.median(float(r["sync_seconds"]) for r in rows[2:]), received,
            float(rows[-1]["test_loss"]))


def hosts_table(tmp, cfg_dir, train, words, base, args):
    """Three emulated hosts (the Dispatcher and the pipeline; a learner; a learner), on links as fast as this
    machine copies and on links capped at --link; then two learners on each learner host, on capped links."""
    if os.geteuid() != 0:
        print("\nhosts: not measured: emulating hosts needs root")
        return
    subprocess.run(["bash", str(multihost.HOSTS), "up", "3", multihost.PREFIX], check=True, capture_output=True)
    link_name = args.link.replace("gbit", " Gbit/s")
    try:
        rows, pairs = [], []
        for link in ("none", args.link):
            subprocess.run(["bash", str(multihost.HOSTS), "limit", link, multihost.PREFIX], check=True,
                           capture_output=True)
            for strategy, name in (("fedavg", "dense"), ("fedavg", "sparse (defaults: float16, touched)"),
                                   ("fedavg", "sparse, top 20 % float16, touched"), ("bsp", "dense")):
                folder = "".join(c if c.isalnum() else "_" for c in strategy + "_" + name + "_" + link)
                r, sync, mb, loss = run_hosts(tmp, folder, cfg_dir, train, **base, strategy=strategy,
                                              **SETTINGS[name])
                rows.append([strategy, name, "uncapped" if link == "none" else link_name, f"{r:.2f} s",
                             f"{sync:.2f} s", f"{100 * sync / r:.1f} %", f"{sum(mb):.0f} MB", f"{loss:.4f}"])
        for strategy, name in (("fedavg", "dense"), ("fedavg", "sparse, top 20 % float16, touched"),
                               ("bsp", "dense")):
            folder = "".join(c if c.isalnum() else "_" for c in "pairs_" + strategy + "_" + name)
            r, sync, mb, loss = run_hosts(tmp, folder, cfg_dir, train, learners=(2, 2), **base, strategy=strategy,
                                          **SETTINGS[name])
            pairs.append([strategy, name, f"{r:.2f} s", f"{sync:.2f} s", f"{100 * sync / r:.1f} %",
                          f"{mb[1]:.0f} MB", f"{mb[2]:.0f} MB", f"{loss:.4f}"])
    finally:
        subprocess.run(["bash", str(multihost.HOSTS), "down", multihost.PREFIX], capture_output=True)
    print(f"\n### Three hosts over TCP (emulated: scripts/emulate_hosts.sh): the Dispatcher and the pipeline on one, "
          f"a learner on each of the others; {words} words x 300, {args.rounds} rounds\n")
    print(jobs.table(rows, ["strategy", "exchange", "each host's link", "round", "exchange", "exchange share",
                            "the hosts receive per round (whole run / rounds)", "test loss"]))
    print(f"\n### Two learners on each of two hosts, {link_name} links: the Dispatcher and the pipeline on a third; "
          f"{words} words x 300, {args.rounds} rounds\n")
    print(jobs.table(pairs, ["strategy", "exchange", "round", "exchange", "exchange share",
                             "first learner host receives per round (whole run / rounds)", "second learner host",
                             "test loss"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--learners", type=int, nargs="+", default=[2, 4, 8])
    ap.add_argument("--scaling-bpe", type=int, default=20, help="batches per learner per round when scaling")
    ap.add_argument("--workdir", help="keep the prepared corpus and the runs here (default: a temporary folder)")
    ap.add_argument("--only", choices=["vocabulary", "strategies", "smaller", "learners", "checkpoints", "hosts",
                                       "larger", "million"],
                    help="run one of the tables")
    ap.add_argument("--link", default="1gbit", help="the capped link of the hosts table, in tc's units")
    ap.add_argument("--smaller-words", type=int, nargs="+", default=[15_000, 30_000],
                    help="the vocabularies of the smaller table (the text8 prefix's most frequent words)")
    ap.add_argument("--larger-words", type=int, default=300_000, help="the made-up vocabulary of the larger table")
    ap.add_argument("--million-words", type=int, default=1_000_000,
                    help="the made-up vocabulary sampled for the last table (the words that occur are kept)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(args.workdir or tmp)
        tmp.mkdir(parents=True, exist_ok=True)
        cfg_dir, train = prepare(tmp)
        words = sum(1 for _ in open(cfg_dir / "vocab.txt"))
        base = {"max_rounds": args.rounds}
        if args.only in (None, "vocabulary"):
            vocabulary_table(tmp, cfg_dir, train, words, base, args)
        if args.only in (None, "strategies"):
            strategies_table(tmp, cfg_dir, train, words, base, args)
        if args.only in (None, "smaller"):
            smaller_table(tmp, base, args)
        if args.only in (None, "learners"):
            learners_table(tmp, cfg_dir, train, words, base, args)
        if args.only in (None, "checkpoints"):
            checkpoints_table(tmp, cfg_dir, train, words, base, args)
        if args.only in (None, "hosts"):
            hosts_table(tmp, cfg_dir, train, words, base, args)
        if args.only in (None, "larger"):
            larger_table(tmp, args)
        if args.only in (None, "million"):
            million_table(tmp, args)
        print("\nRegenerate: `/usr/bin/python3 bench/vocab_exchange.py`")


def vocabulary_table(tmp, cfg_dir, train, words, base, args):
    results = {name: run(tmp, name, cfg_dir, train, 2, **base, **s) for name, s in SETTINGS.items()}
    dense = results["dense"]
    print(f"### {words} words x 300, 2 learners, {args.rounds} rounds of the same windows\n")
    rows = []
    for name, r in results.items():
        rows.append([name, f"{r['round']:.2f} s", f"{100 * r['sync'] / r['round']:.1f} %",
                     f"{r['bytes'] / 1e6:.0f} MB", f"{dense['bytes'] / r['bytes']:.1f}x",
                     f"{r['inbound'] / 1e6:.0f} MB", f"{r['loss']:.4f}",
                     f"{100 * (r['loss'] / dense['loss'] - 1):+.2f} %"])
    print(jobs.table(rows, ["exchange", "round", "exchange share", "bytes per round", "fewer than dense",
                            "Dispatcher receives per round", "test loss", "loss against dense"]))


def strategies_table(tmp, cfg_dir, train, words, base, args):
    """Dense against the sparse defaults and the top 20 % for each lock-step strategy that can exchange sparse."""
    names = ("dense", "sparse (defaults: float16, touched)", "sparse, top 20 % float16, touched")
    rows = []
    for strategy in ("fedavg", "bsp", "bmuf", "diloco"):
        results = {name: run(tmp, f"strategy_{strategy}_{name}", cfg_dir, train, 2, **base, strategy=strategy,
                             **SETTINGS[name]) for name in names}
        dense = results["dense"]
        rows += [[strategy, name, f"{r['round']:.2f} s", f"{100 * r['sync'] / r['round']:.1f} %",
                  f"{r['bytes'] / 1e6:.0f} MB", f"{r['loss']:.4f}", f"{100 * (r['loss'] / dense['loss'] - 1):+.2f} %"]
                 for name, r in results.items()]
    print(f"\n### Strategies: {words} words x 300, 2 learners, {args.rounds} rounds of the same windows\n")
    print(jobs.table(rows, ["strategy", "exchange", "round", "exchange share", "bytes per round", "test loss",
                            "loss against the strategy's dense"]))


def smaller_table(tmp, base, args):
    """Dense against the sparse defaults and the top 20 % at smaller vocabularies of the same text, which the
    `auto` exchange still makes sparse across hosts (8 M parameters and more)."""
    names = ("dense", "sparse (defaults: float16, touched)", "sparse, top 20 % float16, touched")
    rows = []
    for words in args.smaller_words:
        cfg_dir, train = prepare_smaller(tmp, words)
        results = {name: run(tmp, f"smaller_{words}_{name}", cfg_dir, train, 2, **base, **SETTINGS[name])
                   for name in names}
        dense = results["dense"]
        rows += [[f"{words} x 300", name, f"{r['bytes'] / 1e6:.0f} MB", f"{dense['bytes'] / r['bytes']:.1f}x",
                  f"{r['loss']:.4f}", f"{100 * (r['loss'] / dense['loss'] - 1):+.2f} %"] for name, r in results.items()]
    print(f"\n### Smaller vocabularies: the text8 prefix's most frequent words, 2 learners, {args.rounds} rounds of "
          f"the same windows\n")
    print(jobs.table(rows, ["words", "exchange", "bytes per round", "fewer than dense", "test loss",
                            "loss against dense"]))


def larger_table(tmp, args):
    """Dense against sparse at a vocabulary past text8's: made-up words, 20 M tokens, 8 rounds."""
    cfg_dir, train = prepare_large(tmp, args.larger_words, 20_000_000)
    names = ("dense", "sparse (defaults: float16, touched)", "sparse, top 20 % float16, touched")
    results = {name: run(tmp, "larger_" + name, cfg_dir, train, 2, max_rounds=8, **SETTINGS[name]) for name in names}
    dense = results["dense"]
    print(f"\n### {args.larger_words} made-up words x 300 (Zipf frequencies, 20 M tokens), 2 learners, 8 rounds of "
          f"the same windows\n")
    rows = [[name, f"{r['round']:.2f} s", f"{1000 * r['sync']:.0f} ms", f"{100 * r['sync'] / r['round']:.1f} %",
             f"{r['bytes'] / 1e6:.0f} MB", f"{dense['bytes'] / r['bytes']:.1f}x", f"{r['loss']:.4f}",
             f"{100 * (r['loss'] / dense['loss'] - 1):+.2f} %"] for name, r in results.items()]
    print(jobs.table(rows, ["exchange", "round", "exchange", "exchange share", "bytes per round", "fewer than dense",
                            "test loss", "loss against dense"]))


def million_table(tmp, args):
    """One learner at about a million words: the final flush sends every change it kept back in one message, and
    the Dispatcher writes the outputs (text, word2vec text and binary) of the whole vocabulary."""
    cfg_dir, train = prepare_large(tmp, args.million_words, 20_000_000)
    words = sum(1 for _ in open(cfg_dir / "vocab.txt"))
    d = tmp / "million"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir()
    cfg = json.loads((cfg_dir / "cfg.json").read_text())
    cfg.update({"target": 0.0, "fixed_batch_order": True, "progress_seconds": 0, "liveness_seconds": 300,
                "checkpoint_every": 1000, "max_rounds": 3, **SETTINGS["sparse, top 20 % float16, touched"]})
    run_cfg = d / "config"
    shutil.copytree(cfg_dir, run_cfg)
    (run_cfg / "cfg.json").write_text(json.dumps(cfg, indent=2))
    out = d / "out"
    rows, samples, _ = jobs.run(5, [train], run_cfg, out, timeout=1200)
    stats = (out / "large_stats.txt").read_text().split()
    flush = float(next(s for s in stats if s.startswith("flush_inbound_bytes=")).split("=")[1])
    # The outputs: from the final checkpoint, written first, to the last embedding file.
    outputs = (out / "large.w2v.bin").stat().st_mtime - (out / "large.h5").stat().st_mtime
    text = sum((out / f).stat().st_size for f in ("large_embeddings.txt", "large.w2v.txt"))
    peak = {rank: max(s[3] for s in series) for rank, series in samples.items()}
    shutil.rmtree(out, ignore_errors=True)  # gigabytes
    params = 2 * words * cfg["dim"]
    print(f"\n### {words} words x {cfg['dim']} ({params / 1e6:.0f} M parameters, {4 * params / 1e9:.2f} GB in "
          f"float32), 1 learner, sparse top 20 % float16, 3 rounds\n")
    print(jobs.table([[f"{rows[-1]['seconds']:.1f} s", f"{flush / 1e9:.2f} GB", f"{outputs:.0f} s",
                       f"{text / 1e9:.1f} GB", f"{peak.get(0, 0) / 1024:.1f} GiB", f"{peak.get(4, 0) / 1024:.1f} GiB"]],
                     ["training", "the final flush's message", "outputs written", "text outputs",
                      "Dispatcher peak RSS", "learner peak RSS"]))


def learners_table(tmp, cfg_dir, train, words, base, args):
    print(f"\n### Learners: the Dispatcher's inbound bytes and exchange time per round ({words} words x 300, "
          f"bpe {args.scaling_bpe}, {args.rounds} rounds)\n")
    rows = []
    for learners in args.learners:
        for strategy, name in (("fedavg", "dense"), ("fedavg", "sparse, top 20 % float16, touched"),
                               ("bsp", "dense")):
            r = run(tmp, f"{strategy}_{name.split(',')[0]}_{learners}", cfg_dir, train, learners, **base,
                    bpe=args.scaling_bpe, strategy=strategy, **SETTINGS[name])
            rows.append([learners, strategy, name, f"{r['inbound'] / 1e6:.0f} MB", f"{r['bytes'] / 1e6:.0f} MB",
                         f"{1000 * r['sync']:.0f} ms", f"{r['round']:.2f} s"])
    print(jobs.table(rows, ["learners", "strategy", "exchange", "Dispatcher receives per round", "bytes per round",
                            "exchange per round", "round"]))


def checkpoints_table(tmp, cfg_dir, train, words, base, args):
    """A checkpoint every round, written between rounds or in the background, against none: with 1 learner (a
    core left for the writer) and with 2 (every core trains)."""
    print(f"\n### A checkpoint every round ({words} words x 300: {4 * 2 * words * 300 / 1e6:.0f} MB of weights, "
          f"dense, {args.rounds} rounds)\n")
    rows = []
    for learners in (1, 2):
        none = run(tmp, f"no_checkpoints_{learners}", cfg_dir, train, learners, **base, exchange="dense")
        for how, said in (("never", "between rounds"), ("always", "in the background")):
            r = run(tmp, f"checkpoints_{how}_{learners}", cfg_dir, train, learners, **base, exchange="dense",
                    checkpoint_every=1, checkpoint_background=how)
            rows.append([learners, said, f"{r['round']:.2f} s", f"{none['round']:.2f} s",
                         f"{100 * (r['round'] / none['round'] - 1):+.1f} %"])
    print(jobs.table(rows, ["learners", "checkpoint written", "round", "round without checkpoints",
                            "cost per round"]))


if __name__ == "__main__":
    main()
