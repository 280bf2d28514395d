"""Score word embeddings: word similarity, analogies, nearest neighbours.

NumPy and the standard library only (no torch), usable as a command and as
a module.

    /usr/bin/python3 python/evaluate.py EMBEDDINGS [--vocab vocab.txt]
        [--similarity wordsim353.tsv] [--analogies questions-words.txt]
        [--neighbours WORD [WORD ...]] [--restrict N] [--json]

EMBEDDINGS is word2vec text format (first line "V D", then one
"word v1 ... vD" line per word) or binary format (.w2v.bin), or, with --vocab, a bare matrix of V rows of
D numbers in vocabulary order (what fedavg_mpi writes to trained/), whose
words are read from a vocab.txt (words, each optionally followed by its
count).  Words are looked up in lowercase.

Functions:
    load_word2vec(path) -> (words, vectors)
    load_matrix(path, vocab_path) -> (words, vectors)
    similarity(words, vectors, path) -> dict (Spearman rho, coverage)
    analogies(words, vectors, path, restrict=None) -> dict (3CosAdd accuracy)
    neighbours(words, vectors, query, k=10) -> list of (word, cosine)
    spearman(x, y) -> float (average ranks for ties)
"""

import argparse
import json
import sys

import numpy as np

_ANALOGY_CHUNK = 256  # questions per [chunk, V] score matrix


# --------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------

def load_word2vec(path):
    """Read a word2vec file, text or binary (found from its first row):
    returns (words, float32 [V, D]).

    The header must be "V D".  A word listed twice keeps its first vector.
    Raises ValueError("<path>:<line>: ...") for a bad header or row.
    """
    if _is_binary_word2vec(path):
        return _dedupe(*_load_word2vec_binary(path))
    with open(path, encoding="utf-8", errors="replace") as f:
        header = f.readline().split()
        if len(header) != 2 or not all(h.isdigit() for h in header):
            raise ValueError(f"{path}:1: expected a header 'V D', got "
                             f"{' '.join(header)[:60]!r}")
        count, dim = int(header[0]), int(header[1])
        words, rows = [], []
        for lineno, line in enumerate(f, start=2):
            parts = line.rstrip("\n").rstrip().split(" ", 1)
            if not parts[0]:
                continue
            if len(parts) != 2:
                raise ValueError(f"{path}:{lineno}: word {parts[0]!r} has no "
                                 "vector")
            words.append(parts[0])
            rows.append(parts[1])
    vectors = _parse_rows(rows, dim, path, first_line=2)
    if len(words) != count:
        raise ValueError(f"{path}:1: header says {count} words, file has "
                         f"{len(words)}")
    return _dedupe(words, vectors)


def _is_binary_word2vec(path):
    """True if the first row after the "V D" header is a word and D
    float32 values (word2vec's binary format, .w2v.bin): it is not D
    numbers in text, and the bytes after the word are not text."""
    with open(path, "rb") as f:
        header = f.readline().split()
        if len(header) != 2 or not all(h.isdigit() for h in header):
            return False
        dim = int(header[1])
        row = f.read(4096 + 4 * dim)
    word_end = row.find(b" ")
    if word_end < 0:
        return False
    line = row.split(b"\n", 1)[0]
    try:
        if len([float(x) for x in line.split()[1:]]) == dim:
            return False
    except ValueError:
        pass
    values = row[word_end + 1:word_end + 1 + 4 * dim]
    try:
        text = values.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return any(c < " " and c not in "\t\r\n" for c in text)


def _load_word2vec_binary(path):
    """word2vec's binary format: "V D\n", then per word its UTF-8 bytes, a
    space, D little-endian float32 and (as word2vec writes) a newline."""
    with open(path, "rb") as f:
        data = f.read()
    end = data.index(b"\n")
    count, dim = (int(x) for x in data[:end].split())
    words, vectors, at = [], np.empty((count, dim), np.float32), end + 1
    for i in range(count):
        while at < len(data) and data[at:at + 1] in (b"\n", b" "):
            at += 1
        space = data.find(b" ", at)
        if space < 0 or space + 1 + 4 * dim > len(data):
            raise ValueError(f"{path}: binary word2vec file ends at word "
                             f"{i + 1} of the {count} its header says")
        words.append(data[at:space].decode("utf-8", errors="replace"))
        vectors[i] = np.frombuffer(data, "<f4", dim, space + 1)
        at = space + 1 + 4 * dim
    return words, vectors


