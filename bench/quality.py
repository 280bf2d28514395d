"""Time to quality on the text8 prefix: library.py's "neg" model vs gensim.

    /usr/bin/python3 bench/quality.py [--quick] [--epochs 8] [--bs 1024]
        [--lr 0.1] [--negatives 5] [--dim 100] [--eval-every 10]
        [--schedule constant|linear] [--learners 1 --bpe 50]
        [--no-gensim] [--no-ours] [--save-ours FILE] [--json]
    /usr/bin/python3 bench/quality.py --embeddings FILE [--vocab vocab.txt]

Ours: one process, 1 torch thread, batches of windows in text order made
with textpipe (OOV and subsampled words removed, lines never crossed),
word2vec's subsampling (sample 1e-3, a new draw each epoch).  With
--learners L > 1 it simulates Federated Averaging in one process: each
round every learner trains --bpe batches of its own share of the stream,
starting from the global weights, and the weights are averaged (the
seconds are then the sum over learners, i.e. one core's time).

gensim: Word2Vec CBOW, 2 workers, dim 100, window 2, 5 negatives,
min_count 5, sample 1e-3, 8 epochs, on the same tokens.

Both are scored every --eval-every training seconds (ours) or every epoch
(gensim) with python/evaluate.py: WordSim353 Spearman rho and 3CosAdd
accuracy on questions-words.txt; the clock stops while scoring.
--embeddings FILE just scores a word2vec text file (or a bare matrix with
--vocab) and exits.  The functions are importable (train_ours,
train_gensim, score, load_text8).
"""

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

import corpus
import gensim_cbow

sys.path.insert(0, str(corpus.ROOT / "python"))
import evaluate  # noqa: E402


def load_text8(min_count=5):
    """(words, counts, ids) of the text8 prefix in 1000-word lines."""
    text = corpus.read_corpus("text8")
    words, counts = corpus.build_vocab(text, min_count)
    return words, counts, corpus.token_lines(text, words)


