"""A toy corpus for model tests: sentences from a tiny grammar (the one tests/e2e/conftest.py writes), so the
next word is predictable and a model's loss must fall."""

import random

import numpy as np

ADJ = "big small red old young dark bright quiet".split()
NOUN = "dog cat bird horse fish king queen child".split()
VERB = "sees finds likes follows hears calls".split()
WORDS = sorted(set(ADJ + NOUN + VERB + "the and then it sleeps".split()))


def sentences(n, seed):
    rng = random.Random(seed)
    return [["the", rng.choice(ADJ), rng.choice(NOUN), rng.choice(VERB), "the", rng.choice(ADJ),
             rng.choice(NOUN), "and", "then", "it", "sleeps"] for _ in range(n)]


def windows(n_sentences, seed, window=2, shuffle=True):
    """int32 [n, 2*window+1] windows inside sentences, ids indexing WORDS; shuffled as the Batcher does."""
    index = {w: i for i, w in enumerate(WORDS)}
    rows = []
    for s in sentences(n_sentences, seed):
        ids = [index[w] for w in s]
        rows += [ids[i:i + 2 * window + 1] for i in range(len(ids) - 2 * window)]
    out = np.array(rows, np.int32)
    if shuffle:
        out = out[np.random.default_rng(seed).permutation(len(out))]
    return out


def counts(windows):
    """Word counts (for the noise distribution) from the targets of ``windows``."""
    return np.bincount(windows[:, windows.shape[1] // 2], minlength=len(WORDS)).tolist()
