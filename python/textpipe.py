"""Tokenization and input-file parsing for fedavg_mpi.

Pipeline ranks import this module, so it must never import torch: only the
standard library and NumPy are allowed here.  NumPy is imported by the
functions that use it: the Filter and the Batcher only read the vocabulary,
and skip its import.

Tokenization rule (kept from the 2019 report): lowercase the text, turn every
non-letter into a space and split on whitespace.  A "letter" is a Unicode
word character that is not a decimal digit or "_" (``[^\\W\\d_]`` in
Python's ``re``: alphabetic characters plus a few numeric symbols such as
"²"), so digits, punctuation and apostrophes all split words ("don't" ->
"don", "t").

Token ids produced by :class:`Tokenizer` are vocabulary indices (>= 0) or one
of the negative markers below.

Public surface (see docs/python_interface.md):
    BREAK, OOV                      token markers
    tokenize_words(text)            the tokenization rule, as a list of words
    ascii_words(data)               the rule on ASCII bytes, as a list of bytes
    load_vocab(path)                vocab.txt -> (words, counts or None)
    load_test(path, vocab, window)  test.txt  -> int32 [T, 2*window+1]
    Tokenizer(vocab).tokenize(data) UTF-8 bytes -> int32 token ids
"""

from __future__ import annotations

import re
from itertools import repeat
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

BREAK = -1  # end of a line: windows never cross it
OOV = -2    # a word that is not in the vocabulary

# A word is a maximal run of letters.
_WORD_RE = re.compile(r"[^\W\d_]+")
_COUNT_RE = re.compile(r"[0-9]+")
# Non-ASCII characters that are not word characters (dashes, quotes, U+FFFD,
# combining marks): blanked before the byte-level split.  Non-ASCII digits
# are word characters and are left for Tokenizer._split_non_ascii.
_NON_ASCII_NON_WORD_RE = re.compile(r"[^\w\x00-\x7f]+")


def tokenize_words(text: str) -> list:
    """Return the words of ``text`` under the tokenization rule."""
    return _WORD_RE.findall(text.lower())


def ascii_words(data: bytes) -> list:
    """Return the words of ASCII ``data`` under the tokenization rule, as
    bytes: one translate and one split in C, several times faster than
    the regex of tokenize_words (ASCII letters are the only ASCII letters
    the rule knows)."""
    return data.translate(_ASCII_WORD_TABLE).split()


def _is_valid_word(word: str) -> bool:
    """True if the tokenizer can produce ``word`` (letters only, lowercase)."""
    return tokenize_words(word) == [word]


def _read_lines(path):
    """Yield (line_number, text) for each line of a UTF-8 text file.

    Invalid bytes become lone surrogates, which are non-letters, so they are
    reported as invalid words rather than raising UnicodeDecodeError without
    a line number.  Raises OSError (naming the path) if the file is unreadable.
    """
    with open(path, encoding="utf-8-sig", errors="surrogateescape") as f:
        yield from enumerate(f, start=1)


def load_vocab(path):
    """Read a vocabulary file.

    The file holds words separated by whitespace; a word's index is its
    position.  Each word may be followed by an all-digit token giving its
    corpus count (``the 6400``); counts are all-or-none.

    Returns ``(words, counts)`` where ``counts`` is a list of ints or None.
    Raises ValueError("<path>:<line>: <reason>") for an empty file, a
    duplicate word, an invalid word, a count without a word, or mixed counts.
    """
    words: list[str] = []
    counts: list[int | None] = []
    lines: list[int] = []
    first_line: dict[str, int] = {}
    for lineno, text in _read_lines(path):
        for tok in text.split():
            if _COUNT_RE.fullmatch(tok):
                if not words or counts[-1] is not None:
                    raise ValueError(f"{path}:{lineno}: count {tok} without a "
                                     "preceding word")
                counts[-1] = int(tok)
                continue
            if not _is_valid_word(tok):
                raise ValueError(
                    f"{path}:{lineno}: invalid word {tok!r}: the tokenizer "
                    "only produces lowercase letters, so it can never match")
            if tok in first_line:
                raise ValueError(f"{path}:{lineno}: duplicate word {tok!r} "
                                 f"(first at line {first_line[tok]})")
            first_line[tok] = lineno
            words.append(tok)
            counts.append(None)
            lines.append(lineno)
    if not words:
        raise ValueError(f"{path}:1: no words (empty vocabulary file)")
    with_count = [c is not None for c in counts]
    if all(with_count):
        return words, counts
    if not any(with_count):
        return words, None
    # Mixed: report the first word that disagrees with the first word.
    bad = with_count.index(not with_count[0])
    has = "has" if with_count[bad] else "has no"
    first = "has none" if with_count[bad] else "has one"
    raise ValueError(f"{path}:{lines[bad]}: word {words[bad]!r} {has} count "
                     f"but {words[0]!r} (line {lines[0]}) {first}; give a "
                     "count for every word or for none")


