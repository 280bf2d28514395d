#!/usr/bin/env python3
"""Vector quality against gensim CBOW: at equal data, and at equal training time, over corpora, windows and seeds.

For each corpus (--corpora: the text8 prefix in 1000-word lines, the King James Bible a verse a line), window
(--windows) and seed (--seeds), in one run:
- gensim Word2Vec CBOW (bench/gensim_cbow.py): dim 100, 5 negatives, min count 5, sample 1e-3, 2 workers,
  --epochs passes at its default rate (0.025, decaying linearly), on the corpus's tokens;
- fedavg_mpi, the one command (`mpiexec -n RANKS build/src/fedavg_mpi`, 1 pipeline, RANKS - 4 learners) on the
  same text: dim 100, --epochs passes, the whole vocabulary at min count 5, the default model and settings, then
  once more per --variant (NAME:KEY=VALUE[,KEY=VALUE...], each pair given as --set);
- with --equal-time, fedavg_mpi with the defaults once more, stopped at gensim's training seconds of the same
  corpus, window and seed if its --epochs passes take longer (--max-seconds: training time, start-up counted on
  neither side; its rate still decays over the --epochs passes).

Each system's final vectors are scored with python/evaluate.py: WordSim353 Spearman rho, SimLex-999 rho where
--simlex names the file (not shipped: the official SimLex-999.txt, or "word1 word2 score" lines), and 3CosAdd
accuracy on questions-words. Prints, per corpus, window and system, the median over the seeds with the lowest and
highest, and the median training seconds.

Usage: /usr/bin/python3 bench/vectors_vs_gensim.py [--corpora text8,bible] [--windows 2,5] [--seeds 1,2,3]
       [--epochs 5] [--ranks 6] [--simlex SimLex-999.txt] [--equal-time]
       [--variant NAME:KEY=VALUE[,KEY=VALUE...]] ... [--json]
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import corpus  # noqa: E402
import jobs  # noqa: E402
import quality  # noqa: E402
import time_to_quality  # noqa: E402

sys.path.insert(0, str(jobs.ROOT / "python"))
import evaluate  # noqa: E402

EQUAL_TIME = "fedavg_mpi, defaults, at most gensim's training seconds"


def variant(text):
    """NAME:KEY=VALUE[,KEY=VALUE...] -> (NAME, ["KEY=VALUE", ...])."""
    name, _, pairs = text.partition(":")
    settings = [p for p in pairs.split(",") if p]
    if not name or any("=" not in p for p in settings):
        raise argparse.ArgumentTypeError(f"expected NAME:KEY=VALUE[,KEY=VALUE...], got {text!r}")
    return name, settings


def scorer(simlex):
    """score(words, vectors) -> {"rho", "analogy", ...}, with "simlex" where the pairs are given."""
    def score(words, vectors):
        s = quality.score(words, vectors)
        if simlex:
            s["simlex"] = evaluate.similarity(words, vectors, str(simlex))["rho"]
        return s
    return score


def run_fedavg(text, window, seed, a, settings, score, seconds=0.0):
    """(scores, training seconds) of one fedavg_mpi run's final vectors; `seconds` > 0: at most that much
    training."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        cmd = [jobs.MPIEXEC, "-n", str(a.ranks), str(jobs.APP), "--out", str(out), "--dim", "100", "--window",
               str(window), "--epoch", str(a.epochs), "--min-count", "5", "--seed", str(seed)]
        if seconds:
            cmd += ["--max-seconds", f"{seconds:.2f}"]
        for s in settings:
            cmd += ["--set", s]
        proc = subprocess.run(cmd + [str(text)], capture_output=True, text=True, timeout=3600)
        if proc.returncode != 0:
            raise SystemExit(f"fedavg_mpi failed: {proc.stderr.strip().splitlines()[-1:]}")
        words, vectors = evaluate.load_word2vec(str(out / f"{text.stem}.w2v.bin"))
        rows = (out / f"{text.stem}_metrics.csv").read_text().splitlines()
        return score(words, vectors), float(dict(zip(rows[0].split(","), rows[-1].split(",")))["seconds"])