def load_matrix(path, vocab_path):
    """Read a bare matrix (one row of D numbers per vocabulary word) and the
    words of a vocab.txt; returns (words, float32 [V, D])."""
    with open(vocab_path, encoding="utf-8") as f:
        words = [t for t in f.read().split() if not t.isdigit()]
    with open(path, encoding="utf-8") as f:
        rows = [line for line in f if line.strip()]
    if len(rows) != len(words):
        raise ValueError(f"{path}: {len(rows)} rows but {vocab_path} has "
                         f"{len(words)} words")
    dim = len(rows[0].split()) if rows else 0
    return _dedupe(words, _parse_rows(rows, dim, path, first_line=1))


def _parse_rows(rows, dim, path, first_line):
    flat = np.array(" ".join(rows).split(), dtype=np.float32)
    if flat.size != len(rows) * dim:
        for i, row in enumerate(rows):
            if len(row.split()) != dim:
                raise ValueError(f"{path}:{i + first_line}: expected {dim} "
                                 f"numbers, got {len(row.split())}")
    return flat.reshape(len(rows), dim)


def _dedupe(words, vectors):
    seen, keep = set(), []
    for i, w in enumerate(words):
        if w not in seen:
            seen.add(w)
            keep.append(i)
    if len(keep) == len(words):
        return list(words), vectors
    return [words[i] for i in keep], vectors[keep]


def _normalised(vectors):
    v = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.maximum(norms, 1e-12)


def _index(words):
    return {w.lower(): i for i, w in reversed(list(enumerate(words)))}


# --------------------------------------------------------------------------
# Word similarity
# --------------------------------------------------------------------------

def rank_average(x):
    """Ranks 1..n of ``x``, ties sharing the average of their ranks."""
    x = np.asarray(x, dtype=np.float64)
    order = np.argsort(x, kind="mergesort")
    sorted_x = x[order]
    # Start of each run of equal values, and its length.
    starts = np.flatnonzero(np.r_[True, sorted_x[1:] != sorted_x[:-1]])
    lengths = np.diff(np.r_[starts, x.size])
    avg = starts + (lengths + 1) / 2.0          # average 1-based rank
    ranks = np.empty(x.size)
    ranks[order] = np.repeat(avg, lengths)
    return ranks


def spearman(x, y):
    """Spearman's rho: Pearson correlation of the (tie-averaged) ranks."""
    if len(x) != len(y) or len(x) < 2:
        return float("nan")
    rx, ry = rank_average(x), rank_average(y)
    rx -= rx.mean()
    ry -= ry.mean()
    denom = np.sqrt((rx * rx).sum() * (ry * ry).sum())
    return float((rx * ry).sum() / denom) if denom > 0 else float("nan")


def read_pairs(path):
    """word1 <tab/space> word2 <tab/space> score lines; '#' comments and
    blank lines skipped; a first line without a numeric score (a header)
    is skipped too.  Returns [(w1, w2, score)] in lowercase."""
    pairs = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            try:
                if len(parts) != 3:
                    raise ValueError
                pairs.append((parts[0].lower(), parts[1].lower(),
                              float(parts[2])))
            except ValueError:
                if pairs:
                    raise ValueError(f"{path}:{lineno}: expected 'word1 word2 "
                                     f"score', got {line.strip()[:60]!r}") \
                        from None
    return pairs


def similarity(words, vectors, path):
    """Spearman rho between human scores and cosine similarities over the
    pairs whose two words are in the vocabulary.  Returns {"rho", "pairs"
    (covered), "total", "coverage"}."""
    pairs = read_pairs(path)
    covered = _covered_pairs(_index(words), pairs)
    return {"rho": _rho(vectors, covered), "pairs": len(covered[2]),
            "total": len(pairs),
            "coverage": len(covered[2]) / len(pairs) if pairs else 0.0}


def _covered_pairs(index, pairs):
    """(rows of the first words, rows of the second, scores) of the pairs
    whose two words are in ``index``."""
    covered = [(index[a], index[b], s) for a, b, s in pairs
               if a in index and b in index]
    return (np.array([c[0] for c in covered], dtype=np.int64),
            np.array([c[1] for c in covered], dtype=np.int64),
            [c[2] for c in covered])


