"""gensim Word2Vec CBOW on a text file, one sentence a line, as a user would train it; bench/time_to_quality.py
runs it as a fresh process so that its start-up (interpreter, import gensim, reading the text, build_vocab)
counts in its wall time.

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

from gensim.models import Word2Vec  # noqa: E402


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
    t = {"began": began, "imported": time.monotonic()}
    with open(a.corpus, encoding="utf-8") as f:
        sentences = [line.split() for line in f]
    t["read"] = time.monotonic()
    model = Word2Vec(vector_size=a.dim, window=a.window, negative=a.negatives, min_count=a.min_count,
                     sample=a.sample, sg=0, cbow_mean=1, workers=a.workers, seed=a.seed)
    model.build_vocab(sentences)
    t["vocab"] = time.monotonic()
    model.train(sentences, total_examples=model.corpus_count, epochs=a.epochs)
    t["trained"] = time.monotonic()
    model.wv.save_word2vec_format(a.vectors, binary=True)
    print(json.dumps({"times": t, "vocab_size": len(model.wv), "settings": vars(a)}))


if __name__ == "__main__":
    main()
