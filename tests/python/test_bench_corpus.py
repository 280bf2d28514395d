"""bench/corpus.py: the windows and subsampling the benchmarks train on."""

import sys

import numpy as np
import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import corpus  # noqa: E402
import textpipe  # noqa: E402


def test_vocab_windows_skip_oov_and_never_cross_lines():
    text = "a b c d e\nb b a zz c d\na b\n"
    words, counts = corpus.build_vocab(text, min_count=2)
    assert words == ["b", "a", "c", "d"] and counts == [4, 3, 2, 2]
    ids = corpus.token_lines(text, words)
    wins = corpus.make_windows(ids, window=2)
    # Line 1: a b c d (e is OOV) -> 0 full windows of 5 words;
    # line 2: b b a c d (zz removed) -> one window; line 3: too short.
    assert wins.tolist() == [[0, 0, 1, 2, 3]]
    assert wins.dtype == np.int32 and wins.flags.c_contiguous
    assert corpus.make_windows(ids, window=1).tolist() == [
        [1, 0, 2], [0, 2, 3], [0, 0, 1], [0, 1, 2], [1, 2, 3]]
    assert corpus.gensim_sentences(ids, words) == [
        ["a", "b", "c", "d"], ["b", "b", "a", "c", "d"], ["a", "b"]]


def test_subsample_keeps_word2vec_fraction():
    counts = [9000, 1000]                     # f/T = 0.9 and 0.1
    ids = np.r_[np.zeros(90_000, np.int32), np.ones(10_000, np.int32),
                [textpipe.BREAK]]
    out = corpus.subsample(ids, counts, sample=1e-2, seed=0)
    t = 1e-2 * 10_000
    for word, f in ((0, 9000), (1, 1000)):
        keep = (np.sqrt(f / t) + 1) * t / f
        kept = np.mean(out[ids == word] == word)
        assert kept == pytest.approx(keep, abs=0.01)
    assert out[-1] == textpipe.BREAK
    assert np.all((out == ids) | (out == textpipe.OOV))
    assert np.array_equal(corpus.subsample(ids, counts, 0), ids)
