"""gensim Word2Vec CBOW, the peer the benchmarks compare against: its settings (window 2, 5 negatives, sample 1e-3,
the mean of the context) and every way a benchmark trains it. bench/learner_throughput.py times one epoch
(EpochRate), bench/learner_speedup.py gensim's best one-epoch pass per worker count (EpochSeconds),
bench/quality.py scores it after every epoch (train_scored); importing this module does not import gensim.

As a script it trains on a text file, one sentence a line, as a user would; bench/time_to_quality.py runs it as a
fresh process so that its start-up (interpreter, import gensim, reading the text, build_vocab) counts in its wall
time.

Usage: /usr/bin/python3 bench/gensim_cbow.py CORPUS VECTORS [--epochs 5] [--workers 2] [--dim 100] [--window 2]
       [--negatives 5] [--min-count 5] [--sample 1e-3] [--seed 1]

Writes the vectors to VECTORS (word2vec binary format, after training) and prints one JSON object: the
time.monotonic() at which the script began and at which each phase ended (imported, read, vocab, trained), the
vocabulary size and the settings. time.monotonic() is the system's CLOCK_MONOTONIC, so the launching process
can subtract its own launch time.
"""

import time

began = time.monotonic()

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402


def cbow(dim, workers, min_count=5, window=2, negatives=5, sample=1e-3, seed=1):
    """An untrained gensim Word2Vec CBOW model with these settings."""
    from gensim.models import Word2Vec
    return Word2Vec(vector_size=dim, window=window, negative=negatives, min_count=min_count, sample=sample, sg=0,
                    cbow_mean=1, workers=workers, seed=seed)


class EpochRate:
    """One worker on sentences (lists of words, min count 5); run() trains one epoch."""

    def __init__(self, sentences, dim=32):
        self.sentences = sentences
        self.model = cbow(dim, workers=1)
        self.model.build_vocab(self.sentences)
        self.effective = 0

    def run(self, _seconds=None, clock=time.perf_counter):
        """One epoch; returns gensim's effective words / seconds of ``clock``."""
        t0 = clock()
        self.effective, _raw = self.model.train(self.sentences, total_examples=len(self.sentences), epochs=1)
        return self.effective / (clock() - t0)


class EpochSeconds:
    """gensim on sentences (lists of words, every word kept), with as many workers as asked."""

    def __init__(self, sentences, dim):
        self.sentences = sentences
        self.dim = dim
        self.seconds = {}

    def epoch_seconds(self, workers):
        """gensim's best of two one-epoch passes with `workers` threads (measured once)."""
        if workers not in self.seconds:
            model = cbow(self.dim, workers, min_count=1)
            model.build_vocab(self.sentences)
            best = math.inf
            for _ in range(2):
                start = time.perf_counter()
                model.train(self.sentences, total_examples=len(self.sentences), epochs=1)
                best = min(best, time.perf_counter() - start)
            self.seconds[workers] = best
        return self.seconds[workers]


def train_scored(sentences, score, epochs=8, dim=100, window=2, negatives=5, workers=2, sample=1e-3, seed=1,
                 log=print):
    """gensim on sentences (min count 5), scored after every epoch by score(words, vectors) -> dict, the scoring
    time left out of the seconds; returns (points, model), a point {"seconds", "epoch", **score} per epoch."""
    from gensim.models.callbacks import CallbackAny2Vec
    points = []

    class Scorer(CallbackAny2Vec):
        def __init__(self):
            self.epoch, self.paused = 0, 0.0

        def on_train_begin(self, model):
            self.t0 = time.perf_counter()

        def on_epoch_end(self, model):
            t = time.perf_counter()
            self.epoch += 1
            wv = model.wv
            p = {"seconds": round(t - self.t0 - self.paused, 2), "epoch": self.epoch,
                 **score(list(wv.index_to_key), wv.vectors)}
            points.append(p)
            log(f"  gensim {p['seconds']:7.1f} s  epoch {p['epoch']:5d}  "
                f"rho {p['rho']:.3f}  analogy "
                f"{p.get('analogy', float('nan')):.3f}")
            self.paused += time.perf_counter() - t

    model = cbow(dim, workers, window=window, negatives=negatives, sample=sample, seed=seed)
    model.build_vocab(sentences)
    model.train(sentences, total_examples=len(sentences), epochs=epochs, callbacks=[Scorer()])
    return points, model


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("vectors")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--dim", type=int, default=100)
    ap.add_argument("--window", type=int, default=2)
    ap.add_argument("--negatives", type=int, default=5)
    ap.add_argument("--min-count", type=int, default=5)
    ap.add_argument("--sample", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    import gensim.models  # noqa: F401  (timed: the import is part of the start-up)
    t = {"began": began, "imported": time.monotonic()}
    with open(a.corpus, encoding="utf-8") as f:
        sentences = [line.split() for line in f]
    t["read"] = time.monotonic()
    model = cbow(a.dim, a.workers, min_count=a.min_count, window=a.window, negatives=a.negatives, sample=a.sample,
                 seed=a.seed)
    model.build_vocab(sentences)
    t["vocab"] = time.monotonic()
    model.train(sentences, total_examples=model.corpus_count, epochs=a.epochs)
    t["trained"] = time.monotonic()
    model.wv.save_word2vec_format(a.vectors, binary=True)
    print(json.dumps({"times": t, "vocab_size": len(model.wv), "settings": vars(a)}))


if __name__ == "__main__":
    main()
