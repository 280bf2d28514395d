#!/usr/bin/env python3
"""Vector quality at equal data: fedavg_mpi against gensim CBOW on the text8 prefix, over windows and seeds.

For each window (--windows) and seed (--seeds), in one run:
- gensim Word2Vec CBOW (bench/gensim_cbow.py): dim 100, 5 negatives, min count 5, sample 1e-3, 2 workers,
  --epochs passes at its default rate (0.025, decaying linearly), on the text8 prefix's tokens;
- fedavg_mpi, the one command (`mpiexec -n RANKS build/src/fedavg_mpi`, 1 pipeline, RANKS - 4 learners) on the
  same text in 1000-word lines: dim 100, --epochs passes, the whole vocabulary at min count 5, the default
  model and settings, then once more per --variant (NAME:KEY=VALUE[,KEY=VALUE...], each pair given as --set).

Each system's final vectors are scored with python/evaluate.py: WordSim353 Spearman rho and 3CosAdd accuracy on
questions-words. Prints, per window and system, the median over the seeds with the lowest and highest.

Usage: /usr/bin/python3 bench/vectors_vs_gensim.py [--windows 2,5] [--seeds 1,2,3] [--epochs 5] [--ranks 6]
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
import jobs  # noqa: E402
import quality  # noqa: E402
import time_to_quality  # noqa: E402

sys.path.insert(0, str(jobs.ROOT / "python"))
import evaluate  # noqa: E402


def variant(text):
    """NAME:KEY=VALUE[,KEY=VALUE...] -> (NAME, ["KEY=VALUE", ...])."""
    name, _, pairs = text.partition(":")
    settings = [p for p in pairs.split(",") if p]
    if not name or any("=" not in p for p in settings):
        raise argparse.ArgumentTypeError(f"expected NAME:KEY=VALUE[,KEY=VALUE...], got {text!r}")
    return name, settings


def run_fedavg(text8, window, seed, a, settings):
    """Scores of one fedavg_mpi run's final vectors."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        cmd = ["mpiexec", "-n", str(a.ranks), str(jobs.APP), "--out", str(out), "--dim", "100", "--window",
               str(window), "--epoch", str(a.epochs), "--vocab-size", "1000000", "--min-count", "5",
               "--seed", str(seed)]
        for s in settings:
            cmd += ["--set", s]
        proc = subprocess.run(cmd + [str(text8)], capture_output=True, text=True, timeout=3600)
        if proc.returncode != 0:
            raise SystemExit(f"fedavg_mpi failed: {proc.stderr.strip().splitlines()[-1:]}")
        words, vectors = evaluate.load_word2vec(str(out / f"{text8.stem}.w2v.bin"))
        return quality.score(words, vectors)


def summary(scores):
    """{"rho": (median, low, high), "analogy": ...} over the seeds."""
    return {k: (statistics.median(s[k] for s in scores), min(s[k] for s in scores), max(s[k] for s in scores))
            for k in ("rho", "analogy")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--windows", type=jobs.comma_list(int), default=[2, 5])
    ap.add_argument("--seeds", type=jobs.comma_list(int), default=[1, 2, 3])
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--ranks", type=int, default=6, help="mpiexec -n (default 6: 2 learners)")
    ap.add_argument("--variant", type=variant, action="append", default=[])
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    text8 = time_to_quality.text8_lines(jobs.ROOT / "data" / "text8_lines.txt")
    words, _, ids = quality.load_text8()
    systems = [("gensim", None), ("fedavg_mpi, defaults", [])] + \
        [(f"fedavg_mpi, {name}", settings) for name, settings in a.variant]
    results = []
    for window in a.windows:
        scores = {name: [] for name, _ in systems}
        for seed in a.seeds:
            for name, settings in systems:
                if settings is None:
                    points, _ = quality.train_gensim(words, ids, epochs=a.epochs, window=window, seed=seed,
                                                     log=lambda *_: None)
                    s = points[-1]
                else:
                    s = run_fedavg(text8, window, seed, a, settings)
                scores[name].append({"rho": s["rho"], "analogy": s["analogy"]})
                print(f"window {window} seed {seed} {name}: rho {s['rho']:.3f} analogy {s['analogy']:.3f}",
                      file=sys.stderr, flush=True)
        for name, settings in systems:
            results.append({"window": window, "system": name, "settings": settings, **summary(scores[name])})
    if a.json:
        print(json.dumps(results, indent=2))
        return
    print(f"text8 prefix, dim 100, {a.epochs} epochs, min count 5, sample 1e-3; fedavg_mpi -n {a.ranks}; "
          f"medians over seeds {','.join(map(str, a.seeds))} [lowest, highest]\n")
    rows = [[str(r["window"]), r["system"], " ".join(r["settings"] or []) or "-",
             "{:.3f} [{:.3f}, {:.3f}]".format(*r["rho"]), "{:.3f} [{:.3f}, {:.3f}]".format(*r["analogy"])]
            for r in results]
    print(jobs.table(rows, ["window", "system", "settings", "WordSim353 rho", "analogy accuracy"]))


if __name__ == "__main__":
    main()
