"""The fused "neg" model, the default, built into engine.py: CBOW with
negative sampling, trained with word2vec's SGD written out by hand (no
autograd).  On a CPU its step and its test loss are each one fused C++
kernel of fedavg_kernels (src/kernels/neg_cbow.cpp) on NumPy views of the
weight buffer in place, and nothing imports torch; on a GPU, or where the
module is not built, the same step runs as torch ops (fused_neg_torch.py).
It is the fastest model here and the least easy to change; library.py's
NegCBOW ("neg_autograd") is the same model in a few lines of autograd, the
one to edit.  It is a contract.FusedModelClass (param_shapes, init_,
check_args, numpy_on_cpu), whose instance is the contract.Runnable with
every optional method.  Importing this module does no work and imports no
torch.
"""

import math
import numbers
import os
from typing import Any, cast

import numpy as np

from . import state_codec
from .noise import NoiseSampler, noise_weights
from .written_marks import WrittenMarks

try:  # the fused step (src/kernels/), built with the program, which puts it on sys.path
    import fedavg_kernels
except ImportError:  # not built: the step runs as torch ops (the same model)
    fedavg_kernels = None

_EVAL_CHUNK = 4096  # windows per forward pass in test_loss (bounds memory)


def int_arg(name, value, low):
    """``value`` as an int >= low, or ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) \
            or value < low:
        raise ValueError(f"cfg: {name} must be an integer >= {low}, "
                         f"got {value!r}")
    return int(value)


def _kept_counts(opts):
    """Per word, its count less what the Filter's subsampling drops, in
    expectation (float64); None without counts."""
    counts = opts.get("counts")
    if not counts:
        return None
    f = np.asarray(counts, dtype=np.float64)
    sample = float(opts.get("sample") or 0.0)
    if sample <= 0:
        return f
    threshold = sample * f.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        keep = np.minimum(1.0, (np.sqrt(f / threshold) + 1.0) * threshold / f)
    return np.where(f > 0, f * keep, 0.0)


def _epoch_windows(opts):
    """The windows a pass over the text makes, as far as the vocabulary's
    counts tell (each word a window, less the words the Filter's
    subsampling drops, in expectation); None without counts."""
    kept = _kept_counts(opts)
    return None if kept is None else float(kept.sum())


def _word_frequencies(opts, vocab_size):
    """Per word, the share of the training text's words it makes after the
    Filter's subsampling, as far as the counts tell (uniform without)."""
    kept = _kept_counts(opts)
    if kept is None or not kept.sum() > 0:
        return np.full(vocab_size, 1.0 / vocab_size)
    return kept / kept.sum()


