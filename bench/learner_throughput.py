"""Per-core learner throughput of library.py's models vs gensim Word2Vec.

    /usr/bin/python3 bench/learner_throughput.py [--dims 100 300]
        [--neg-bs 256 1024 4096] [--other-bs 1024] [--softmax-bs 256]
        [--lr 0.1] [--seconds 2] [--cpu N] [--cpu-time] [--no-gensim]
        [--json]

Corpus: the King James Bible (data/kjv.txt, or the `bible` program),
tokenized with textpipe, vocabulary = words with count >= 5, word2vec's
subsampling (sample 1e-3), windows of 2w+1 = 5 words inside a line.

Ours, through engine.py as the C++ learner calls it: the hand-written
"neg" model (its fused step, src/kernels/, from the build), the same step
as torch ops ("neg_torch": what "neg" runs where the kernel is not built
or the model is on a GPU), the same model written with autograd
("neg_autograd", the model of library.py that researchers edit) and the
report's "softmax";
library.train_step on those windows in text order, 1 torch thread, the
learner's malloc settings (src/bridge/library.cpp), best of 3 timed passes
of about --seconds each (after a warm-up pass): windows/s.  Both neg models
at every batch size of --neg-bs at the first dim, and of --other-bs at the
other dims; softmax at the first dim.  gensim: Word2Vec CBOW, 1 worker,
window 2, 5 negatives, min_count 5, sample 1e-3, at each dim, on the same
tokens: its own reported effective words (words left after subsampling) /
seconds, best of 3 epochs.  With --cpu-time every rate is per second of
the process's CPU time instead of per wall-clock second (for a loaded
machine, where other processes take turns on the pinned core; the
process's threads are pinned to that one core, so on an idle machine the
two agree).  The passes of all runs are interleaved, so a
change in machine load hits every run alike.  One window = one target word
trained with its context, so windows/s and effective words/s count the same
unit (gensim also trains words near line ends with a shorter context, and
shrinks each window at random, which makes its words cheaper).

Training quality: both neg models, fresh, trained for one pass over the
same windows (text order, batch 1024, the last 5% held out) at each dim;
their test loss on the held-out windows (the same noise words for both).

The whole process is pinned to one CPU (--cpu, default the last one), so
gensim's worker and its job-producer thread share one core too; with
several CPUs, gensim unpinned is also measured (a second core for the
producer).  Prints markdown tables; about 2 minutes.
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
import ctypes  # noqa: E402

import numpy as np  # noqa: E402

import corpus  # noqa: E402
import gensim_cbow  # noqa: E402

sys.path.insert(0, str(corpus.ROOT / "python"))


def bible_windows(window=2, sample=1e-3, seed=1):
    text = corpus.read_corpus("bible")
    words, counts = corpus.build_vocab(text, 5)
    ids = corpus.token_lines(text, words)
    wins = corpus.make_windows(corpus.subsample(ids, counts, sample, seed),
                               window)
    return words, counts, ids, wins


def cpu_name():
    """The CPU's model name, as /proc/cpuinfo gives it."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def learner_malloc():
    """The malloc settings of a learner (src/bridge/library.cpp): a step's
    temporaries come from the heap instead of fresh mappings."""
    libc = ctypes.CDLL("libc.so.6")
    libc.mallopt(-3, 64 << 20)   # M_MMAP_THRESHOLD
    libc.mallopt(-1, 128 << 20)  # M_TRIM_THRESHOLD


