"""Per-core learner throughput of library.py's models vs gensim Word2Vec.

    /usr/bin/python3 bench/learner_throughput.py [--neg-bs 256 1024 4096]
        [--softmax-bs 256] [--dim 32] [--lr 0.1] [--seconds 2]
        [--cpu N] [--no-gensim] [--json]

Corpus: the King James Bible (data/kjv.txt, or the `bible` program),
tokenized with textpipe, vocabulary = words with count >= 5, word2vec's
subsampling (sample 1e-3), windows of 2w+1 = 5 words inside a line.

Ours: library.train_step on those windows in text order, 1 torch thread,
best of 3 timed passes of about --seconds each (after a warm-up pass):
windows/s.  gensim: Word2Vec CBOW, 1 worker, dim 32, window 2, 5
negatives, min_count 5, sample 1e-3, on the same tokens: its own reported
effective words (words left after subsampling) / seconds, best of 3
epochs.  The passes of all runs are interleaved, so a change in machine
load hits every run alike.  One window = one target word trained with
its context, so windows/s and effective words/s count the same unit
(gensim also trains words near line ends with a shorter context, and
shrinks each window at random, which makes its words cheaper).

The whole process is pinned to one CPU (--cpu, default the last one), so
gensim's worker and its job-producer thread share one core too; with
several CPUs, gensim unpinned is also measured (a second core for the
producer).  Prints a markdown table; about 1 minute.
"""

import argparse
import json
import math
import os
import sys
import time

# One BLAS thread, as fedavg_mpi gives its ranks (torch_threads): read when NumPy loads OpenBLAS, which by
# default starts a thread per core that spins between calls, here on the one pinned core.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

import corpus  # noqa: E402

sys.path.insert(0, str(corpus.ROOT / "python"))


def bible_windows(window=2, sample=1e-3, seed=1):
    text = corpus.read_corpus("bible")
    words, counts = corpus.build_vocab(text, 5)
    ids = corpus.token_lines(text, words)
    wins = corpus.make_windows(corpus.subsample(ids, counts, sample, seed),
                               window)
    return words, counts, ids, wins


class Ours:
    """library.train_step on the windows in text order, 1 torch thread."""

    def __init__(self, model, bs, words, counts, windows, dim=32, lr=0.1,
                 negatives=5):
        import torch
        import library
        torch.set_num_threads(1)
        self.lib, self.bs, self.windows = library, bs, windows
        cfg = {"vocab_size": len(words), "dim": dim, "window": 2,
               "lr": lr if model == "neg" else 0.01, "seed": 1,
               "model": model, "counts": counts,
               "model_args": {"negatives": negatives,
                              "lr_schedule": "constant"}}
        size = sum(math.prod(s) for _, s in library.param_shapes(cfg))
        self.weights = np.zeros(size, np.float32)
        self.model = library.create(cfg, self.weights, True)
        self.batches = windows.shape[0] // bs
        self.pos, self.loss = 0, float("nan")

    def run(self, seconds):
        """Train for about ``seconds``; returns windows/s."""
        bs, done, t0 = self.bs, 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            for _ in range(8):
                b = self.pos % self.batches
                self.loss = self.lib.train_step(
                    self.model, self.windows[b * bs:(b + 1) * bs])
                self.pos += 1
                done += bs
        return done / (time.perf_counter() - t0)


class Gensim:
    """gensim Word2Vec CBOW, 1 worker; run() trains one epoch."""

    def __init__(self, words, ids, dim=32):
        from gensim.models import Word2Vec
        self.sentences = corpus.gensim_sentences(ids, words)
        self.model = Word2Vec(vector_size=dim, window=2, negative=5,
                              min_count=5, sample=1e-3, sg=0, cbow_mean=1,
                              workers=1, seed=1)
        self.model.build_vocab(self.sentences)
        self.effective = 0

    def run(self, _seconds=None):
        """One epoch; returns gensim's effective words / seconds."""
        t0 = time.perf_counter()
        self.effective, _raw = self.model.train(
            self.sentences, total_examples=len(self.sentences), epochs=1)
        return self.effective / (time.perf_counter() - t0)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--neg-bs", type=int, nargs="+", default=[256, 1024, 4096])
    p.add_argument("--softmax-bs", type=int, nargs="*", default=[256])
    p.add_argument("--dim", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.1, help="neg model lr")
    p.add_argument("--negatives", type=int, default=5)
    p.add_argument("--seconds", type=float, default=2.0,
                   help="length of one timed pass")
    p.add_argument("--cpu", type=int, default=None,
                   help="CPU to pin to (default: the last one)")
    p.add_argument("--no-gensim", action="store_true")
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)

    cpus = sorted(os.sched_getaffinity(0))
    cpu = cpus[-1] if a.cpu is None else a.cpu
    os.sched_setaffinity(0, {cpu})
    words, counts, ids, windows = bible_windows()
    runs = [(("neg", bs), Ours("neg", bs, words, counts, windows, a.dim,
                               a.lr, a.negatives)) for bs in a.neg_bs]
    runs += [(("softmax", bs), Ours("softmax", bs, words, counts, windows,
                                    a.dim)) for bs in a.softmax_bs]
    if not a.no_gensim:
        runs.append((("gensim", None), Gensim(words, ids, a.dim)))
    # Warm up, then 3 rounds over all runs (interleaved, so a change in
    # machine load hits every run alike); the best round counts.
    best = {}
    for rnd in range(4):
        for key, run in runs:
            rate = run.run(min(0.5, a.seconds) if rnd == 0 else a.seconds)
            if rnd:
                best[key] = max(best.get(key, 0.0), rate)
    rows = [{"model": key[0], "bs": key[1], "rate": best[key],
             "loss": run.loss} for key, run in runs if key[0] != "gensim"]
    result = {"cpu": cpu, "vocab": len(words), "windows": len(windows),
              "dim": a.dim, "ours": rows}
    if not a.no_gensim:
        result["gensim"] = best[("gensim", None)]
        result["gensim_effective_words"] = runs[-1][1].effective
        if len(cpus) > 1:
            os.sched_setaffinity(0, set(cpus))
            result["gensim_unpinned"] = max(runs[-1][1].run()
                                            for _ in range(2))
            os.sched_setaffinity(0, {cpu})
    ref = result.get("gensim")
    for r in rows:
        r["ratio"] = r["rate"] / ref if ref else None
    if a.json:
        print(json.dumps(result))
        return 0
    print(f"King James Bible: {len(words):,} words (min count 5), "
          f"{len(windows):,} windows after subsampling; dim {a.dim}, "
          f"window 2, {a.negatives} negatives; pinned to CPU {cpu}")
    print()
    print("| learner | batch | per-core speed | vs gensim (1 worker) |"
          " last batch loss |")
    print("|---|---:|---:|---:|---:|")
    for r in rows:
        ratio = f"{r['ratio']:.2f}x" if r["ratio"] else "-"
        print(f"| library.py {r['model']} | {r['bs']} | "
              f"{r['rate']:,.0f} windows/s | {ratio} | {r['loss']:.3f} |")
    if ref:
        print(f"| gensim CBOW, 1 worker, same core | - | "
              f"{ref:,.0f} words/s | 1.00x | - |")
        if "gensim_unpinned" in result:
            print(f"| gensim CBOW, 1 worker, unpinned | - | "
                  f"{result['gensim_unpinned']:,.0f} words/s | "
                  f"{result['gensim_unpinned'] / ref:.2f}x | - |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