def _rho(vectors, covered):
    """Spearman rho between the scores and the cosines of the covered
    pairs (only their rows are normalised); NaN under two pairs."""
    a, b, scores = covered
    if len(scores) < 2:
        return float("nan")
    vectors = np.asarray(vectors)
    cos = np.einsum("ij,ij->i", _normalised(vectors[a]),
                    _normalised(vectors[b]))
    return spearman(cos, scores)


# --------------------------------------------------------------------------
# Analogies
# --------------------------------------------------------------------------

def read_questions(path):
    """questions-words.txt: ': section' headers, then 'a b c d' lines
    (a:b :: c:d).  Returns [(section, a, b, c, d)] in lowercase."""
    out, section = [], ""
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            parts = line.split()
            if not parts:
                continue
            if parts[0] == ":":
                section = " ".join(parts[1:])
                continue
            if len(parts) != 4:
                raise ValueError(f"{path}:{lineno}: expected 4 words, got "
                                 f"{len(parts)}")
            out.append((section, *[p.lower() for p in parts]))
    return out


def analogies(words, vectors, path, restrict=None):
    """3CosAdd accuracy: for a:b :: c:d, the answer is the word nearest (by
    cosine, over unit vectors) to b - a + c, excluding a, b and c.  Only
    questions whose four words are in the vocabulary (the first
    ``restrict`` words if given) count.  Returns {"accuracy", "correct",
    "questions" (covered), "total", "coverage", "sections": {name:
    {"accuracy", "correct", "questions"}}, "semantic", "syntactic"}
    (syntactic = the 'gram*' sections)."""
    questions = read_questions(path)
    if restrict:
        words, vectors = words[:restrict], vectors[:restrict]
    kept, ids = _covered_questions(_index(words), questions)
    correct = _answered(vectors, ids)

    def summary(mask):
        n = int(mask.sum())
        c = int(correct[mask].sum())
        return {"accuracy": c / n if n else float("nan"), "correct": c,
                "questions": n}

    sections = {}
    names = np.array([q[0] for q in kept], dtype=object)
    for name in dict.fromkeys(q[0] for q in questions):
        sections[name] = summary(names == name)
    syntactic = np.array([n.startswith("gram") for n in names], dtype=bool)
    result = summary(np.ones(len(kept), dtype=bool))
    result.update({"total": len(questions),
                   "coverage": len(kept) / len(questions) if questions
                   else 0.0,
                   "semantic": summary(~syntactic),
                   "syntactic": summary(syntactic),
                   "sections": sections})
    return result


def _covered_questions(index, questions):
    """(the questions whose four words are in ``index``, int64 [n, 4] of
    their rows)."""
    kept = [q for q in questions if all(w in index for w in q[1:])]
    ids = np.array([[index[w] for w in q[1:]] for q in kept],
                   dtype=np.int64).reshape(-1, 4)
    return kept, ids


def _answered(vectors, ids):
    """bool [n]: whether 3CosAdd answers each question of ``ids`` (rows
    a, b, c, d) right."""
    unit = _normalised(vectors)
    correct = np.zeros(ids.shape[0], dtype=bool)
    for start in range(0, ids.shape[0], _ANALOGY_CHUNK):
        q = ids[start:start + _ANALOGY_CHUNK]
        target = unit[q[:, 1]] - unit[q[:, 0]] + unit[q[:, 2]]
        scores = target @ unit.T                       # [chunk, V]
        rows = np.arange(q.shape[0])[:, None]
        scores[rows, q[:, :3]] = -np.inf               # exclude a, b, c
        correct[start:start + q.shape[0]] = scores.argmax(1) == q[:, 3]
    return correct


# --------------------------------------------------------------------------
# Neighbours
# --------------------------------------------------------------------------

def neighbours(words, vectors, query, k=10):
    """The ``k`` words with the highest cosine similarity to ``query``
    (itself excluded), as [(word, cosine)]; None if ``query`` is unknown."""
    index = _index(words)
    i = index.get(query.lower())
    if i is None:
        return None
    unit = _normalised(vectors)
    cos = unit @ unit[i]
    cos[i] = -np.inf
    k = min(k, len(words) - 1)
    top = np.argpartition(-cos, k - 1)[:k] if k > 0 else np.array([], int)
    top = top[np.argsort(-cos[top], kind="stable")]
    return [(words[j], float(cos[j])) for j in top]


