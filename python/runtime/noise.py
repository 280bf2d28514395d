"""Noise words for negative sampling: the distribution, Walker's alias
table and a seeded stream of draws.  NumPy only; importing does no work.

The distribution is count ** power over the vocabulary (word2vec's unigram
to the 0.75), uniform when there are no counts; a word with count 0 is never
drawn.  Draws are exact up to float32 rounding of the alias table.
"""

import numpy as np

_POOL = 1 << 16  # words drawn at a time: the per-call cost is paid rarely


def noise_weights(counts, vocab_size, power):
    """Unnormalised noise weights count**power (float64 [V]); uniform when
    ``counts`` is None.  ValueError for counts that do not fit."""
    if counts is None:
        return np.ones(vocab_size)
    c = np.asarray(counts)
    if c.shape != (vocab_size,) or c.dtype.kind not in "iu" \
            or (c < 0).any():
        raise ValueError(f"cfg: counts must be {vocab_size} integers >= 0 "
                         f"(one per vocabulary word)")
    weights = c.astype(np.float64) ** power
    weights[c == 0] = 0.0                      # 0**0 == 1: never draw them
    if not weights.sum() > 0:
        raise ValueError("cfg: counts are all zero: no noise distribution")
    return weights


def alias_table(weights):
    """Walker/Vose alias table for drawing index i with probability
    weights[i] / sum(weights): returns (prob float32 [V], alias int64 [V]).
    Draw a column c uniformly and a coin u in [0, 1): take c if
    u < prob[c], else alias[c]."""
    v = weights.shape[0]
    scaled = weights * (v / weights.sum())
    alias = np.arange(v, dtype=np.int64)
    prob = np.ones(v)
    small = [i for i in range(v) if scaled[i] < 1.0]
    large = [i for i in range(v) if scaled[i] >= 1.0]
    while small and large:
        s, g = small.pop(), large[-1]
        prob[s], alias[s] = scaled[s], g
        scaled[g] -= 1.0 - scaled[s]
        if scaled[g] < 1.0:
            small.append(large.pop())
    zero = weights == 0                        # left over by rounding
    prob[zero] = 0.0
    alias[zero & (alias == np.arange(v))] = int(np.argmax(weights))
    prob[~zero & (alias == np.arange(v))] = 1.0
    return prob.astype(np.float32), alias


class NoiseSampler:
    """Draws noise words from the distribution of (counts, power).

    ``next(count)`` continues the training stream, seeded by (seed, rank) so
    that learners draw different words; ``fixed(count)`` starts a fresh
    stream from (seed) on every call, so the same test windows get the same
    noise words every time.  ``state()``/``load_state()`` carry the training
    stream across a checkpoint.
    """

    def __init__(self, counts, vocab_size, power, seed, rank):
        self.vocab_size = vocab_size
        self.prob, self.alias = alias_table(
            noise_weights(counts, vocab_size, power))
        self.rng = np.random.default_rng([seed, rank, 1])
        self.test_seed = [seed, 2]
        self._pool, self._pos = np.empty(0, np.int64), 0

    def draw(self, rng, count):
        """``count`` words (int64) from ``rng``: a uniform column c and a
        uniform float32 coin u; c if u < prob[c], else alias[c]."""
        col = rng.integers(0, self.vocab_size, count)
        coin = rng.random(count, dtype=np.float32)
        return np.where(coin < self.prob[col], col, self.alias[col])

    def next(self, count):
        """The next ``count`` words of the training stream (a view)."""
        if self._pos + count > self._pool.shape[0]:
            rest = self._pool[self._pos:]
            fresh = self.draw(self.rng, max(_POOL, count))
            self._pool = np.concatenate((rest, fresh))
            self._pos = 0
        out = self._pool[self._pos:self._pos + count]
        self._pos += count
        return out

    def test_stream(self):
        """A fresh generator of the fixed test stream."""
        return np.random.default_rng(self.test_seed)

    def state(self):
        return {"rng": self.rng.bit_generator.state,
                "pool": self._pool[self._pos:].copy()}

    def load_state(self, state):
        """Takes a state() back; raises ValueError naming the field that is
        not one (word ids outside the vocabulary above all)."""
        pool = state["pool"]
        if not isinstance(pool, np.ndarray) or pool.ndim != 1 or pool.dtype != np.int64:
            raise ValueError("noise pool: not a list of word ids (int64)")
        bad = np.flatnonzero((pool < 0) | (pool >= self.vocab_size))
        if bad.size:
            raise ValueError(f"noise pool: word id {int(pool[bad[0]])} is outside the vocabulary "
                             f"(0 to {self.vocab_size - 1})")
        try:
            self.rng.bit_generator.state = state["rng"]
        except (TypeError, ValueError, KeyError) as e:
            raise ValueError(f"noise rng: not a generator's state ({e})") from None
        self._pool, self._pos = pool, 0
