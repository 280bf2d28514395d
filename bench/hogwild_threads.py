#!/usr/bin/python3
"""How much data L learners that share one copy of the weights need, when
they really run at once.

L threads train the `neg` model's fused step (fedavg_kernels, which releases
the GIL) on one shared table, in place and without locks, as hogwild's
learners do on one host. Every round each thread trains its share of
`--round-batches` batches (a fixed total, however many learners), then the
test loss is evaluated. It prints, per learner count, the windows per learner
until the test loss reached each target and the speedup against one learner.

On a machine with fewer cores than learners the threads take turns, and each
sees the others' writes before it reads: that is one learner's data, not what
L cores running at once do. The figures mean something only with a core per
learner; the script prints the cores it had.

  /usr/bin/python3 bench/hogwild_threads.py --learners 1,2,4,8,16
"""
import argparse
import os
import sys
import threading
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import corpus  # noqa: E402,F401  (puts python/ and the kernels' build folder on sys.path)
import learner_throughput as lt  # noqa: E402

import fedavg_kernels as kernels  # noqa: E402


def noise_table(counts, power, size, rng):
    p = np.asarray(counts, dtype=np.float64) ** power
    p /= p.sum()
    return rng.choice(len(counts), size=size, p=p).astype(np.int64)


def test_loss(table, test, noise, window):
    total = 0.0
    for at in range(0, test.shape[0], 4096):
        chunk = np.ascontiguousarray(test[at:at + 4096])
        total += kernels.neg_cbow_loss(
            table, chunk, noise[at * 5:(at + chunk.shape[0]) * 5], window)
    return total / test.shape[0]


def expected_counts(train, counts, windows, window, negatives=5):
    """Per row of the [2V, D] table, its expected occurrences in a step of
    `windows` windows: as a context word for the input rows; as the target
    or a noise word for the output rows."""
    vocab = len(counts)
    n = train.shape[0]
    ctx = np.delete(train, window, axis=1).ravel()
    per_in = np.bincount(ctx, minlength=vocab) / n
    p = np.asarray(counts, dtype=np.float64) ** 0.75
    per_out = np.bincount(train[:, window], minlength=vocab) / n \
        + negatives * p / p.sum()
    return np.concatenate([per_in, per_out]) * windows


