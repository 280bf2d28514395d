"""Write a fedavg_mpi config folder (vocab.txt, test.txt, cfg.json) from text.

Usage:
    /usr/bin/python3 python/prepare.py CORPUS [CORPUS ...] --out DIR
        [--vocab-size N] [--min-count 5] [--stopwords]
        [--test-windows 1000] [--window 2] [--seed 1] [--train-out PATH]
        [--data-name NAME] [--model neg|neg_autograd|softmax] [--bpe 200|50]
        [--bs 1024|256] [--dim 100] [--lr X] [--epoch 5] [--target 0]
        [--max-rounds 0] [--max-seconds 0] [--similarity F] [--analogies F]
        [--max-line-bytes 1048576]

Where two defaults are shown, the first is the neg models' (neg, the
default --model, and neg_autograd, the same loss), the second softmax's;
without --lr the model's own rate applies.

The vocabulary is every word seen at least --min-count times (with
--vocab-size N, the N most frequent of them, ties alphabetical),
tokenized exactly as the C++ pipeline does (textpipe).  Test windows come
from lines held out at random (seeded), and from pieces of lines longer
than 4 KiB (cut at spaces or other ASCII non-letters, so a corpus of one
line trains too): runs of 2*window+1 vocabulary words once the words
outside the vocabulary are dropped (--cross-oov false: with none of them
between).  A line is read in
parts of at most --max-line-bytes, as fedavg_mpi reads it, so a line of any
length takes bounded memory.  --train-out writes the corpus without that
text, so training never sees a test window.  The stop rule is fedavg_mpi's
one-command default: 5 passes over the text.  Errors print one line,
"prepare: <path>: <reason>", and exit with status 2.  No torch import: this
runs anywhere.
"""

import argparse
import collections
import json
import os
import random
import shutil
import stat
import sys
from pathlib import Path

import evaluate
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


# A line longer than this (text8 and enwik-style corpora are one line) is
# held out in pieces of about _PIECE_BYTES, cut at word boundaries, so that
# the rest of it stays for training; shorter lines are held out whole.
_LONG_LINE = 4096
_PIECE_BYTES = 512
# fedavg_mpi's default max_line_bytes: a longer line is read in parts of at
# most that many bytes, each cut just after a word boundary.
MAX_LINE_BYTES = 1 << 20
# bytes.translate table: a word boundary (an ASCII byte that is not a
# letter: textpipe splits words at every one, and no byte of a non-ASCII
# character is ASCII) -> b" ", any other byte -> b"a".
_CUTS = bytes(32 if c < 128 and not chr(c).isalpha() else 97
              for c in range(256))


def _line_parts(f, path, limit):
    """Yield (lineno, part, ends) over the lines of the binary file ``f``
    as fedavg_mpi's Tokenizer reads them: a line whose body (without its
    b'\\n') is at most ``limit`` bytes whole, a longer one in parts of at
    most ``limit`` bytes, each the longest that ends in a word boundary.
    ``ends``: the part ends its line.  Never holds more than ``limit`` + 1
    bytes.  Raises PrepareError for a NUL byte or a word longer than
    ``limit``."""
    lineno, offset = 0, 0
    while True:
        buf = f.readline(limit + 1)
        if not buf:
            return
        lineno += 1
        while True:
            if b"\0" in buf:
                raise PrepareError(f"{path}:{lineno}: binary content (NUL "
                                   "byte); a corpus must be UTF-8 text")
            if buf.endswith(b"\n") or len(buf) <= limit:
                break
            cut = buf.translate(_CUTS, b"")[:limit].rfind(b" ") + 1
            if cut == 0:
                raise PrepareError(
                    f"{path}:{lineno}: a word longer than max_line_bytes "
                    f"({limit}): no space or other ASCII non-letter in the "
                    f"{limit} bytes from byte {offset} to cut this long "
                    "line at; is this text? (--max-line-bytes)")
            yield lineno, buf[:cut], False
            offset += cut
            buf = buf[cut:]
            buf += f.readline(limit + 1 - len(buf))
        yield lineno, buf, True
        offset += len(buf)