def shared_steps(opts, negatives, noise_power):
    """How this learner steps when ``share_learners`` learners train one
    table (share_host), L of them at once (no more than the host's cores):
    in steps of bs / L windows, so that the L learners' concurrent steps
    make one step of bs windows, as one learner's batch does; and, per row
    of the [2V] stacked table, the occurrences the other L - 1 learners'
    steps are expected to add to one of its steps, which the duplicates
    rule counts with its own.  (0, None) for one learner: a whole batch a
    step."""
    # At most one learner per core writes at any moment: more learners than
    # cores take turns, each seeing what the others wrote.
    sharing = min(int(opts.get("share_learners") or 1), os.cpu_count() or 1)
    if sharing <= 1:
        return 0, None
    v, window = opts["vocab_size"], opts["window"]
    block = max(1, int(opts["bs"]) // sharing)
    words = _word_frequencies(opts, v)
    noise = noise_weights(opts.get("counts"), v, noise_power)
    noise = noise / noise.sum()
    per_window = np.concatenate([2 * window * words,
                                 words + negatives * noise])
    return block, ((sharing - 1) * block * per_window).astype(np.float32)


def _known_length(opts, args):
    """Whether the run's length is known, for the "auto" schedule: a decay
    length in model_args, or no target and a limit of rounds or passes (with
    counts in vocab.txt to turn passes into steps)."""
    if args["decay_steps"] is not None:
        return True
    if float(opts.get("target") or 0.0) > 0:
        return False
    return bool(opts.get("max_rounds")) or (
        float(opts.get("max_epochs") or 0.0) > 0
        and bool(_epoch_windows(opts)))


def _planned_steps(opts):
    """A learner's steps over the whole run, for the linear schedule: bpe *
    max_rounds, or the steps of max_epochs passes (estimated from the
    counts, the learners and bs), the fewer of the two where both are set.
    ValueError if neither is."""
    bpe = int_arg("bpe", opts.get("bpe", 1), 1)
    plans = []
    rounds = opts.get("max_rounds") or 0
    if rounds:
        plans.append(bpe * int_arg("max_rounds", rounds, 1))
    epochs = float(opts.get("max_epochs") or 0.0)
    windows = _epoch_windows(opts)
    if epochs > 0 and windows:
        learners = int_arg("learners", opts.get("learners", 1), 1)
        plans.append(max(1, math.ceil(epochs * windows
                                      / (int_arg("bs", opts.get("bs", 1024), 1)
                                         * learners))))
    if not plans:
        raise ValueError("cfg: model_args.lr_schedule 'linear' needs "
                         "model_args.decay_steps, max_rounds (with bpe) or "
                         "max_epochs (with counts in vocab.txt)")
    return min(plans)


class FusedNegCBOW:
    """CBOW with negative sampling, trained like word2vec (cbow_mean=1).

    Parameters: embedding [V, D] (input vectors, the embeddings we keep),
    out_vectors [V, D] (output vectors, word2vec's syn1neg).  What it
    computes, its hand-written SGD step, the repeated-row scaling
    ("duplicates"), the noise distribution, the learning-rate schedules and
    the model_args keys (_ARGS) are described for users in docs/models.md,
    "neg: the fused default"; the loss in docs/python_interface.md,
    test_loss.  Device: it runs where engine.py placed the weights (the C++
    buffer on a CPU, a copy of it on a GPU).
    """

    _ARGS = {"negatives": 5, "noise_power": 0.75, "lr_schedule": "auto",
             "decay_steps": None, "min_lr_ratio": 1e-4, "duplicates": "sqrt"}

    lr = 0.1  # default rate: plain SGD, constant (docs/models.md)
    placement: Any  # set by engine.create: where the weights live

    @staticmethod
    def numpy_on_cpu():
        """Whether, on a CPU, the model takes NumPy views of the buffer and
        NumPy batches: its step is fedavg_kernels' kernel, and torch is
        never imported.  Without the module its step runs as torch ops."""
        return fedavg_kernels is not None

    @staticmethod
    def param_shapes(opts):
        v, d = opts["vocab_size"], opts["dim"]
        return [("embedding", (v, d)), ("out_vectors", (v, d))]

    @staticmethod
    def init_(opts, arrays, rng):
        """word2vec: embeddings uniform(+-0.5/D), output vectors zero.
        Drawn a block of rows at a time: the same numbers as one draw, without
        a float64 copy of the whole table."""
        v, d = opts["vocab_size"], opts["dim"]
        table = arrays["embedding"]
        rows = max(1, (1 << 22) // d)
        for first in range(0, v, rows):
            n = min(rows, v - first)
            table[first:first + n] = rng.uniform(-0.5 / d, 0.5 / d, (n, d))
        arrays["out_vectors"][...] = 0.0

    @classmethod
    def check_args(cls, opts):
        """opts["model_args"] with defaults; ValueError naming a bad key."""
        given = opts.get("model_args") or {}
        unknown = sorted(set(given) - set(cls._ARGS))
        if unknown:
            raise ValueError(f"cfg: model_args: unknown key {unknown[0]!r} "
                             f"for model 'neg'; valid keys: "
                             f"{', '.join(sorted(cls._ARGS))}")
        args = {**cls._ARGS, **{k: v for k, v in given.items()
                                if v is not None}}
        args["negatives"] = int_arg("model_args.negatives",
                                    args["negatives"], 1)
        if args["decay_steps"] is not None:
            args["decay_steps"] = int_arg("model_args.decay_steps",
                                          args["decay_steps"], 1)
        for key, low in (("noise_power", 0.0), ("min_lr_ratio", 0.0)):
            value = args[key]
            if isinstance(value, bool) or not isinstance(value, numbers.Real) \
                    or not cast(float, value) >= low:  # numbers.Real declares no comparisons to mypy
                raise ValueError(f"cfg: model_args.{key} must be a number "
                                 f">= {low}, got {value!r}")
            args[key] = float(value)
        for key, valid in (("lr_schedule", ("auto", "linear", "constant")),
                           ("duplicates", ("sqrt", "sum", "mean"))):
            if args[key] not in valid:
                raise ValueError(f"cfg: model_args.{key} must be one of "
                                 f"{', '.join(map(repr, valid))}, got "
                                 f"{args[key]!r}")
        return args

    def __init__(self, opts, params):
        """The model over ``params``: NumPy views of the buffer (a CPU; the
        fused kernel steps them), or tensors (a GPU, or a copy of the
        buffer; on a CPU with fedavg_kernels built, the kernel steps their
        memory, elsewhere runtime/fused_neg_torch.py's torch ops)."""
        args = self.check_args(opts)
        self.window = opts["window"]
        self.vocab_size = v = opts["vocab_size"]
        self.dim = opts["dim"]
        self.negatives = args["negatives"]
        self.duplicates = args["duplicates"]
        self.sampler = NoiseSampler(opts.get("counts"), v,
                                    args["noise_power"], opts["seed"],
                                    int_arg("rank", opts.get("rank", 0), 0))
        # Learning rate: "linear", word2vec's schedule,
        # lr_t = lr * max(min_lr_ratio, 1 - t / decay_steps), t counting
        # this learner's steps, decay_steps defaulting to the run's length
        # (_planned_steps); "constant"; "auto" (the default): linear where
        # the run's length is known (_known_length), else constant (a run
        # that stops at its target).
        self.lr = opts["lr"]
        self.min_lr = opts["lr"] * args["min_lr_ratio"]
        self.decay_steps = None
        self._planned = False  # decay_steps is the run's length (plan_steps)
        self.schedule = args["lr_schedule"]
        if self.schedule == "auto":
            self.schedule = "linear" if _known_length(opts, args) \
                else "constant"
        if self.schedule == "linear":
            self.decay_steps = args["decay_steps"]
            if self.decay_steps is None:
                self.decay_steps = _planned_steps(opts)
                self._planned = True
        self.step = 0  # this learner's steps so far (restored by load_state)
        emb, out = params["embedding"], params["out_vectors"]
        if not isinstance(emb, np.ndarray) and emb.device.type == "cpu" \
                and fedavg_kernels is not None:
            emb, out = emb.detach().numpy(), out.detach().numpy()
        self._ops = None    # the torch ops, where the kernel cannot run
        if isinstance(emb, np.ndarray):
            # On a CPU the step and the test loss run as one fused kernel
            # over the batch's rows (fedavg_kernels), on the stacked [E; U]
            # rows: E and U lie back to back in the buffer (param_shapes
            # order), U's row i is stacked row V + i.
            if fedavg_kernels is None:
                raise ValueError("neg: NumPy weights need fedavg_kernels, which is not built")
            if out.ctypes.data != emb.ctypes.data + emb.nbytes \
                    or not emb.flags.c_contiguous or not out.flags.c_contiguous:
                raise ValueError("neg: embedding and out_vectors must be "
                                 "adjacent in the weight buffer")
            self.embedding = emb
            self._table = np.lib.stride_tricks.as_strided(emb, (2 * v, self.dim), emb.strides, writeable=True)
            self._written = WrittenMarks(2 * v)
            # share_host: learners that train this table at once split their
            # batches (shared_steps); only the fused step can.
            self._block, self._extra = shared_steps(opts, self.negatives, args["noise_power"])
        else:
            from .fused_neg_torch import TorchSteps
            self._ops = TorchSteps(emb, out, self.window, self.negatives, self.duplicates)
            self._written = self._ops.written
            self._block, self._extra = 0, None

    @property
    def fused(self):
        """Whether the step runs as fedavg_kernels' fused kernel."""
        return self._ops is None

    @property
    def takes_numpy(self):
        """The kernel's steps take NumPy batches; the torch ops, tensors."""
        return self._ops is None

    @property
    def takes_cut_windows(self):
        """Both steps take windows with empty context slots (-1): the
        context mean is over the words there are."""
        return True

    @property
    def checks_ids(self):
        """The fused kernel checks every word id before it writes, so
        engine.py need not (an id out of range: ValueError "windows: ...")."""
        return self.fused

    def _fused(self, kernel, ids, *args):
        try:
            return kernel(self._table, np.ascontiguousarray(ids), *args)
        except IndexError as e:  # the same error as engine.py's check
            raise ValueError(f"windows: {e}") from None

    def plan_steps(self, steps):
        """The run's length in this learner's steps, as the Dispatcher
        measured it: the linear schedule decays over it, unless
        model_args gave decay_steps."""
        if self._planned:
            self.decay_steps = max(1, int(steps))

    def at_step(self, steps):
        """The host's steps per learner so far (where a host's learners
        share its batches unevenly): the schedule goes on from there."""
        self.step = int(steps)

    def current_lr(self):
        if self.decay_steps is None:
            return self.lr
        return max(self.min_lr, self.lr * (1.0 - self.step / self.decay_steps))

    def _draw(self, rng, count):
        """``count`` noise words (int64 NumPy) from ``rng``."""
        return self.sampler.draw(rng, count)

    def _noise(self, count):
        """The next ``count`` noise words of the training stream."""
        return self.sampler.next(count)

    def train_step(self, ids):
        """One step on a batch: NumPy on the kernel's path, a tensor on the
        torch ops'."""
        n, k = ids.shape[0], self.negatives
        lr = self.current_lr()
        noise = self._noise(n * k)
        if self._ops is None:
            loss = self._fused(fedavg_kernels.neg_cbow_step, ids, noise,
                               self.window, lr, self.duplicates,
                               self._written.flags(), self._extra,
                               self._block) / n
        else:
            ws = self._ops.forward(ids, noise)
            loss = self._ops.loss_sum(ws) / n
        self._check_finite(loss, lr)
        self.step += 1
        if self._ops is not None:
            self._ops.update(ws, lr)
        return loss

    def _check_finite(self, loss, lr):
        if not math.isfinite(loss):
            raise ValueError(f"neg: training loss is not finite ({loss}) at "
                             f"step {self.step}: the weights diverged; use "
                             f"a smaller lr (now {lr:g})")

    def test_loss(self, ids):
        """Mean negative-sampling loss with a fixed, seeded set of noise
        words: the same windows give the same noise words on every call."""
        rng = self.sampler.test_stream()
        total, n = 0.0, ids.shape[0]
        for first in range(0, n, _EVAL_CHUNK):
            chunk = ids[first:first + _EVAL_CHUNK]
            noise = self._draw(rng, chunk.shape[0] * self.negatives)
            if self._ops is None:
                total += self._fused(fedavg_kernels.neg_cbow_loss, chunk,
                                     noise, self.window)
            else:
                total += self._ops.loss_sum(self._ops.forward(chunk, noise))
        return total / n

    def state(self):
        return {"step": self.step, **self.sampler.state()}

    def load_state(self, state):
        self.step = state_codec.steps(state)
        self.sampler.load_state(state)

    def embeddings(self):
        return self.embedding.copy() if self._ops is None \
            else self._ops.embeddings()

    def written_rows(self):
        """The rows of embedding and of out_vectors that steps wrote since
        the last call, ascending; None on the first call, which starts the
        count."""
        rows = self._written.take()
        if rows is None:
            return [None, None]
        split = int((rows < self.vocab_size).sum())
        return [rows[:split], rows[split:] - self.vocab_size]
