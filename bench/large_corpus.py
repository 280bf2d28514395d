#!/usr/bin/env python3
"""A corpus larger than memory through one pipeline: first-pass and later-pass pipeline throughput (the token
cache replaces Python's tokenizer after the first pass), a later run on the same corpus (it replays the cache
from its first pass), and the peak RSS of every pipeline rank, measured with the real binary under mpiexec.

The corpus (default 200 M tokens) is sampled with NumPy from the King James Bible's vocabulary (every word of
scripts/kjv_corpus.sh's text, by falling count) with Zipf frequencies (p ~ 1/rank), in lines of 10 to 40 words;
it is written into --dir (default: a temporary folder in /tmp), never into the repository. The job trains with
the shipped config/ (its 5000-word vocabulary: rarer words are unknown words) and learners that do not train
(cfg "train": false, as bench/pipeline.py measures a pipeline), so the pipeline is the bottleneck.

Usage: /usr/bin/python3 bench/large_corpus.py [--tokens 200e6] [--dir DIR] [--passes 2] [--keep]
"""

import argparse
import json
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus as corpora  # noqa: E402
import jobs  # noqa: E402

CHUNK = 4_000_000  # tokens generated and written at a time


def kjv_words():
    """Every word of the King James Bible, most frequent first (the text comes from scripts/kjv_corpus.sh)."""
    words, _ = corpora.build_vocab(jobs.bible_corpus().read_text(encoding="utf-8"), min_count=1)
    return words