def _units(path, first_line, limit, on_part=None):
    """Yield (key, text, line_offset) for the units that text is held out
    in, in file order: a line of at most _LONG_LINE bytes, read in one part,
    whole (key: its line index, counted from ``first_line``), any other line
    in pieces (key: (line index, start, end), the byte range within the
    line) of about _PIECE_BYTES, each ending before a word boundary, so no
    word is cut.
    ``line_offset``: where the line starts in the file.  Holds a piece and a
    part of the line (_line_parts) at most.  ``on_part`` is called with
    each part as it is read."""
    with open(path, "rb") as f:
        index, current, line_offset, offset = first_line - 1, 0, 0, 0
        buf, start = b"", 0  # the line's bytes not yet in a piece, from start
        for lineno, part, ends in _line_parts(f, path, limit):
            if on_part is not None:
                on_part(part)
            first_part = lineno != current
            if first_part:
                index, current, line_offset = index + 1, lineno, offset
                buf, start = b"", 0
            offset += len(part)
            if first_part and ends and \
                    len(part) - part.endswith(b"\n") <= _LONG_LINE:
                yield index, part, line_offset
                continue
            buf += part[:len(part) - part.endswith(b"\n")]
            cuts = buf.translate(_CUTS, b"")
            at = 0
            while True:
                cut = cuts.find(b" ", at + _PIECE_BYTES)
                if cut < 0:
                    break
                yield (index, start + at, start + cut), buf[at:cut], \
                    line_offset
                at = cut + 1
            buf, start = buf[at:], start + at
            if ends and buf:
                yield (index, start, start + len(buf)), buf, line_offset


def _all_units(paths, limit):
    """_units over all corpora, line indices counted across them."""
    first = 0
    for path in paths:
        last = first - 1
        for key, text, line_offset in _units(path, first, limit):
            last = key if isinstance(key, int) else key[0]
            yield key, text, line_offset
        first = last + 1


def _words(line: bytes):
    return textpipe.tokenize_words(line.decode("utf-8", "replace"))


def count_words(paths, max_line_bytes=None):
    """Return (Counter of words, number of units text is held out in);
    error on a wordless or binary file, or a word longer than
    ``max_line_bytes`` (fedavg_mpi's limit: a longer line is read in parts
    cut at word boundaries, which keeps every word whole)."""
    counts = collections.Counter()
    total, first = 0, 0
    limit = max_line_bytes or MAX_LINE_BYTES

    ascii_counts = collections.Counter()  # bytes -> count: decoded once each

    def count(part):  # parts end at word boundaries: no word is split
        if part.isascii():
            ascii_counts.update(textpipe.ascii_words(part))
        else:
            counts.update(_words(part))

    for path in paths:
        before = sum(counts.values()) + sum(ascii_counts.values())
        last = first - 1
        for key, _, _ in _units(path, first, limit, count):
            total += 1
            last = key if isinstance(key, int) else key[0]
        if sum(counts.values()) + sum(ascii_counts.values()) == before:
            raise PrepareError(f"{path}: no words (the tokenizer found no "
                               "letters)")
        first = last + 1
    for word, n in ascii_counts.items():
        counts[word.decode("ascii")] += n
    return counts, total


# Words longer than this on average (in characters, each occurrence
# counted) mean text that spaces do not split into words.
UNSEGMENTED_CHARS = 12


def _unsegmented_hint(counts):
    """Advice for text whose words are runs of many characters, or ''."""
    n = sum(counts.values())
    mean = sum(len(w) * c for w, c in counts.items()) / n if n else 0
    if mean <= UNSEGMENTED_CHARS:
        return ""
    return (f"; its words average {mean:.0f} characters: words are what "
            "spaces separate, so text written without spaces (Chinese, "
            "Japanese, Thai) must be segmented into words first, e.g. "
            "with jieba or MeCab")


def choose_vocab(counts, size, min_count, stopwords):
    """Top ``size`` words (all if None) by count (ties alphabetical) with
    count >= min."""
    ranked = sorted(((-c, w) for w, c in counts.items()
                     if c >= min_count and not (stopwords and w in STOPWORDS)))
    return [(w, -c) for c, w in ranked[:size]]


def line_windows(words, vocab, window, cross_oov=True):
    """All sliding windows of 2*window+1 vocabulary words in one line: the
    words outside the vocabulary dropped first (cross_oov), or each ending
    a run of vocabulary words."""
    width = 2 * window + 1
    out, run = [], []
    for w in words:
        if w not in vocab:
            if not cross_oov:
                run = []
            continue
        run.append(w)
        if len(run) >= width:
            out.append(run[-width:])
    return out