def corpus_text(name):
    """(the file fedavg_mpi reads, the words at min count 5, the token ids gensim's sentences come from)."""
    if name == "text8":
        words, _, ids = quality.load_text8()
        return time_to_quality.text8_lines(jobs.ROOT / "data" / "text8_lines.txt"), words, ids
    path = jobs.bible_corpus()
    text = path.read_text(encoding="utf-8")
    words, _ = corpus.build_vocab(text, 5)
    return path, words, corpus.token_lines(text, words)


def summary(scores):
    """{figure: (median, lowest, highest)} over the seeds, for every figure the scores hold."""
    return {k: (statistics.median(s[k] for s in scores), min(s[k] for s in scores), max(s[k] for s in scores))
            for k in scores[0]}


def measure(name, a, score):
    """The summaries of every system on corpus `name`, window by window."""
    text, words, ids = corpus_text(name)
    systems = [("gensim", None), ("fedavg_mpi, defaults", [])] + \
        [(f"fedavg_mpi, {v}", settings) for v, settings in a.variant] + ([(EQUAL_TIME, [])] if a.equal_time else [])
    results = []
    for window in a.windows:
        scores = {system: [] for system, _ in systems}
        for seed in a.seeds:
            gensim_seconds = 0.0
            for system, settings in systems:
                if settings is None:
                    points, model = quality.train_gensim(words, ids, epochs=a.epochs, window=window, seed=seed,
                                                         log=lambda *_: None)
                    s = score(list(model.wv.index_to_key), model.wv.vectors)
                    s["seconds"] = gensim_seconds = points[-1]["seconds"]
                else:
                    s, seconds = run_fedavg(text, window, seed, a, settings, score,
                                            gensim_seconds if system == EQUAL_TIME else 0.0)
                    s["seconds"] = seconds
                scores[system].append({k: s[k] for k in ("rho", "simlex", "analogy", "seconds") if k in s})
                print(f"{name} window {window} seed {seed} {system}: " +
                      " ".join(f"{k} {v:.3f}" for k, v in scores[system][-1].items()), file=sys.stderr, flush=True)
        for system, settings in systems:
            results.append({"corpus": name, "window": window, "system": system, "settings": settings or [],
                            **summary(scores[system])})
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", type=jobs.comma_list(str), default=["text8"], help="text8, bible")
    ap.add_argument("--windows", type=jobs.comma_list(int), default=[2, 5])
    ap.add_argument("--seeds", type=jobs.comma_list(int), default=[1, 2, 3])
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--ranks", type=int, default=6, help="mpiexec -n (default 6: 2 learners)")
    ap.add_argument("--simlex", help="SimLex-999 (not shipped): its rho joins the scores")
    ap.add_argument("--equal-time", action="store_true", help="also fedavg_mpi given gensim's training seconds")
    ap.add_argument("--variant", type=variant, action="append", default=[])
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if any(c not in ("text8", "bible") for c in a.corpora):
        ap.error(f"--corpora: text8 or bible, got {','.join(a.corpora)}")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        score = scorer(quality.simlex_pairs(a.simlex, tmp) if a.simlex else None)
        for name in a.corpora:
            results += measure(name, a, score)
    if a.json:
        print(json.dumps(results, indent=2))
        return
    print(f"dim 100, {a.epochs} epochs, min count 5, sample 1e-3; fedavg_mpi -n {a.ranks}; medians over seeds "
          f"{','.join(map(str, a.seeds))} [lowest, highest]\n")
    figures = [("rho", "WordSim353 rho")] + ([("simlex", "SimLex-999 rho")] if a.simlex else []) + \
        [("analogy", "analogy accuracy")]
    rows = [[r["corpus"], str(r["window"]), r["system"], " ".join(r["settings"]) or "-"] +
            ["{:.3f} [{:.3f}, {:.3f}]".format(*r[k]) for k, _ in figures] + [f"{r['seconds'][0]:.1f}"]
            for r in results]
    print(jobs.table(rows, ["corpus", "window", "system", "settings"] + [t for _, t in figures] + ["training s"]))


if __name__ == "__main__":
    main()