def simlex_pairs(path, tmp):
    """SimLex-999 at `path` as "word1 word2 score" lines in a file in tmp: the official file's columns word1,
    word2 and SimLex999, or such lines as given."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    header = lines[0].split()
    out = Path(tmp) / "simlex.txt"
    if "SimLex999" in header:
        column = header.index("SimLex999")
        lines = [f"{f[0]} {f[1]} {f[column]}" for f in (ln.split() for ln in lines[1:]) if len(f) > column]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def score(words, vectors, analogies=True):
    """{"rho", "pairs", "analogy", "questions"} of an embedding matrix."""
    s = evaluate.similarity(words, vectors, corpus.WORDSIM)
    out = {"rho": s["rho"], "pairs": f"{s['pairs']}/{s['total']}"}
    if analogies:
        a = evaluate.analogies(words, vectors, corpus.ANALOGIES)
        out.update(analogy=a["accuracy"],
                   questions=f"{a['questions']}/{a['total']}")
    return out


def train_ours(words, counts, ids, epochs=8, bs=1024, lr=0.1, negatives=5,
               dim=100, window=2, sample=1e-3, schedule="constant",
               learners=1, bpe=50, eval_every=10.0, seed=1, threads=1,
               log=print, analogies=True, duplicates="sqrt"):
    """Train the "neg" model (through engine.py, as C++ does); returns (points, embeddings) where
    points are dicts {"seconds", "epoch", "windows", "rho", "analogy",
    "loss"} scored every ``eval_every`` training seconds and at the end."""
    import torch
    import engine
    torch.set_num_threads(threads)
    epoch_windows = [corpus.make_windows(
        corpus.subsample(ids, counts, sample, seed=seed + e), window)
        for e in range(epochs)]
    total = sum(w.shape[0] for w in epoch_windows)
    steps = total // (bs * learners)
    cfg = {"vocab_size": len(words), "dim": dim, "window": window, "lr": lr,
           "seed": seed, "model": "neg", "counts": counts, "bpe": bpe,
           "model_args": {"negatives": negatives, "lr_schedule": schedule,
                          "decay_steps": max(1, steps),
                          "duplicates": duplicates}}
    size = sum(math.prod(s) for _, s in engine.param_shapes(cfg))
    buffers = [np.zeros(size, np.float32) for _ in range(learners)]
    models = [engine.create({**cfg, "rank": r}, buffers[r], r == 0)
              for r in range(learners)]
    for b in buffers[1:]:
        b[:] = buffers[0]
    stream = np.concatenate(epoch_windows)
    bounds = np.cumsum([w.shape[0] for w in epoch_windows])
    points, trained, clock, next_eval = [], 0, 0.0, eval_every
    losses = []

    def record():
        s = score(words, engine.embeddings(models[0]), analogies)
        p = {"seconds": round(clock, 2),
             "epoch": round(trained / bounds[0], 2), "windows": trained,
             "loss": float(np.mean(losses[-50:])) if losses else None, **s}
        points.append(p)
        log(f"  ours   {p['seconds']:7.1f} s  epoch {p['epoch']:5.2f}  "
            f"rho {p['rho']:.3f}  analogy {p.get('analogy', float('nan')):.3f}"
            f"  loss {p['loss'] or float('nan'):.3f}")

    per_round = bs * bpe * learners if learners > 1 else bs
    for start in range(0, steps * bs * learners, per_round):
        t0 = time.perf_counter()
        if learners == 1:
            losses.append(engine.train_step(models[0],
                                            stream[start:start + bs]))
            trained += bs
        else:
            chunk = stream[start:start + per_round]
            share = chunk.shape[0] // learners
            for r, m in enumerate(models):      # consecutive shares
                mine = chunk[r * share:(r + 1) * share]
                for b in range(0, share - bs + 1, bs):
                    losses.append(engine.train_step(m, mine[b:b + bs]))
            trained += share
            avg = np.mean(buffers, axis=0)
            for b in buffers:
                b[:] = avg
        clock += time.perf_counter() - t0
        if clock >= next_eval:
            record()
            next_eval = clock + eval_every
    record()
    return points, engine.embeddings(models[0])


def train_gensim(words, ids, epochs=8, dim=100, window=2, negatives=5,
                 workers=2, sample=1e-3, seed=1, log=print,
                 analogies=True):
    """gensim Word2Vec CBOW (bench/gensim_cbow.py) on the same tokens,
    scored after every epoch (scoring time excluded); returns (points,
    model)."""
    return gensim_cbow.train_scored(
        corpus.gensim_sentences(ids, words),
        lambda w, v: score(w, v, analogies), epochs, dim, window, negatives,
        workers, sample, seed, log)


def write_word2vec(path, words, vectors):
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"{len(words)} {vectors.shape[1]}\n")
        for w, v in zip(words, vectors):
            f.write(w + " " + " ".join(f"{x:.6g}" for x in v) + "\n")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--embeddings", help="only score this file and exit")
    p.add_argument("--vocab", help="with --embeddings: vocab.txt of a "
                   "bare matrix")
    p.add_argument("--quick", action="store_true",
                   help="3 epochs each (about 1 minute on an idle machine)")
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--bs", type=int, default=1024)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--negatives", type=int, default=5)
    p.add_argument("--dim", type=int, default=100)
    p.add_argument("--schedule", choices=("linear", "constant"),
                   default="constant")
    p.add_argument("--duplicates", choices=("sqrt", "sum", "mean"),
                   default="sqrt", help="model_args.duplicates")
    p.add_argument("--learners", type=int, default=1,
                   help="simulate FedAvg with this many learners")
    p.add_argument("--bpe", type=int, default=50,
                   help="with --learners: batches per learner per round")
    p.add_argument("--eval-every", type=float, default=10.0,
                   help="seconds of our training between scores")
    p.add_argument("--no-analogies", action="store_true")
    p.add_argument("--no-gensim", action="store_true")
    p.add_argument("--no-ours", action="store_true")
    p.add_argument("--save-ours", help="write our embeddings here "
                   "(word2vec text format)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object at the end")
    a = p.parse_args(argv)

    if a.embeddings:
        r = evaluate.evaluate(a.embeddings, a.vocab, corpus.WORDSIM,
                              None if a.no_analogies else corpus.ANALOGIES)
        evaluate._print_text(r)
        return 0
    if a.quick:
        a.epochs = min(a.epochs, 3)
    log = (lambda *x: print(*x, file=sys.stderr)) if a.json else print
    words, counts, ids = load_text8()
    log(f"text8 prefix: {int((ids >= 0).sum()):,} words in the vocabulary, "
        f"{len(words):,} words (min count 5)")
    result = {"vocab": len(words)}
    analogies = not a.no_analogies
    if not a.no_ours:
        log(f"ours: neg, dim {a.dim}, bs {a.bs}, lr {a.lr} ({a.schedule}), "
            f"{a.negatives} negatives, {a.epochs} epochs, 1 thread"
            + (f", FedAvg {a.learners} learners x {a.bpe} batches/round"
               if a.learners > 1 else ""))
        pts, emb = train_ours(words, counts, ids, a.epochs, a.bs, a.lr,
                              a.negatives, a.dim, schedule=a.schedule,
                              learners=a.learners, bpe=a.bpe,
                              eval_every=a.eval_every, log=log,
                              analogies=analogies, duplicates=a.duplicates)
        result["ours"] = pts
        if a.save_ours:
            write_word2vec(a.save_ours, words, emb)
    if not a.no_gensim:
        log(f"gensim: CBOW, dim {a.dim}, 2 workers, {a.epochs} epochs")
        pts, _ = train_gensim(words, ids, a.epochs, a.dim, log=log,
                              analogies=analogies)
        result["gensim"] = pts
    if a.json:
        print(json.dumps(evaluate._json_safe(result)))
        return 0
    first = next(iter(result.get("ours", []) + result.get("gensim", [])),
                 {})
    print(f"\nWordSim353 pairs covered: {first.get('pairs', '-')}; analogy "
          f"questions covered: {first.get('questions', '-')}; seconds are "
          f"training time (scoring excluded); ours on 1 core, gensim on 2.")
    print("\n| run | seconds | epoch | WordSim353 rho | analogy acc |")
    print("|---|---:|---:|---:|---:|")
    for name in ("ours", "gensim"):
        for p in result.get(name, []):
            print(f"| {name} | {p['seconds']:.1f} | {p['epoch']} | "
                  f"{p['rho']:.3f} | {p.get('analogy', float('nan')):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