def hold_out(paths, total, vocab, window, wanted, seed, limit=None,
             cross_oov=True):
    """Pick test windows from the ``total`` units (lines, pieces of long
    lines; _units) taken in a seeded random order.

    Returns (windows, held) where held is a set of line indices (whole
    lines) and of (line, start, end) byte ranges within long lines.  Units
    are fetched in growing batches of the random order, so the corpus is
    streamed, not stored.  Only units that gave at least one window are
    held out.
    """
    limit = limit or MAX_LINE_BYTES
    order = list(range(total))
    random.Random(seed).shuffle(order)
    windows, held = [], set()
    pos, batch = 0, 256
    while len(windows) < wanted and pos < total:
        chosen = order[pos:pos + batch]
        wanted_units, last = set(chosen), max(chosen)
        texts = {}
        for u, (key, text, _) in enumerate(_all_units(paths, limit)):
            if u in wanted_units:
                texts[u] = key, text
            if u == last:
                break
        for u in chosen:
            key, text = texts[u]
            found = line_windows(_words(text), vocab, window, cross_oov)
            if found:
                held.add(key)
                windows.extend(found[:wanted - len(windows)])
                if len(windows) >= wanted:
                    break
        pos += batch
        batch *= 4
    return windows, held


def held_out_offsets(paths, held, limit=None):
    """Per corpus file: its size, the byte offsets where its held-out lines
    start and the [start, end) byte ranges held out of its long lines (for
    heldout.json)."""
    limit = limit or MAX_LINE_BYTES
    out, first = [], 0
    for path in paths:
        offsets, ranges, last = [], [], first - 1
        for key, _, line_offset in _units(path, first, limit):
            if isinstance(key, int):
                last = key
                if key in held:
                    offsets.append(line_offset)
            else:
                last = key[0]
                if key in held:
                    ranges.append([line_offset + key[1], line_offset + key[2]])
        out.append({"file": str(path), "bytes": Path(path).stat().st_size,
                    "offsets": offsets, "spans": ranges})
        first = last + 1
    return out


def write_train(paths, held, out_path, limit=None):
    """Write all corpora, minus the held-out text, to ``out_path``: a range
    held out of a long line becomes a line end, as fedavg_mpi reads it.
    Reads and writes a long line in parts (_line_parts)."""
    limit = limit or MAX_LINE_BYTES
    spans = collections.defaultdict(list)  # line -> sorted (start, end)
    for unit in held:
        if isinstance(unit, tuple):
            spans[unit[0]].append(unit[1:])
    for ranges in spans.values():
        ranges.sort()
    index = -1
    with open(out_path, "wb") as out:
        for path in paths:
            with open(path, "rb") as f:
                current, pos = 0, 0  # pos: the part's offset in its line
                for lineno, part, ends in _line_parts(f, path, limit):
                    if lineno != current:
                        index, current, pos = index + 1, lineno, 0
                    if index in held:  # a short line: one part
                        continue
                    kept, at = [], 0
                    for start, end in spans.get(index, ()):
                        start, end = start - pos, end - pos
                        if end <= 0 or start >= len(part):
                            continue
                        kept.append(part[at:max(start, 0)])
                        if start >= 0:
                            kept.append(b"\n")
                        at = min(end, len(part))
                    kept.append(part[at:])
                    out.write(b"".join(kept))
                    if ends and not part.endswith(b"\n"):
                        out.write(b"\n")
                    pos += len(part)


# Per-model defaults for the options that depend on the model.
_MODEL_DEFAULTS = {"neg": {"bs": 1024, "bpe": 200},
                   "neg_autograd": {"bs": 1024, "bpe": 200},
                   "softmax": {"bs": 256, "bpe": 50}}

# The evaluation files --similarity and --analogies copy into the config
# folder, where eval_every reads them, and the reader that checks each.
_EVAL_FILES = {"similarity": ("similarity.tsv", evaluate.read_pairs),
               "analogies": ("analogies.txt", evaluate.read_questions)}