def write_corpus(path, tokens, words, seed=1):
    """`tokens` words sampled with p ~ 1/rank, in lines of 10..40 words; returns the bytes written."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, len(words) + 1)
    cdf = np.cumsum(p / p.sum())
    encoded = [w.encode() + b" " for w in words]
    lengths = np.array([len(e) for e in encoded], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    flat = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    written = 0
    with open(path, "wb") as f:
        left = int(tokens)
        while left > 0:
            n = min(CHUNK, left)
            ids = np.minimum(np.searchsorted(cdf, rng.random(n)), len(words) - 1)
            lens = lengths[ids]
            ends = np.cumsum(lens)
            # Gather every word's bytes: out[k] = flat[start of its word + k - start of its slot].
            slot = np.repeat(ends - lens, lens)
            out = flat[np.repeat(starts[ids], lens) + (np.arange(ends[-1]) - slot)]
            # Line ends: the space after the last word of each line becomes a newline.
            line_ends = np.cumsum(rng.integers(10, 41, size=n // 10 + 2))
            line_ends = line_ends[line_ends <= n]
            out[ends[line_ends - 1] - 1] = ord("\n")
            out[-1] = ord("\n")
            f.write(out.tobytes())
            written += out.size
            left -= n
    return written


def rates(metrics, pass_windows):
    """(first-pass windows/s, later-pass windows/s, seconds to the end of the first pass) from the metrics rows
    (one learner: windows_per_learner is every window delivered)."""
    rows = [r for r in metrics if r["round"] > 0]
    t0, w0 = rows[0]["seconds"], rows[0]["windows_per_learner"]
    first_end = next((r for r in rows if r["windows_per_learner"] >= pass_windows), None)
    if first_end is None:
        return (rows[-1]["windows_per_learner"] - w0) / (rows[-1]["seconds"] - t0), float("nan"), float("nan")
    first = (first_end["windows_per_learner"] - w0) / (first_end["seconds"] - t0)
    last = rows[-1]
    later = ((last["windows_per_learner"] - first_end["windows_per_learner"]) / (last["seconds"] - first_end["seconds"])
             if last is not first_end else float("nan"))
    return first, later, first_end["seconds"]


def pipeline_rss(samples):
    """{role: peak RSS in MiB} of the pipeline ranks (one pipeline)."""
    peak = {}
    for rank, series in samples.items():
        role = jobs.role_of(rank, 1)
        if role in ("Tokenizer", "Filter", "Batcher"):
            peak[role] = max(peak.get(role, 0.0), max(s[3] for s in series))
    return peak


def job(workdir, corpus, out, max_epochs, timeout, **settings):
    """Runs one job; returns (metrics, samples, windows per pass, wall seconds, stdout)."""
    # Rounds of about 200k windows (the Batcher keeps prefetch_rounds of them); no subsampling, so every pass
    # makes the same windows; checkpoints rarely.
    cfg = jobs.bible_config(workdir, train=False, bpe=25, bs=8192, target=0, max_rounds=0, max_seconds=0,
                            max_epochs=max_epochs, sample=0, checkpoint_every=1000, progress_seconds=10,
                            liveness_seconds=600, **settings)
    t = time.monotonic()
    metrics, samples, stdout = jobs.run(5, [corpus], cfg, out, timeout=timeout, sample_every=1.0)
    wall = time.monotonic() - t
    import h5py  # only the benchmark needs it
    with h5py.File(Path(out) / "kjv.h5", "r") as f:
        pass_windows = float(f["pipeline_progress"][0][1])
    return metrics, samples, pass_windows, wall, stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokens", type=float, default=200e6, help="corpus size in tokens (default 200e6)")
    ap.add_argument("--dir", type=Path, help="where the corpus and runs go (default: a temporary folder in /tmp)")
    ap.add_argument("--passes", type=float, default=2, help="passes of the first run (max_epochs; default 2)")
    ap.add_argument("--keep", action="store_true", help="keep the corpus, cache and outputs")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per job")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    base = args.dir or Path(tempfile.mkdtemp(prefix="fedavg_large_corpus_", dir="/tmp"))
    base.mkdir(parents=True, exist_ok=True)
    try:
        words = kjv_words()
        corpus = base / "zipf.txt"
        t = time.monotonic()
        size = write_corpus(corpus, args.tokens, words)
        gen_seconds = time.monotonic() - t
        cache_dir = base / "out1" / "cache"
        m1, s1, pass_windows, wall1, out1 = job(base / "w1", corpus, base / "out1", args.passes, args.timeout)
        first, later, first_seconds = rates(m1, pass_windows)
        cache_bytes = sum(p.stat().st_size for p in cache_dir.glob("*.ids"))
        # A later run on the same corpus, config and cache: its first pass replays the cache.
        m2, s2, _, wall2, out2 = job(base / "w2", corpus, base / "out2", 1, args.timeout,
                                     token_cache_dir=str(cache_dir))
        rerun, _, _ = rates(m2, pass_windows)
        rss = pipeline_rss(s1)
        rss2 = pipeline_rss(s2)
        figures = {
            "tokens": args.tokens, "corpus_bytes": size, "generate_seconds": gen_seconds,
            "windows_per_pass": pass_windows, "cache_bytes": cache_bytes,
            "first_pass_windows_per_s": first, "later_pass_windows_per_s": later, "first_pass_seconds": first_seconds,
            "rerun_first_pass_windows_per_s": rerun, "run_seconds": wall1, "rerun_seconds": wall2,
            "peak_rss_mib": rss, "rerun_peak_rss_mib": rss2,
            "tokenizer_lines": [line for line in (out1 + out2).splitlines()
                                if line.startswith("fedavg_mpi: Tokenizer")],
        }
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    command = "/usr/bin/python3 bench/large_corpus.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    print(f"## One pipeline, a corpus larger than memory ({args.tokens / 1e6:.0f} M tokens, "
          f"{size / 2**30:.2f} GiB of text)\n")
    print(f"`{command.strip()}` (Zipf-sampled King James Bible words, shipped config/, learners not training)\n")
    print(jobs.table([
        ["corpus", f"{args.tokens / 1e6:.0f} M tokens, {size / 2**20:,.0f} MiB, generated in {gen_seconds:.0f} s"],
        ["windows per pass", f"{pass_windows / 1e6:.1f} M"],
        ["token cache on disk", f"{cache_bytes / 2**20:,.0f} MiB"],
        ["first pass (tokenized in Python, cache written)", f"{first:,.0f} windows/s ({first_seconds:.0f} s)"],
        ["later passes (cache replayed)", f"{later:,.0f} windows/s"],
        ["a later run, its first pass (cache replayed)", f"{rerun:,.0f} windows/s"],
        ["peak RSS, first run: Tokenizer / Filter / Batcher",
         " / ".join(f"{rss.get(r, float('nan')):.0f}" for r in ("Tokenizer", "Filter", "Batcher")) + " MiB"],
        ["peak RSS, later run: Tokenizer / Filter / Batcher",
         " / ".join(f"{rss2.get(r, float('nan')):.0f}" for r in ("Tokenizer", "Filter", "Batcher")) + " MiB"],
    ], ["figure", "value"]))
    for line in figures["tokenizer_lines"]:
        print(f"\n    {line}")


if __name__ == "__main__":
    main()