def run(learners, args, train, test, counts, test_noise):
    vocab, dim = len(counts), args.dim
    bs = args.batch
    # --split: each learner's batch in steps of bs / L windows, so that the
    # L learners' concurrent steps make one step of bs windows, and the
    # duplicates rule counts the rows' occurrences in all of them.
    block, extra = 0, None
    if args.split and learners > 1:
        block = max(1, bs // learners)
        extra = ((learners - 1) * expected_counts(
            train, counts, block, args.window)).astype(np.float32)
    rng = np.random.default_rng(args.seed)
    table = np.zeros((2 * vocab, dim), np.float32)
    table[:vocab] = rng.uniform(-0.5 / dim, 0.5 / dim, (vocab, dim))
    batches = train.shape[0] // bs
    per_round = max(1, args.round_batches // learners)
    draws = 64  # batches' worth of noise words per learner, reused in turn
    noise = [noise_table(counts, 0.75, draws * bs * 5,
                         np.random.default_rng(args.seed + 100 + i))
             for i in range(learners)]
    state = {"next": 0}
    barrier = threading.Barrier(learners + 1)
    stop = threading.Event()
    failed = []

    def batch(i, s, k):
        b = (state["next"] + s * learners + i) % batches
        z = (k % draws) * bs * 5
        return train[b * bs:(b + 1) * bs], noise[i][z:z + bs * 5]

    def step(target, ids, words, block_size):
        kernels.neg_cbow_step(target, ids, words, args.window, args.lr,
                              "sqrt", None, extra, block_size)

    def lockstep(k):
        # Every learner's step taken at the same weights, the changes added:
        # what L learners running at once do if none sees the others' writes
        # of the step (the most stale hogwild can be).
        size = block or bs
        for s in range(per_round):
            mine = [batch(i, s, k) for i in range(learners)]
            k += 1
            for at in range(0, bs, size):
                start = table.copy()
                total = np.zeros_like(table)
                for ids, words in mine:
                    part = start.copy()
                    step(part, ids[at:at + size],
                         words[at * 5:(at + size) * 5], 0)
                    total += part - start
                table[:] = start + total
        return k

    def learner(i):
        k = 0
        try:
            while True:
                barrier.wait()
                if stop.is_set():
                    return
                if args.emulate_sum:
                    if i == 0:
                        k = lockstep(k)
                    barrier.wait()
                    continue
                for s in range(per_round):
                    ids, words = batch(i, s, k)
                    k += 1
                    step(table, ids, words, block)
                barrier.wait()
        except Exception as e:  # a diverged step: the loss is not finite
            failed.append(str(e))
            stop.set()
            barrier.abort()

    threads = [threading.Thread(target=learner, args=(i,), daemon=True)
               for i in range(learners)]
    for t in threads:
        t.start()
    reached = {}
    curve = []
    per_learner = 0
    training = 0.0
    try:
        while per_learner < args.max_windows and len(reached) < len(
                args.targets):
            t0 = time.perf_counter()
            barrier.wait()  # go
            barrier.wait()  # round done
            training += time.perf_counter() - t0
            state["next"] = (state["next"] + per_round * learners) % batches
            per_learner += per_round * bs
            loss = test_loss(table, test, test_noise, args.window)
            curve.append((per_learner, loss))
            if not np.isfinite(loss) or loss > 50:
                break
            for t in args.targets:
                if loss <= t and t not in reached:
                    reached[t] = per_learner
    except threading.BrokenBarrierError:
        pass
    rate = per_learner * learners / training if training else 0.0
    stop.set()
    try:
        barrier.wait(timeout=5)
    except threading.BrokenBarrierError:
        pass
    best = min((l for _, l in curve), default=float("nan"))
    return reached, best, rate, failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--learners", default="1,2,4,8,16")
    ap.add_argument("--dim", type=int, default=32)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--window", type=int, default=2)
    ap.add_argument("--round-batches", type=int, default=50)
    ap.add_argument("--targets", default="2.2,2.1,2.0")
    ap.add_argument("--max-windows", type=int, default=3_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--split", action="store_true",
                    help="each learner's batch in steps of batch/L windows, "
                    "the duplicates rule counting the others' steps too")
    ap.add_argument("--emulate-sum", action="store_true",
                    help="take every learner's step at the same weights and "
                    "add the changes (no learner sees another's writes)")
    args = ap.parse_args()
    args.targets = [float(t) for t in args.targets.split(",")]
    words, counts, _, windows = lt.bible_windows(window=args.window)
    rng = np.random.default_rng(args.seed)
    windows = windows[rng.permutation(windows.shape[0])]
    held = 20000
    train, test = np.ascontiguousarray(windows[held:]), windows[:held]
    test_noise = noise_table(counts, 0.75, held * 5, np.random.default_rng(7))
    print(f"# {lt.cpu_name()}, {os.cpu_count()} cores; KJV {len(words)} words, "
          f"{train.shape[0]:,} training windows; dim {args.dim}, lr {args.lr}, "
          f"batch {args.batch}, {args.round_batches} batches a round in all; "
          f"{'split batches' if args.split else 'whole batches'}; "
          f"{'emulated: steps at the same weights, added' if args.emulate_sum else 'threads'}")
    ref = None
    print("learners | " + " | ".join(f"to {t}" for t in args.targets)
          + " | best loss | windows/s, all learners")
    for n in [int(x) for x in args.learners.split(",")]:
        reached, best, rate, failed = run(n, args, train, test, counts,
                                          test_noise)
        if ref is None:
            ref = reached
        cells = []
        for t in args.targets:
            if t in reached:
                sp = f" ({ref[t] / reached[t]:.2f}x)" if t in ref else ""
                cells.append(f"{reached[t]:,}{sp}")
            else:
                cells.append("-")
        note = f" diverged: {failed[0][:60]}" if failed else ""
        print(f"{n} | " + " | ".join(cells) + f" | {best:.3f} | {rate:,.0f}"
              + note, flush=True)


if __name__ == "__main__":
    main()