# --------------------------------------------------------------------------
# In-run scores (the Dispatcher, every eval_every rounds)
# --------------------------------------------------------------------------

class Scorer:
    """Scores the embeddings of a training run against a similarity file
    and/or an analogy file, both checked when the Scorer is made (a bad line
    raises ValueError naming the file and line)."""

    def __init__(self, words, similarity_path=None, analogies_path=None):
        self.words = list(words)
        self.similarity_path = similarity_path or None
        self.analogies_path = analogies_path or None
        # The words are the run's: the rows of the covered pairs and
        # questions are found once, and a call reads only the vectors.
        index = _index(self.words)
        self._pairs = self._questions = None
        if self.similarity_path:
            self._pairs = _covered_pairs(index,
                                         read_pairs(self.similarity_path))
        if self.analogies_path:
            self._questions = _covered_questions(
                index, read_questions(self.analogies_path))[1]

    def __call__(self, vectors):
        """(Spearman rho, 3CosAdd accuracy); NaN for a missing file or
        when nothing in it is covered by the vocabulary."""
        rho = acc = float("nan")
        if self._pairs is not None:
            rho = _rho(vectors, self._pairs)
        if self._questions is not None and self._questions.shape[0]:
            acc = _answered(vectors, self._questions).mean()
        return float(rho), float(acc)


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------

def evaluate(embeddings, vocab=None, similarity_path=None,
             analogies_path=None, neighbour_words=(), restrict=None):
    """Everything the command line does, as one dict."""
    if vocab:
        words, vectors = load_matrix(embeddings, vocab)
    else:
        words, vectors = load_word2vec(embeddings)
    out = {"embeddings": str(embeddings), "words": len(words),
           "dim": int(vectors.shape[1])}
    if similarity_path:
        out["similarity"] = similarity(words, vectors, similarity_path)
    if analogies_path:
        out["analogies"] = analogies(words, vectors, analogies_path,
                                     restrict)
    if neighbour_words:
        out["neighbours"] = {w: neighbours(words, vectors, w)
                             for w in neighbour_words}
    return out


def _print_text(r):
    print(f"{r['embeddings']}: {r['words']} words, dimension {r['dim']}")
    if "similarity" in r:
        s = r["similarity"]
        print(f"similarity: Spearman rho {s['rho']:.4f} over {s['pairs']}/"
              f"{s['total']} pairs ({100 * s['coverage']:.1f}% covered)")
    if "analogies" in r:
        a = r["analogies"]
        print(f"analogies: 3CosAdd accuracy {a['accuracy']:.4f} "
              f"({a['correct']}/{a['questions']}; {a['questions']}/"
              f"{a['total']} questions covered, "
              f"{100 * a['coverage']:.1f}%); semantic "
              f"{a['semantic']['accuracy']:.4f}, syntactic "
              f"{a['syntactic']['accuracy']:.4f}")
    for word, near in r.get("neighbours", {}).items():
        if near is None:
            print(f"{word}: not in the vocabulary")
        else:
            print(f"{word}: " + ", ".join(f"{w} {c:.3f}" for w, c in near))


def _json_safe(x):
    """NaN (no pairs, no questions) becomes null: strict JSON."""
    if isinstance(x, float) and x != x:
        return None
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v) for v in x]
    return x


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("embeddings", help="word2vec text file (or a bare matrix "
                   "with --vocab)")
    p.add_argument("--vocab", help="vocab.txt giving the words of a bare "
                   "matrix's rows")
    p.add_argument("--similarity", metavar="PAIRS",
                   help="word-pair file (WordSim353 .tsv): Spearman rho")
    p.add_argument("--analogies", metavar="QUESTIONS",
                   help="questions-words.txt: 3CosAdd accuracy")
    p.add_argument("--neighbours", nargs="+", default=[], metavar="WORD",
                   help="print the 10 nearest words of each WORD")
    p.add_argument("--restrict", type=int, default=None, metavar="N",
                   help="analogies: search only the first N words")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object")
    args = p.parse_args(argv)
    try:
        result = evaluate(args.embeddings, args.vocab, args.similarity,
                          args.analogies, args.neighbours, args.restrict)
    except (OSError, ValueError) as e:
        print(f"evaluate: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(_json_safe(result)))
    else:
        _print_text(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
