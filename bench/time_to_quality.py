#!/usr/bin/env python3
"""Time to quality on the text8 prefix, 2 cores, start-up included: the wall time from launch at which
fedavg_mpi's WordSim353 rho first reaches gensim's final rho, against gensim's wall time to the end of its
training.

Both train on the same file, the text8 prefix cut into lines of 1000 words (data/text8_lines.txt), and are
timed from the moment their process is launched, one after the other:

- gensim (bench/gensim_cbow.py, a fresh process: interpreter, import gensim, reading the text, build_vocab and
  training count): Word2Vec CBOW, dim 100, window 2, 5 negatives, min count 5, sample 1e-3, 2 workers,
  --epochs passes (5) at its default rate (0.025, decaying linearly to 0). Its final vectors are scored.
- fedavg_mpi: one run of the one command (`mpiexec -n 6 build/src/fedavg_mpi ...`, no --config: it prepares
  its config itself; 1 pipeline, 2 learners), the default model (neg, fused step), dim 100, window 2, 5
  negatives, min count 5 (every word of gensim's vocabulary), the default bs and bpe, --epochs passes, the
  model's default rate (--lr, --schedule change it), with `--similarity` and `eval_every` (--eval-every rounds,
  and round 0): the Dispatcher scores rho in the run and writes it to the metrics, and the bench notes the wall
  time at which each metrics row appears (polled every 20 ms). That scoring is part of the run's time; its cost
  is measured on the final vectors and printed. Analogies are scored in the run only with --in-run-analogies
  (about a second each on 2 cores, while the next round waits): a second run of each strategy scores them, and
  the first round whose accuracy reaches gensim's final accuracy there is timed in the first run (the table's
  analogy column comes from the second run); otherwise only the final vectors' analogy accuracy is given.

fedavg_mpi holds out 1000 test windows (16 pieces of 512 bytes) that gensim trains on. Prints one table (system,
wall seconds since launch, rho, analogy accuracy), the first wall time at which fedavg_mpi's rho >= gensim's
final rho with gensim's wall time and their ratio (goal <= 0.8, as for the analogies), and where each system's
time went.
--strategies fedavg,hogwild makes one fedavg_mpi run per strategy.

--simlex FILE (SimLex-999, not shipped: the official SimLex-999.txt, or "word1 word2 score" lines) adds a run of
each strategy that scores SimLex-999 rho in the run instead of WordSim353, timed against gensim's final SimLex rho.

Usage: /usr/bin/python3 bench/time_to_quality.py [--epochs 5] [--eval-every 1] [--schedule auto|constant|linear]
       [--lr X] [--strategies fedavg] [--in-run-analogies] [--simlex SimLex-999.txt] [--json]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import corpus  # noqa: E402
import jobs  # noqa: E402
import quality  # noqa: E402

sys.path.insert(0, str(jobs.ROOT / "python"))
import evaluate  # noqa: E402

POLL = 0.02  # seconds between looks at the metrics file


def text8_lines(path):
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(corpus.read_corpus("text8"))
    return path


def score_file(path):
    words, vectors = evaluate.load_word2vec(str(path))
    return quality.score(words, vectors)


def run_gensim(text8, tmp, epochs, simlex=None):
    """gensim in a fresh process: its phases in seconds since launch, and its final scores (SimLex-999 rho too
    where `simlex` names its pairs)."""
    vectors = tmp / "gensim.w2v.bin"
    cmd = [jobs.PYTHON, str(HERE / "gensim_cbow.py"), str(text8), str(vectors), "--epochs", str(epochs)]
    launched = time.monotonic()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    r = json.loads(out.strip().splitlines()[-1])
    t = {k: v - launched for k, v in r["times"].items()}
    words, matrix = evaluate.load_word2vec(str(vectors))
    scores = quality.score(words, matrix)
    if simlex:
        scores["simlex"] = evaluate.similarity(words, matrix, str(simlex))["rho"]
    return {"system": "gensim", "wall": t["trained"], "phases": t, "vocab_size": r["vocab_size"], **scores}


def fedavg_command(text8, out, strategy, a, analogies, similarity):
    cmd = [jobs.MPIEXEC, "-n", "6", str(jobs.APP), "--out", str(out), "--strategy", strategy, "--dim", "100",
           "--window", "2", "--epoch", str(a.epochs), "--vocab-size", "1000000", "--min-count", "5",
           "--similarity", str(similarity), "--set", f"eval_every={a.eval_every}"]
    if analogies:
        cmd += ["--analogies", str(corpus.ANALOGIES)]
    if a.lr:
        cmd += ["--lr", str(a.lr)]
    if a.schedule != "auto":
        cmd += ["--lr-schedule", a.schedule]
    return cmd + [str(text8)]


class Tail:
    """The whole lines a growing file gained since the last call."""

    def __init__(self, path):
        self.path, self.offset = path, 0

    def lines(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                chunk = f.read()
        except FileNotFoundError:
            return []
        complete = chunk[:chunk.rfind(b"\n") + 1]
        self.offset += len(complete)
        return complete.decode(errors="replace").splitlines()


def run_fedavg(text8, tmp, strategy, a, analogies=False, simlex=None):
    """One fedavg_mpi run: its metrics rows, each with the wall seconds since launch at which it appeared;
    `analogies`: the analogies are scored in the run too; `simlex`: SimLex-999's pairs are the run's similarity
    file, in place of WordSim353."""
    strategy_name, strategy = strategy, strategy + ("_analogies" if analogies else "") + ("_simlex" if simlex else "")
    similarity = simlex or corpus.WORDSIM
    out = tmp / f"out_{strategy}"
    metrics_path = out / f"{text8.stem}_metrics.csv"
    cmd = fedavg_command(text8, out, strategy_name, a, analogies, similarity)
    env = {**os.environ, "MPIEXEC_TIMEOUT": str(a.timeout)}
    stdout_path = tmp / f"{strategy}.stdout"
    rows, header, printed = [], None, []
    metrics, lines = Tail(metrics_path), Tail(stdout_path)
    with open(stdout_path, "w") as out_f, open(tmp / f"{strategy}.stderr", "w") as err_f:
        launched = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=out_f, stderr=err_f, env=env)
        while True:
            finished = proc.poll() is not None
            new_rows, new_lines = metrics.lines(), lines.lines()
            seen = time.monotonic() - launched
            printed += [[seen, line] for line in new_lines]
            for line in new_rows:
                if header is None:
                    header = line.split(",")
                else:
                    rows.append({**dict(zip(header, map(float, line.split(",")))), "wall": seen})
            if finished:
                break
            if seen > a.timeout + 60:
                proc.kill()
            time.sleep(POLL)
        ended = time.monotonic() - launched
    if proc.returncode != 0:
        raise RuntimeError(f"fedavg_mpi failed ({proc.returncode}): {' '.join(cmd)}\n"
                           f"{(tmp / f'{strategy}.stderr').read_text()[-3000:]}")
    cfg = json.loads((out / "config" / "cfg.json").read_text())
    final = score_file(out / f"{text8.stem}.w2v.bin")
    # The cost of one in-run evaluation: the Dispatcher's scorer (python/evaluate.py) on the final vectors.
    words, vectors = evaluate.load_word2vec(str(out / f"{text8.stem}.w2v.bin"))
    scorer = evaluate.Scorer(words, str(similarity), corpus.ANALOGIES if analogies else None)
    costs = []
    for _ in range(3):
        t = time.perf_counter()
        scorer(vectors)
        costs.append(time.perf_counter() - t)
    # Training seconds (the metrics' clock) restart, after the round-0 evaluation, once every learner has set up:
    # the wall time of any later row minus its seconds, plus round 0's, is when training began (the earliest
    # estimate is the least delayed by the polling).
    began = min(r["wall"] - r["seconds"] for r in rows[1:]) + rows[0]["seconds"] if len(rows) > 1 else float("nan")
    scored = [r for r in rows if r["similarity"] == r["similarity"]]
    prepared = next((t for t, line in printed if "prepared the config" in line), float("nan"))
    return {"system": "fedavg_mpi", "strategy": strategy_name, "command": cmd, "cfg": cfg, "rows": rows,
            "stdout": printed, "config_prepared": prepared,
            "training_began": began, "ended": ended, "evaluations": len(scored),
            "evaluation_seconds": sorted(costs)[1], "final": final}


# fedavg_mpi's wall time to gensim's final score, at most this share of gensim's.
GOAL = 0.8


def crossing(run, goal, column="similarity"):
    """The first scored row whose `column` (similarity: rho; analogy: accuracy) reaches the goal, or None."""
    return next((r for r in run["rows"] if r[column] >= goal), None)


def analogy_crossing(run, goal):
    """(round, accuracy, wall) of the first round whose analogy accuracy, in the run that scored them, reaches the
    goal, with that round's wall time in the run that did not (scoring them holds each next round back); None."""
    hit = crossing(run["analogy_run"], goal, "analogy")
    if hit is None:
        return None
    same = next((r for r in run["rows"] if r["round"] >= hit["round"]), run["rows"][-1])
    return hit["round"], hit["analogy"], same["wall"]


