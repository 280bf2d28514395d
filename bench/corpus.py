"""Corpus helpers shared by the benchmarks (NumPy + textpipe, no torch).

    read_corpus(name_or_path)        text of "bible", "text8" or a file
    build_vocab(text, min_count)     words by falling count (ties by word)
    token_lines(text, words)         int32 ids with textpipe.BREAK per line
    subsample(ids, counts, sample)   word2vec's random drop of frequent words
    make_windows(ids, window)        int32 [n, 2w+1], never across a line
    gensim_sentences(ids, words)     the same tokens as lists of words

Windows follow word2vec and the C++ Filter: out-of-vocabulary and
subsampled words are removed first, then every run of 2w+1 consecutive
remaining words inside one line is a window (centre = target).
"""

import collections
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
# The module fedavg_kernels (the models' fused steps), where the program is built (FEDAVG_BUILD_DIR, default build/),
# as the program puts it on sys.path.
_BUILD = Path(os.environ.get("FEDAVG_BUILD_DIR", "build"))
KERNELS_DIR = (_BUILD if _BUILD.is_absolute() else ROOT / _BUILD) / "src" / "kernels"
sys.path.append(str(KERNELS_DIR))
import textpipe  # noqa: E402

# The benchmark data (the text8 prefix, the evaluation sets): FEDAVG_BENCH_DATA, else shared/data beside the
# repository's folder.
DATA_DIR = Path(os.environ.get("FEDAVG_BENCH_DATA") or ROOT.parent / "shared" / "data")
TEXT8_ZIP = DATA_DIR / "text8_prefix.zip"
EVAL_DIR = DATA_DIR / "eval"
WORDSIM = EVAL_DIR / "wordsim353.tsv"
ANALOGIES = EVAL_DIR / "questions-words.txt"


def read_corpus(name):
    """"bible": data/kjv.txt (or the `bible` program); "text8": the text8
    prefix, cut into lines of 1000 words (read from the zip, in memory);
    anything else: a text file."""
    if name == "bible":
        path = ROOT / "data" / "kjv.txt"
        if path.exists():
            return path.read_text(encoding="utf-8")
        out = subprocess.run(["bible", "-f", "Gen1:1-Rev22:21"], check=True,
                             capture_output=True, text=True).stdout
        return "".join(line.split(" ", 1)[1] + "\n" if " " in line else ""
                       for line in out.splitlines())
    if name == "text8":
        path = Path(os.environ.get("TEXT8_ZIP", TEXT8_ZIP))
        with zipfile.ZipFile(path) as z:
            words = z.read(z.namelist()[0]).decode("ascii").split()
        return "\n".join(" ".join(words[i:i + 1000])
                         for i in range(0, len(words), 1000)) + "\n"
    return Path(name).read_text(encoding="utf-8")


def build_vocab(text, min_count=5):
    """(words, counts): words with count >= min_count, most frequent first."""
    counts = collections.Counter(textpipe.tokenize_words(text))
    items = sorted(((c, w) for w, c in counts.items() if c >= min_count),
                   key=lambda cw: (-cw[0], cw[1]))
    return [w for _, w in items], [c for c, _ in items]


def token_lines(text, words):
    """All tokens: vocabulary ids, OOV, and BREAK after each line."""
    return textpipe.Tokenizer(words).tokenize(text.encode("utf-8"))


def subsample(ids, counts, sample=1e-3, seed=1):
    """word2vec's subsampling: word w is kept with probability
    (sqrt(f/(s*T)) + 1) * (s*T)/f (f its count, T the total); dropped words
    become OOV.  Markers pass through.  sample <= 0 keeps everything."""
    if sample <= 0:
        return ids
    c = np.asarray(counts, dtype=np.float64)
    threshold = sample * c.sum()
    keep = (np.sqrt(c / threshold) + 1.0) * threshold / c
    word = ids >= 0
    p = np.ones(ids.shape[0])
    p[word] = keep[ids[word]]
    rng = np.random.default_rng(seed)
    out = ids.copy()
    out[rng.random(ids.shape[0]) >= p] = textpipe.OOV
    return out


def make_windows(ids, window=2):
    """int32 [n, 2w+1] sliding windows over the in-vocabulary words of
    each line (OOV dropped, lines never crossed), in text order."""
    line = np.cumsum(ids == textpipe.BREAK)
    word = ids >= 0
    ids, line = ids[word], line[word]
    width = 2 * window + 1
    if ids.shape[0] < width:
        return np.empty((0, width), np.int32)
    starts = np.flatnonzero(line[:-width + 1] == line[width - 1:])
    return np.ascontiguousarray(ids[starts[:, None] + np.arange(width)],
                                dtype=np.int32)


def gensim_sentences(ids, words):
    """The in-vocabulary tokens of each line, as lists of words (for
    gensim: its own vocabulary pass then sees the same corpus)."""
    arr = np.asarray(words, dtype=object)
    breaks = np.flatnonzero(ids == textpipe.BREAK)
    out, start = [], 0
    for end in breaks:
        seg = ids[start:end]
        seg = seg[seg >= 0]
        if seg.shape[0]:
            out.append(arr[seg].tolist())
        start = end + 1
    return out
