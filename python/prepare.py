"""Write a fedavg_mpi config folder (vocab.txt, test.txt, cfg.json) from text.

Usage:
    /usr/bin/python3 python/prepare.py CORPUS [CORPUS ...] --out DIR
        [--vocab-size 10000] [--min-count 5] [--stopwords]
        [--test-windows 1000] [--window 2] [--seed 1] [--train-out PATH]
        [--data-name NAME] [--model neg|neg_autograd|softmax] [--bpe 200|50]
        [--bs 1024|256] [--target 2.5|6.0] [--dim 32] [--lr X]
        [--max-rounds 200] [--max-seconds 600]

Where two defaults are shown, the first is the neg models' (neg, the
default --model, and neg_autograd, the same loss), the second softmax's;
without --lr the model's own rate applies.

The vocabulary is the --vocab-size most frequent words (ties alphabetical)
seen at least --min-count times, tokenized exactly as the C++ pipeline does
(textpipe).  Test windows come from lines held out at random (seeded): runs
of 2*window+1 vocabulary words inside one line with no unknown word between
them.  --train-out writes the corpus without those lines, so training never
sees a test window.  Errors print one line, "prepare: <path>: <reason>",
and exit with status 2.  No torch import: this runs anywhere.
"""

import argparse
import collections
import json
import random
import sys
from pathlib import Path

import textpipe