def _true_or_false(text):
    """argparse type of a yes/no option: true or false, as cfg.json has."""
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="prepare",
        description="Write vocab.txt, test.txt and cfg.json for fedavg_mpi.")
    p.add_argument("corpus", nargs="+", help="UTF-8 text file(s)")
    p.add_argument("--out", required=True, help="config folder to write")
    p.add_argument("--vocab-size", type=int, default=None,
                   help="keep at most this many words, the most frequent "
                   "(default: no cap, every word of --min-count)")
    p.add_argument("--min-count", type=int, default=5)
    p.add_argument("--stopwords", action="store_true",
                   help="leave common English stop words out of the vocab")
    p.add_argument("--test-windows", type=int, default=1000)
    p.add_argument("--window", type=int, default=2,
                   help="context half-width (window = 2*W+1 words)")
    p.add_argument("--cross-oov", type=_true_or_false, default=True,
                   help="true (default): a test window may span a word "
                   "outside the vocabulary, dropped as in training "
                   "(cfg.json's cross_oov); false: such a word ends a run")
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
    p.add_argument("--target", type=float, default=0.0,
                   help="test loss at which training stops (default 0: "
                   "none; neg's loss starts near 4.16)")
    p.add_argument("--dim", type=int, default=100)
    p.add_argument("--lr", type=float,
                   help="learning rate (default: the model's own)")
    p.add_argument("--epoch", "--epochs", "--max-epochs", dest="max_epochs",
                   type=float, default=5.0,
                   help="passes over the text (max_epochs; default 5)")
    p.add_argument("--max-rounds", type=int, default=0,
                   help="rounds (default 0: no limit)")
    p.add_argument("--max-seconds", type=float, default=0.0,
                   help="seconds of training (default 0: no limit)")
    p.add_argument("--max-line-bytes", type=int, default=MAX_LINE_BYTES,
                   help="read a longer line in parts cut at word "
                   "boundaries, as fedavg_mpi does with its max_line_bytes "
                   f"(default {MAX_LINE_BYTES}); a longer word is an error")
    for name, (file, _) in _EVAL_FILES.items():
        p.add_argument(f"--{name}", help=f"copied to DIR/{file}, which "
                       "eval_every scores the embeddings on")
    args = p.parse_args(argv)
    for key, value in _MODEL_DEFAULTS[args.model].items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    for name in ("vocab_size", "min_count", "test_windows", "window", "bpe",
                 "bs", "dim"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    if args.max_line_bytes < 1024:
        p.error("--max-line-bytes must be >= 1024")
    if args.lr is not None and args.lr <= 0:
        p.error("--lr must be > 0")
    for name in ("target", "max_epochs", "max_rounds", "max_seconds"):
        if getattr(args, name) < 0:
            p.error(f"--{name.replace('_', '-')} must be >= 0")
    if not (args.target or args.max_epochs or args.max_rounds
            or args.max_seconds):
        p.error("nothing would stop the run: give --target, --epoch, "
                "--max-rounds or --max-seconds above 0")
    return args


# The first bytes of compressed files, and how to decompress each.
_COMPRESSED = [(b"\x1f\x8b", "gzip", "gunzip -k"), (b"BZh", "bzip2", "bunzip2 -k"),
               (b"\xfd7zXZ\x00", "xz", "unxz -k"),
               (b"\x28\xb5\x2f\xfd", "zstd", "unzstd"),
               (b"PK\x03\x04", "zip", "unzip")]


def _refuse_compressed(path):
    """Refuse a compressed corpus with what to run instead."""
    with open(path, "rb") as f:
        head = f.read(6)
    for magic, kind, command in _COMPRESSED:
        if head.startswith(magic):
            raise PrepareError(f"{path}: a {kind}-compressed file: "
                               f"decompress it first ({command} {path}); a "
                               "corpus must be UTF-8 text")


_FILE_KINDS = ((stat.S_ISCHR, "a character device"),
               (stat.S_ISBLK, "a block device"),
               (stat.S_ISFIFO, "a FIFO (named pipe), which can be read only "
                               "once"),
               (stat.S_ISSOCK, "a socket"))


def _check_corpus_file(path):
    """Refuse a corpus that is missing or not a regular file, saying what
    it is (without opening it: a FIFO would block the open)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise PrepareError(f"{path}: no such file") from None
    except OSError as e:
        raise PrepareError(f"{path}: cannot open: {e.strerror}") from None
    if stat.S_ISDIR(mode):
        raise PrepareError(f"{path}: is a directory, not a corpus file")
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _FILE_KINDS if test(mode)),
                    "not a file")
        raise PrepareError(f"{path}: not a regular file ({kind}): give a "
                           f"regular file")


def _check_inputs(args):
    """Refuse a missing corpus or evaluation file, or one that cannot be
    read, before anything is written."""
    for path in args.corpus:
        _check_corpus_file(path)
        _refuse_compressed(path)
    for name, (_, read) in _EVAL_FILES.items():
        path = getattr(args, name, None)
        if path is None:
            continue
        if not Path(path).is_file():
            raise PrepareError(f"{path}: no such file (--{name})")
        try:
            if not read(path):
                raise PrepareError(f"{path}: no {name} in the file "
                                   f"(--{name})")
        except UnicodeDecodeError:
            raise PrepareError(f"{path}: not UTF-8 text (--{name})") from None
        except ValueError as e:
            raise PrepareError(f"{e} (--{name})") from None


def _write_config(args, out, vocab, windows):
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "vocab.txt", "w", encoding="utf-8") as f:
        f.writelines(f"{w} {c}\n" for w, c in vocab)
    with open(out / "test.txt", "w", encoding="utf-8") as f:
        f.writelines(" ".join(win) + "\n" for win in windows)
    cfg = {"data_name": args.data_name or Path(args.corpus[0]).stem,
           "bpe": args.bpe, "bs": args.bs, "target": args.target,
           "window": args.window, "cross_oov": args.cross_oov,
           "dim": args.dim, "model": args.model,
           **({"lr": args.lr} if args.lr is not None else {}),
           "seed": args.seed, "max_epochs": args.max_epochs,
           "max_rounds": args.max_rounds, "max_seconds": args.max_seconds}
    with open(out / "cfg.json", "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    for name, (file, _) in _EVAL_FILES.items():
        if getattr(args, name, None) is not None:
            shutil.copyfile(getattr(args, name), out / file)


def prepare(args):
    """Do the work; returns the summary text.  Raises PrepareError."""
    _check_inputs(args)
    limit = args.max_line_bytes
    counts, total = count_words(args.corpus, limit)
    vocab = choose_vocab(counts, args.vocab_size, args.min_count,
                         args.stopwords)
    if not vocab:
        raise PrepareError(
            f"{', '.join(args.corpus)}: no vocabulary words left after "
            f"filtering (min-count {args.min_count}"
            f"{', stop words removed' if args.stopwords else ''})"
            f"{_unsegmented_hint(counts)}")
    vocab_set = {w for w, _ in vocab}
    windows, held = hold_out(args.corpus, total, vocab_set, args.window,
                             args.test_windows, args.seed, limit,
                             args.cross_oov)
    if not windows:
        raise PrepareError(f"{', '.join(args.corpus)}: no line holds "
                           f"{2 * args.window + 1} vocabulary words in a row; "
                           "cannot build test windows")
    if len(held) == total:
        raise PrepareError(
            f"{', '.join(args.corpus)}: nothing left to train on: all "
            f"{total} lines (or pieces of long lines) were held out for "
            f"{len(windows)} test windows; give more text or ask for fewer "
            "--test-windows")

    out = Path(args.out)
    _write_config(args, out, vocab, windows)
    if args.train_out:
        write_train(args.corpus, held, args.train_out, limit)
        (out / "heldout.json").unlink(missing_ok=True)
    else:
        # Training on the corpora themselves: fedavg_mpi skips this text.
        with open(out / "heldout.json", "w", encoding="utf-8") as f:
            json.dump({"corpora": held_out_offsets(args.corpus, held, limit)},
                      f)
            f.write("\n")

    tokens = sum(counts.values())
    covered = sum(c for _, c in vocab)
    pieces = sum(isinstance(u, tuple) for u in held)
    parts = [f"{len(held) - pieces} held-out lines"] * (len(held) > pieces)
    parts += [f"{pieces} held-out pieces of long lines"] * (pieces > 0)
    source = (" and ".join(parts) + f" (of {total} "
              + ("lines and pieces)" if pieces else "lines)"))
    lines = [f"prepare: vocabulary {len(vocab)} words "
             f"(of {len(counts)} distinct), coverage "
             f"{100.0 * covered / tokens:.1f}% of {tokens} tokens",
             f"prepare: {len(windows)} test windows from {source}",
             f"prepare: wrote {out}/vocab.txt, test.txt, cfg.json"
             + (f" and {args.train_out}" if args.train_out
                else " and heldout.json (the held-out text, which "
                     "fedavg_mpi skips)")]
    if len(windows) < args.test_windows:
        lines.append(f"prepare: warning: only {len(windows)} of "
                     f"{args.test_windows} test windows found")
    if total and len(held) > total // 2:
        lines.append(f"prepare: warning: {len(held)} of {total} lines "
                     "held out; give more text or ask for fewer test "
                     "windows")
    return "\n".join(lines)


def prepare_job(corpora, out, options):
    """The config of a job started without --config (fedavg_mpi calls this
    on rank 0): the command line's defaults, with ``options`` (vocab_size,
    min_count, test_windows, stopwords, similarity, analogies,
    max_line_bytes, and the cfg.json keys window, seed, model, data_name
    given on the command line; fedavg_mpi sets the others in cfg.json
    itself).  Returns the
    summary lines; raises PrepareError (a ValueError) on bad input."""
    argv = [str(c) for c in corpora] + ["--out", str(out)]
    if options.get("model") in _MODEL_DEFAULTS:
        argv += ["--model", options["model"]]
    args = parse_args(argv)
    for key in ("vocab_size", "min_count", "test_windows", "window", "seed",
                "cross_oov",
                "data_name", "stopwords", "similarity", "analogies",
                "max_line_bytes"):
        if options.get(key) is not None:
            setattr(args, key, options[key])
    return prepare(args)


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
