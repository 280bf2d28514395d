#!/usr/bin/env python3
"""Time to quality on the text8 prefix, 2 cores: fedavg_mpi under mpiexec (1 pipeline, 2 learners, the
default neg model, dim 100, window 2, 5 negatives, min count 5) against gensim Word2Vec CBOW with 2 workers
and the same settings, in the same run. fedavg_mpi is run once per training budget (--budgets seconds) at the
default constant learning rate, then again for as many rounds as that run took with model_args.lr_schedule
"linear" (the rate decays to ~0 over the run, as gensim's does; it needs the run's length in advance), and
the final embeddings of each run are scored; gensim is scored after every epoch. Prints WordSim353 Spearman
rho and analogy accuracy (3CosAdd) against training seconds for all. --strategies fedavg,hogwild runs all of
that for each strategy named.

Usage: /usr/bin/python3 bench/time_to_quality.py [--budgets 10 20 40] [--epochs 8] [--strategies fedavg]
       [--json]
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import corpus  # noqa: E402
import jobs  # noqa: E402
import quality  # noqa: E402

sys.path.insert(0, str(jobs.ROOT / "python"))
import evaluate  # noqa: E402


def text8_lines(path):
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(corpus.read_corpus("text8"))
    return path


def score_file(w2v):
    words, vectors = evaluate.load_word2vec(str(w2v))
    return quality.score(words, vectors)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budgets", type=float, nargs="+", default=[10, 20, 40])
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--lr", type=float, default=0.2, help="neg learning rate (0.2 suits averaging rounds)")
    ap.add_argument("--strategies", default="fedavg", help="comma-separated cfg.json strategies to run, each as above")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    text8 = text8_lines(jobs.ROOT / "data" / "text8_lines.txt")
    ours = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        subprocess.run([*jobs.PREPARE, str(text8), "--out", str(tmp / "cfg"),
                        "--train-out", str(tmp / "train.txt"), "--data-name", "text8", "--vocab-size", "1000000",
                        "--min-count", "5", "--test-windows", "1000", "--dim", "100", "--lr", str(args.lr)],
                       check=True, capture_output=True)
        base = json.loads((tmp / "cfg" / "cfg.json").read_text())
        for strategy, budget in [(st, b) for st in args.strategies.split(",") for b in args.budgets]:
            rounds = None
            for schedule in ("constant", "linear"):
                cfg = dict(base, target=0, max_rounds=100000, max_seconds=budget, strategy=strategy)
                if schedule == "linear":  # as many rounds as the constant run, the rate decaying over them
                    cfg.update(max_rounds=rounds, max_seconds=10 * budget, model_args={"lr_schedule": "linear"})
                (tmp / "cfg" / "cfg.json").write_text(json.dumps(cfg))
                out = tmp / f"out{budget:g}_{schedule}_{strategy}"
                metrics, _, _ = jobs.run(6, [tmp / "train.txt"], tmp / "cfg", out, sample_every=5)
                rounds = int(metrics[-1]["round"])
                s = score_file(out / "text8.w2v.txt")
                point = {"strategy": strategy, "schedule": schedule, "seconds": metrics[-1]["seconds"],
                         "rounds": rounds,
                         "windows_per_learner": metrics[-1]["windows_per_learner"],
                         "test_loss": metrics[-1]["test_loss"], **s}
                ours.append(point)
                print(f"  fedavg_mpi {strategy} {schedule} {point['seconds']:6.1f} s  rho {s['rho']:.3f}  "
                      f"analogy {s['analogy']:.3f}", file=sys.stderr, flush=True)
    words, counts, ids = quality.load_text8()
    theirs, _ = quality.train_gensim(words, ids, epochs=args.epochs, dim=100, workers=2,
                                     log=lambda *a, **k: print(*a, file=sys.stderr, **k))
    if args.json:
        print(json.dumps({"fedavg_mpi": ours, "gensim": theirs}, indent=2))
        return

    # The quality to reach: 99 % of gensim's best rho in this run (its last epochs differ by less than that).
    goal = 0.99 * max(p["rho"] for p in theirs)

    def first_reaching(points):
        hit = [p["seconds"] for p in points if p["rho"] >= goal]
        return min(hit) if hit else float("nan")

    print("\n## Time to quality, text8 prefix (2.1 M words), 2 cores\n")
    rows = [[f"fedavg_mpi {p['strategy']}, 2 learners, {p['schedule']} lr, {p['rounds']} rounds", f"{p['seconds']:.1f}",
             f"{p['rho']:.3f}", f"{p['analogy']:.3f}"] for p in ours]
    rows += [[f"gensim, 2 workers, epoch {p['epoch']}", f"{p['seconds']:.1f}", f"{p['rho']:.3f}",
              f"{p.get('analogy', float('nan')):.3f}"] for p in theirs]
    print(jobs.table(rows, ["system", "training seconds", "WordSim353 rho", "analogy accuracy"]))
    b = first_reaching(theirs)
    for strategy in args.strategies.split(","):
        a = first_reaching([p for p in ours if p["strategy"] == strategy])
        print(f"\nfirst time with rho >= {goal:.3f} (99 % of gensim's best): fedavg_mpi {strategy} {a:.1f} s, "
              f"gensim {b:.1f} s (ratio {a / b:.2f}; goal <= 2)")
    best = max(ours, key=lambda p: p["analogy"])
    print(f"best analogy accuracy: fedavg_mpi {best['analogy']:.3f} ({best['strategy']}, {best['schedule']} lr, "
          f"{best['seconds']:.1f} s), "
          f"gensim {max(p.get('analogy', 0.0) for p in theirs):.3f}")


if __name__ == "__main__":
    main()