# A common English stop-word list (pronouns, articles, auxiliaries,
# prepositions, conjunctions); words are as the tokenizer produces them.
STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because
been before being below between both but by can could did do does doing
down during each few for from further had has have having he her here hers
herself him himself his how i if in into is it its itself just me more most
my myself no nor not now of off on once only or other our ours ourselves
out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up
very was we were what when where which while who whom why will with would
you your yours yourself yourselves s t
""".split())


class PrepareError(ValueError):
    """A problem with the inputs; printed as 'prepare: <message>'."""


def _corpus_lines(paths):
    """Yield (global_line_index, raw_bytes_line) over all corpora in order.

    Lines are split on b'\\n' only, as the C++ reader does; each yielded line
    keeps its newline except possibly the last line of a file.
    """
    index = 0
    for path in paths:
        with open(path, "rb") as f:
            for line in f:
                yield index, line
                index += 1


def _words(line: bytes):
    return textpipe.tokenize_words(line.decode("utf-8", "replace"))


def count_words(paths):
    """Return (Counter of words, number of lines); error on a wordless file."""
    counts = collections.Counter()
    lines = 0
    for path in paths:
        before = sum(counts.values())
        for _, line in _corpus_lines([path]):
            counts.update(_words(line))
            lines += 1
        if sum(counts.values()) == before:
            raise PrepareError(f"{path}: no words (the tokenizer found no "
                               "letters)")
    return counts, lines


def choose_vocab(counts, size, min_count, stopwords):
    """Top ``size`` words by count (ties alphabetical) with count >= min."""
    ranked = sorted(((-c, w) for w, c in counts.items()
                     if c >= min_count and not (stopwords and w in STOPWORDS)))
    return [(w, -c) for c, w in ranked[:size]]


def line_windows(words, vocab, window):
    """All sliding windows of 2*window+1 vocabulary words in one line."""
    width = 2 * window + 1
    out, run = [], []
    for w in words:
        if w not in vocab:
            run = []
            continue
        run.append(w)
        if len(run) >= width:
            out.append(run[-width:])
    return out


def hold_out(paths, n_lines, vocab, window, wanted, seed):
    """Pick test windows from lines taken in a seeded random order.

    Returns (windows, held_out_line_indices).  Lines are fetched in growing
    batches of the random order, so the corpus is streamed, not stored.
    Only lines that gave at least one window are held out.
    """
    order = list(range(n_lines))
    random.Random(seed).shuffle(order)
    windows, held = [], set()
    pos, batch = 0, 256
    while len(windows) < wanted and pos < n_lines:
        chosen = order[pos:pos + batch]
        wanted_lines = set(chosen)
        texts = {i: line for i, line in _corpus_lines(paths)
                 if i in wanted_lines}
        for i in chosen:
            found = line_windows(_words(texts[i]), vocab, window)
            if found:
                held.add(i)
                windows.extend(found[:wanted - len(windows)])
                if len(windows) >= wanted:
                    break
        pos += batch
        batch *= 4
    return windows, held


def held_out_offsets(paths, held):
    """Per corpus file: its size and the byte offsets where its held-out
    lines start (for heldout.json)."""
    out = []
    index = 0
    for path in paths:
        offsets, offset = [], 0
        with open(path, "rb") as f:
            for line in f:
                if index in held:
                    offsets.append(offset)
                offset += len(line)
                index += 1
        out.append({"file": str(path), "bytes": offset, "offsets": offsets})
    return out


def write_train(paths, held, out_path):
    """Write all corpora, minus the held-out lines, to ``out_path``."""
    with open(out_path, "wb") as out:
        for i, line in _corpus_lines(paths):
            if i in held:
                continue
            out.write(line if line.endswith(b"\n") else line + b"\n")


# Per-model defaults for the options that depend on the model.
_MODEL_DEFAULTS = {"neg": {"bs": 1024, "bpe": 200, "target": 2.5},
                   "neg_autograd": {"bs": 1024, "bpe": 200, "target": 2.5},
                   "softmax": {"bs": 256, "bpe": 50, "target": 6.0}}


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="prepare",
        description="Write vocab.txt, test.txt and cfg.json for fedavg_mpi.")
    p.add_argument("corpus", nargs="+", help="UTF-8 text file(s)")
    p.add_argument("--out", required=True, help="config folder to write")
    p.add_argument("--vocab-size", type=int, default=10000)
    p.add_argument("--min-count", type=int, default=5)
    p.add_argument("--stopwords", action="store_true",
                   help="leave common English stop words out of the vocab")
    p.add_argument("--test-windows", type=int, default=1000)
    p.add_argument("--window", type=int, default=2,
                   help="context half-width (window = 2*W+1 words)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--train-out", help="write the corpus minus held-out "
                   "test lines here")
    p.add_argument("--data-name", help="run name (default: first corpus stem)")
    p.add_argument("--bpe", type=int, help="batches per learner per round "
                   "(default: 200 for neg, 50 for softmax)")
    p.add_argument("--model", choices=sorted(_MODEL_DEFAULTS), default="neg",
                   help="model in python/library.py (default: neg)")
    p.add_argument("--bs", type=int, help="windows per batch (default: "
                   "1024 for neg, 256 for softmax)")
    p.add_argument("--target", type=float,
                   help="test loss at which training stops (default: 2.5 "
                   "for neg, whose loss starts near 4.16; 6.0 for softmax)")
    p.add_argument("--dim", type=int, default=32)
    p.add_argument("--lr", type=float,
                   help="learning rate (default: the model's own)")
    p.add_argument("--max-rounds", type=int, default=200)
    p.add_argument("--max-seconds", type=float, default=600)
    args = p.parse_args(argv)
    for key, value in _MODEL_DEFAULTS[args.model].items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    for name in ("vocab_size", "min_count", "test_windows", "window", "bpe",
                 "bs", "dim", "max_rounds"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    if (args.lr is not None and args.lr <= 0) or args.max_seconds <= 0:
        p.error("--lr and --max-seconds must be > 0")
    return args


def prepare(args):
    """Do the work; returns the summary text.  Raises PrepareError."""
    for path in args.corpus:
        if Path(path).is_dir():
            raise PrepareError(f"{path}: is a directory, not a corpus file")
        if not Path(path).is_file():
            raise PrepareError(f"{path}: no such file")
    counts, n_lines = count_words(args.corpus)
    vocab = choose_vocab(counts, args.vocab_size, args.min_count,
                         args.stopwords)
    if not vocab:
        raise PrepareError(
            f"{', '.join(args.corpus)}: no vocabulary words left after "
            f"filtering (min-count {args.min_count}"
            f"{', stop words removed' if args.stopwords else ''})")
    vocab_set = {w for w, _ in vocab}
    windows, held = hold_out(args.corpus, n_lines, vocab_set, args.window,
                             args.test_windows, args.seed)
    if not windows:
        raise PrepareError(f"{', '.join(args.corpus)}: no line holds "
                           f"{2 * args.window + 1} vocabulary words in a row; "
                           "cannot build test windows")

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "vocab.txt", "w", encoding="utf-8") as f:
        f.writelines(f"{w} {c}\n" for w, c in vocab)
    with open(out / "test.txt", "w", encoding="utf-8") as f:
        f.writelines(" ".join(win) + "\n" for win in windows)
    cfg = {"data_name": args.data_name or Path(args.corpus[0]).stem,
           "bpe": args.bpe, "bs": args.bs, "target": args.target,
           "window": args.window, "dim": args.dim, "model": args.model,
           **({"lr": args.lr} if args.lr is not None else {}),
           "seed": args.seed, "max_rounds": args.max_rounds,
           "max_seconds": args.max_seconds}
    with open(out / "cfg.json", "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    if args.train_out:
        write_train(args.corpus, held, args.train_out)
        (out / "heldout.json").unlink(missing_ok=True)
    else:
        # Training on the corpora themselves: fedavg_mpi skips these lines.
        with open(out / "heldout.json", "w", encoding="utf-8") as f:
            json.dump({"corpora": held_out_offsets(args.corpus, held)}, f)
            f.write("\n")

    tokens = sum(counts.values())
    covered = sum(c for _, c in vocab)
    lines = [f"prepare: vocabulary {len(vocab)} words "
             f"(of {len(counts)} distinct), coverage "
             f"{100.0 * covered / tokens:.1f}% of {tokens} tokens",
             f"prepare: {len(windows)} test windows from {len(held)} "
             f"held-out lines (of {n_lines})",
             f"prepare: wrote {out}/vocab.txt, test.txt, cfg.json"
             + (f" and {args.train_out}" if args.train_out
                else " and heldout.json (the held-out lines, which "
                     "fedavg_mpi skips)")]
    if len(windows) < args.test_windows:
        lines.append(f"prepare: warning: only {len(windows)} of "
                     f"{args.test_windows} test windows found")
    if n_lines and len(held) > n_lines // 2:
        lines.append(f"prepare: warning: {len(held)} of {n_lines} lines held "
                     "out; split long lines or ask for fewer test windows")
    return "\n".join(lines)


def prepare_job(corpora, out, options):
    """The config of a job started without --config (fedavg_mpi calls this
    on rank 0): like the command line with ``options`` (vocab_size,
    min_count, test_windows, stopwords, and the cfg.json keys window, seed,
    model, data_name given on the command line), stopping after 5 passes
    over the text instead of at a target.  Returns the summary lines;
    raises PrepareError (a ValueError) on bad input."""
    argv = [str(c) for c in corpora] + ["--out", str(out)]
    if options.get("model") in _MODEL_DEFAULTS:
        argv += ["--model", options["model"]]
    args = parse_args(argv)
    for key in ("vocab_size", "min_count", "test_windows", "window", "seed",
                "data_name", "stopwords"):
        if options.get(key) is not None:
            setattr(args, key, options[key])
    summary = prepare(args)
    cfg_path = Path(out) / "cfg.json"
    cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
    cfg.update({"target": 0, "max_epochs": 5, "max_rounds": 0,
                "max_seconds": 0})
    cfg_path.write_text(json.dumps(cfg, indent=2) + "\n", encoding="utf-8")
    return summary


def main(argv=None):
    args = parse_args(argv)
    try:
        print(prepare(args))
    except PrepareError as e:
        print(f"prepare: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        name = e.filename if e.filename is not None else "?"
        print(f"prepare: {name}: {e.strerror or e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