class Ours:
    """engine.train_step on the windows in text order, 1 torch thread."""

    def __init__(self, model, bs, words, counts, windows, dim=32, lr=0.1,
                 negatives=5):
        import torch
        import engine
        torch.set_num_threads(1)
        self.engine, self.bs, self.windows = engine, bs, windows
        cfg = {"vocab_size": len(words), "dim": dim, "window": 2, "seed": 1,
               "model": "neg" if model == "neg_torch" else model,
               "counts": counts, "bs": bs, "device": "cpu",
               "model_args": {"negatives": negatives}}
        if model != "softmax":
            cfg["lr"] = lr
        else:
            del cfg["model_args"]
        size = sum(math.prod(s) for _, s in engine.param_shapes(cfg))
        self.weights = np.zeros(size, np.float32)
        if model == "neg_torch":  # the step as torch ops, as a build without fedavg_kernels runs it
            from runtime import fused_neg
            kernels, fused_neg.fedavg_kernels = fused_neg.fedavg_kernels, None
            try:
                self.model = engine.create(cfg, self.weights, True)
            finally:
                fused_neg.fedavg_kernels = kernels
        else:
            self.model = engine.create(cfg, self.weights, True)
        if model == "neg" and not self.model.fused:
            sys.exit(f"fedavg_kernels is not built (looked in "
                     f"{corpus.KERNELS_DIR}): build the program first")
        self.batches = windows.shape[0] // bs
        self.pos, self.loss = 0, float("nan")

    def run(self, seconds, clock=time.perf_counter):
        """Train for about ``seconds`` of ``clock``; returns windows/s."""
        bs, done, t0 = self.bs, 0, clock()
        while clock() - t0 < seconds:
            for _ in range(8):
                b = self.pos % self.batches
                self.loss = self.engine.train_step(
                    self.model, self.windows[b * bs:(b + 1) * bs])
                self.pos += 1
                done += bs
        return done / (clock() - t0)

    def one_pass(self, train, test):
        """Test loss on ``test`` before and after one pass over ``train``."""
        bs, e = self.bs, self.engine
        before = e.test_loss(self.model, test)
        for b in range(train.shape[0] // bs):
            e.train_step(self.model, train[b * bs:(b + 1) * bs])
        return before, e.test_loss(self.model, test)


NEG = ("neg", "neg_torch", "neg_autograd")  # fused, torch ops, autograd


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dims", type=int, nargs="+", default=[100, 300])
    p.add_argument("--neg-bs", type=int, nargs="+", default=[256, 1024, 4096],
                   help="batch sizes of both neg models at the first dim")
    p.add_argument("--other-bs", type=int, nargs="*", default=[1024],
                   help="batch sizes of both neg models at the other dims")
    p.add_argument("--softmax-bs", type=int, nargs="*", default=[256],
                   help="batch sizes of softmax at the first dim")
    p.add_argument("--lr", type=float, default=0.1, help="neg models' lr")
    p.add_argument("--negatives", type=int, default=5)
    p.add_argument("--seconds", type=float, default=2.0,
                   help="length of one timed pass")
    p.add_argument("--cpu", type=int, default=None,
                   help="CPU to pin to (default: the last one)")
    p.add_argument("--cpu-time", action="store_true",
                   help="rates per second of CPU time, not of wall time")
    p.add_argument("--no-gensim", action="store_true")
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    clock = time.process_time if a.cpu_time else time.perf_counter

    cpus = sorted(os.sched_getaffinity(0))
    cpu = cpus[-1] if a.cpu is None else a.cpu
    os.sched_setaffinity(0, {cpu})
    learner_malloc()
    words, counts, ids, windows = bible_windows()
    runs = []
    for i, dim in enumerate(a.dims):
        for bs in (a.neg_bs if i == 0 else a.other_bs):
            runs += [((model, dim, bs), Ours(model, bs, words, counts,
                                             windows, dim, a.lr, a.negatives))
                     for model in NEG]
        if i == 0:
            runs += [(("softmax", dim, bs), Ours("softmax", bs, words, counts,
                                                 windows, dim))
                     for bs in a.softmax_bs]
        if not a.no_gensim:
            runs.append((("gensim", dim, None),
                         gensim_cbow.EpochRate(corpus.gensim_sentences(ids, words), dim)))
    # Warm up, then 3 rounds over all runs (interleaved, so a change in
    # machine load hits every run alike); the best round counts.
    best = {}
    for rnd in range(4):
        for key, run in runs:
            rate = run.run(min(0.5, a.seconds) if rnd == 0 else a.seconds,
                           clock)
            if rnd:
                best[key] = max(best.get(key, 0.0), rate)
    gensim = {key[1]: best[key] for key, _ in runs if key[0] == "gensim"}
    rows = [{"model": key[0], "dim": key[1], "bs": key[2],
             "rate": best[key], "loss": run.loss}
            for key, run in runs if key[0] != "gensim"]
    for r in rows:
        ref = gensim.get(r["dim"])
        r["ratio"] = r["rate"] / ref if ref else None
        if r["model"] != "neg" and r["model"] in NEG:
            r["vs_neg"] = r["rate"] / best[("neg", r["dim"], r["bs"])]
    result = {"cpu": cpu, "cpu_name": cpu_name(), "vocab": len(words), "windows": len(windows),
              "clock": "cpu" if a.cpu_time else "wall",
              "dims": a.dims, "ours": rows, "gensim": gensim}
    if gensim and len(cpus) > 1:
        os.sched_setaffinity(0, set(cpus))
        gensim_run = next(run for key, run in runs if key[0] == "gensim")
        result["gensim_unpinned"] = max(gensim_run.run(None, clock)
                                        for _ in range(2))
        result["gensim_unpinned_dim"] = a.dims[0]
        os.sched_setaffinity(0, {cpu})

    # Training quality: the same windows, one pass, both neg models.
    held = windows.shape[0] // 20
    train, test = windows[:-held], windows[-held:]
    result["quality"] = []
    for dim in a.dims:
        for model in NEG:
            before, after = Ours(model, 1024, words, counts, train, dim,
                                 a.lr, a.negatives).one_pass(train, test)
            result["quality"].append({"model": model, "dim": dim,
                                      "before": before, "after": after})
    if a.json:
        print(json.dumps(result))
        return 0
    print_tables(result, a)
    return 0


def print_tables(result, a):
    print(f"King James Bible: {result['vocab']:,} words (min count 5), "
          f"{result['windows']:,} windows after subsampling; window 2, "
          f"{a.negatives} negatives, neg models at lr {a.lr:g}; pinned to "
          f"CPU {result['cpu']} ({result['cpu_name']})"
          + ("; rates per second of CPU time" if result["clock"] == "cpu"
             else ""))
    print()
    print("| learner | dim | batch | per-core speed | vs gensim (1 worker, "
          "same dim) | vs neg | last batch loss |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    names = {"neg": "library.py neg (hand-written)",
             "neg_torch": "library.py neg, step as torch ops",
             "neg_autograd": "library.py neg_autograd (autograd)",
             "softmax": "library.py softmax (autograd, Adam)"}
    for r in result["ours"]:
        ratio = f"{r['ratio']:.2f}x" if r["ratio"] else "-"
        vs = f"{r['vs_neg']:.2f}x" if "vs_neg" in r else "-"
        print(f"| {names[r['model']]} | {r['dim']} | {r['bs']} | "
              f"{r['rate']:,.0f} windows/s | {ratio} | {vs} | "
              f"{r['loss']:.3f} |")
    for dim, rate in result["gensim"].items():
        print(f"| gensim CBOW, 1 worker, same core | {dim} | - | "
              f"{rate:,.0f} words/s | 1.00x | - | - |")
    if "gensim_unpinned" in result:
        dim = result["gensim_unpinned_dim"]
        print(f"| gensim CBOW, 1 worker, unpinned | {dim} | - | "
              f"{result['gensim_unpinned']:,.0f} words/s | "
              f"{result['gensim_unpinned'] / result['gensim'][dim]:.2f}x | "
              f"- | - |")
    print()
    print("Training quality: test loss on held-out windows (the last 5 %) "
          "after one pass over the same windows, batch 1024:")
    print()
    print("| learner | dim | untrained | after one pass |")
    print("|---|---:|---:|---:|")
    for q in result["quality"]:
        print(f"| {names[q['model']]} | {q['dim']} | {q['before']:.4f} | "
              f"{q['after']:.4f} |")


if __name__ == "__main__":
    sys.exit(main())