def report(g, runs, a):
    goal = g["rho"]
    shown = next((m.group(1) for _, line in runs[0]["stdout"] for m in [re.search(r"\blr ([0-9.e+-]+)", line)] if m),
                 "?")
    lr = f"lr {a.lr}" if a.lr else "the model's default lr"
    print("\n## Time to quality, text8 prefix (2.1 M words), 2 cores, start-up included\n")
    print(f"gensim: Word2Vec CBOW, 2 workers, dim 100, window 2, 5 negatives, min count 5 (V = {g['vocab_size']:,}), "
          f"sample 1e-3, {a.epochs} epochs, default rate (0.025, linear decay), a fresh process. fedavg_mpi: "
          f"`mpiexec -n 6` (1 pipeline, 2 learners), neg, dim 100, window 2, bs {runs[0]['cfg']['bs']}, bpe "
          f"{runs[0]['cfg']['bpe']}, {lr} ({a.schedule} schedule: {shown} in round 1), {a.epochs} epochs, "
          f"WordSim353 scored in the run every {a.eval_every} round(s) (eval_every)"
          f"{'; the analogy column comes from a second run that scores them' if a.in_run_analogies else ''}. "
          "Wall seconds count from the launch of each process; fedavg_mpi's are when each metrics row appeared.\n")
    rows = [["gensim, end of training", f"{g['wall']:.1f}", f"{g['rho']:.3f}", f"{g['analogy']:.3f}"]]
    for run in runs:
        last = run["rows"][-1]
        scored = {r["round"]: r["analogy"] for r in run.get("analogy_run", {}).get("rows", [])}
        for r in run["rows"]:
            ana = scored.get(r["round"], r["analogy"])
            ana = ana if ana == ana else (run["final"]["analogy"] if r is last else None)
            rows.append([f"fedavg_mpi {run['strategy']}, round {int(r['round'])}", f"{r['wall']:.1f}",
                         f"{r['similarity']:.3f}", "-" if ana is None else f"{ana:.3f}"])
    print(jobs.table(rows, ["system", "wall seconds since launch", "WordSim353 rho", "analogy accuracy"]))
    ph = g["phases"]
    print(f"\nWhere the time goes. gensim: {g['wall']:.1f} s = start-up {ph['vocab']:.1f} s (interpreter "
          f"{ph['began']:.1f}, import gensim {ph['imported'] - ph['began']:.1f}, reading the text "
          f"{ph['read'] - ph['imported']:.1f}, build_vocab {ph['vocab'] - ph['read']:.1f}) + training "
          f"{ph['trained'] - ph['vocab']:.1f} s.")
    for run in runs:
        hit = crossing(run, goal)
        rows, began = run["rows"], run["training_began"]
        to_hit = "" if hit is None else f"{hit['wall'] - began:.1f} s of them to round {int(hit['round'])}, "
        print(f"fedavg_mpi {run['strategy']}: start-up {began:.1f} s (launch to training: rank 0 prepares the "
              f"config, {run['config_prepared']:.1f} s, then the ranks' set-up (the model's creation on the "
              f"Dispatcher and the learners), and the round-0 test loss and score) + training "
              f"{rows[-1]['wall'] - began:.1f} s "
              f"for {int(rows[-1]['round'])} rounds ({to_hit}"
              f"{run['evaluations']} in-run scores of {run['evaluation_seconds'] * 1000:.1f} ms each: "
              f"{run['evaluations'] * run['evaluation_seconds']:.2f} s, the scorer on the final vectors) + "
              f"{run['ended'] - rows[-1]['wall']:.1f} s to exit (final outputs).")
    print()
    for run in runs:
        hit = crossing(run, goal)
        if hit is None:
            best = max(r["similarity"] for r in run["rows"] if r["similarity"] == r["similarity"])
            print(f"first wall time with rho >= {goal:.3f} (gensim's final): fedavg_mpi {run['strategy']} never "
                  f"(best {best:.3f}), gensim {g['wall']:.1f} s (goal: ratio <= {GOAL})")
        else:
            print(f"first wall time with rho >= {goal:.3f} (gensim's final): fedavg_mpi {run['strategy']} "
                  f"{hit['wall']:.1f} s (round {int(hit['round'])}, rho {hit['similarity']:.3f}), gensim "
                  f"{g['wall']:.1f} s: ratio {hit['wall'] / g['wall']:.2f} (goal <= {GOAL})")
        if not a.in_run_analogies:
            continue
        hit = analogy_crossing(run, g["analogy"])
        if hit is None:
            print(f"first wall time with analogy accuracy >= {g['analogy']:.3f} (gensim's final): fedavg_mpi "
                  f"{run['strategy']} never")
            continue
        print(f"first wall time with analogy accuracy >= {g['analogy']:.3f} (gensim's final): fedavg_mpi "
              f"{run['strategy']} {hit[2]:.1f} s (round {int(hit[0])} of the run without in-run analogies; "
              f"accuracy {hit[1]:.3f} in the run with them), gensim {g['wall']:.1f} s: ratio {hit[2] / g['wall']:.2f} "
              f"(goal <= {GOAL})")
    for run in runs:
        if "simlex_run" not in run:
            continue
        hit = crossing(run["simlex_run"], g["simlex"])
        reached = "never" if hit is None else (f"{hit['wall']:.1f} s (round {int(hit['round'])}, rho "
                                               f"{hit['similarity']:.3f}), gensim {g['wall']:.1f} s: ratio "
                                               f"{hit['wall'] / g['wall']:.2f} (goal <= {GOAL})")
        print(f"first wall time with SimLex-999 rho >= {g['simlex']:.3f} (gensim's final): fedavg_mpi "
              f"{run['strategy']} {reached}, in a run that scores SimLex-999 in place of WordSim353")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--epochs", type=int, default=5, help="passes over the text, both systems")
    ap.add_argument("--eval-every", type=int, default=1, help="fedavg_mpi's eval_every, in rounds")
    ap.add_argument("--schedule", choices=("auto", "constant", "linear"), default="auto",
                    help="fedavg_mpi's model_args.lr_schedule")
    ap.add_argument("--lr", type=float, help="fedavg_mpi's lr (default: the model's)")
    ap.add_argument("--strategies", default="fedavg", help="comma-separated strategies, one fedavg_mpi run each")
    ap.add_argument("--in-run-analogies", action="store_true", help="fedavg_mpi also scores analogies in the run")
    ap.add_argument("--simlex", help="SimLex-999 (not shipped): a run of each strategy scores it in the run")
    ap.add_argument("--timeout", type=int, default=600, help="seconds a fedavg_mpi run may take")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    text8 = text8_lines(jobs.ROOT / "data" / "text8_lines.txt")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        simlex = quality.simlex_pairs(a.simlex, tmp) if a.simlex else None
        g = run_gensim(text8, tmp, a.epochs, simlex)
        print(f"  gensim {g['wall']:.1f} s rho {g['rho']:.3f} analogy {g['analogy']:.3f}", file=sys.stderr,
              flush=True)
        runs = []
        for strategy in a.strategies.split(","):
            runs.append(run_fedavg(text8, tmp, strategy, a))
            if a.in_run_analogies:
                runs[-1]["analogy_run"] = run_fedavg(text8, tmp, strategy, a, analogies=True)
            if simlex:
                runs[-1]["simlex_run"] = run_fedavg(text8, tmp, strategy, a, simlex=simlex)
            hit = crossing(runs[-1], g["rho"])
            print(f"  fedavg_mpi {strategy}: rho >= {g['rho']:.3f} at "
                  f"{'never' if hit is None else format(hit['wall'], '.1f') + ' s'}; final rho "
                  f"{runs[-1]['final']['rho']:.3f} at {runs[-1]['rows'][-1]['wall']:.1f} s",
                  file=sys.stderr, flush=True)
    if a.json:
        for run in runs:
            hit = crossing(run, g["rho"])
            run["reached"] = None if hit is None else hit["wall"]
            run["ratio"] = None if hit is None else hit["wall"] / g["wall"]
        print(json.dumps(evaluate._json_safe({"gensim": g, "fedavg_mpi": runs, "goal_ratio": GOAL}), indent=2))
        return
    report(g, runs, a)


if __name__ == "__main__":
    main()