def load_test(path, vocab, window: int) -> np.ndarray:
    """Read test.txt: one context window of ``2*window+1`` words per line.

    Words are in text order; the centre word (column ``window``) is the
    target.  Blank lines are skipped.  Returns a C-contiguous int32 array
    of vocabulary indices, shape [T, 2*window+1].
    Raises ValueError("<path>:<line>: <reason>") for a line with the wrong
    number of words, a word not in ``vocab``, or a file with no windows.
    """
    import numpy as np

    if window < 1:
        raise ValueError(f"{path}: window must be >= 1, got {window}")
    width = 2 * window + 1
    index = {w: i for i, w in enumerate(vocab)}
    rows = []
    for lineno, text in _read_lines(path):
        toks = text.split()
        if not toks:
            continue
        if len(toks) != width:
            hint = ""
            if len(toks) % 2 == 1 and len(toks) > 1:
                hint = (f" (a test set made for window {len(toks) // 2}: "
                        f"prepare the config again with --window {window})")
            raise ValueError(f"{path}:{lineno}: expected {width} words "
                             f"(window {window}), got {len(toks)}{hint}")
        try:
            rows.append([index[t] for t in toks])
        except KeyError as e:
            raise ValueError(f"{path}:{lineno}: word {e.args[0]!r} is not "
                             "in the vocabulary") from None
    if not rows:
        raise ValueError(f"{path}:1: no context windows (empty test file)")
    return np.ascontiguousarray(np.array(rows, dtype=np.int32))


def _byte_table() -> bytes:
    """bytes.translate table for UTF-8 text.

    A-Z -> a-z and a-z kept; newline -> 0x01 (a BREAK token once spaced
    out); every other ASCII byte (digits, punctuation, controls) -> space;
    bytes >= 0x80 (parts of non-ASCII characters) are kept for the regex.
    """
    table = bytearray(range(256))
    for c in range(128):
        table[c] = ord(" ")
    for c in range(ord("a"), ord("z") + 1):
        table[c] = table[c - 32] = c
    table[ord("\n")] = 1
    return bytes(table)


_BYTE_TABLE = _byte_table()
# The same for ASCII words alone: a newline is a space like any non-letter.
_ASCII_WORD_TABLE = _BYTE_TABLE.replace(b"\x01", b" ")


class Tokenizer:
    """Turns blocks of UTF-8 text into vocabulary ids.

    Work happens on bytes: one translate + split gives the words and the
    line breaks.  Non-ASCII blocks are first decoded, lowercased and have
    their non-ASCII non-word characters blanked; the rare unknown candidate
    that still holds a non-letter (a non-ASCII digit) goes through the
    regex.  The result equals tokenize_words() applied line by line.

    Why bytes: translate and split run in C over the whole block, so ASCII
    text costs a few C passes and one dictionary lookup per word; only
    blocks with non-ASCII characters pay for decoding, lowercasing and the
    regex, which makes them slower.  The Tokenizer is a small share
    of the pipeline's CPU; measured figures are in docs/performance.md.
    """

    def __init__(self, vocab):
        ids = {w: i for i, w in enumerate(vocab)}
        if len(ids) != len(vocab):
            raise ValueError("Tokenizer: vocabulary has duplicate words")
        self._ids = ids
        self._byte_ids = {w.encode("utf-8"): i for w, i in ids.items()}
        self._byte_ids[b"\x01"] = BREAK

    def tokenize(self, data) -> np.ndarray:
        """Tokenize a bytes-like block of whole lines.

        Returns int32 ids in text order: the vocabulary index of each word,
        OOV for unknown words, and BREAK after every line (each '\\n', plus
        one for a final non-empty line without '\\n').  Invalid UTF-8 is
        replaced by U+FFFD, a non-letter.  ``data`` is not kept.
        """
        import numpy as np

        raw = bytes(data)
        ascii_only = raw.isascii()
        if ascii_only:
            text = raw
        else:
            lowered = str(raw, "utf-8", "replace").lower()
            text = _NON_ASCII_NON_WORD_RE.sub(" ", lowered).encode("utf-8")
        toks = text.translate(_BYTE_TABLE).replace(b"\x01", b" \x01 ").split()
        get = self._byte_ids.get
        ids = np.fromiter(map(get, toks, repeat(OOV)), np.int32, len(toks))
        if not ascii_only:
            ids = self._split_non_ascii(ids, toks)
        if raw and not raw.endswith(b"\n"):  # final line without '\n'
            ids = np.append(ids, np.int32(BREAK))
        return ids

    def _split_non_ascii(self, ids, toks):
        """Re-tokenize unknown candidates that hold non-ASCII characters.

        Such a candidate may hold non-ASCII digits, so it can yield zero,
        one or several words.
        """
        import numpy as np

        get = self._ids.get
        pieces, start = [], 0
        for i in np.flatnonzero(ids == OOV).tolist():
            tok = toks[i]
            if tok.isascii():
                continue  # a plain unknown word
            words = _WORD_RE.findall(tok.decode("utf-8"))
            if len(words) == 1:
                ids[i] = get(words[0], OOV)
                continue
            pieces.append(ids[start:i])
            pieces.append(np.array([get(w, OOV) for w in words], np.int32))
            start = i + 1
        if not pieces:
            return ids
        pieces.append(ids[start:])
        return np.concatenate(pieces)
