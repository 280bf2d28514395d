"""The fused "neg" model, the default: CBOW with negative sampling, trained
with word2vec's SGD written out by hand (no autograd).  On a CPU its step
and its test loss are each one fused C++ kernel of fedavg_kernels
(src/kernels/neg_cbow.cpp) on the weight buffer in place; on a GPU, or
where the module is not built, the same step runs as torch ops.  It is the
fastest model here and the least easy to change; library.py's NegCBOW
("neg_autograd") is the same model in a few lines of autograd, the one to
edit.  It is a contract.FusedModelClass (param_shapes, init_, check_args),
whose instance is the contract.Runnable with every optional method.
Importing this module does no work.
"""

import functools
import math
import numbers
import os
from typing import cast

import numpy as np
import torch
import torch.nn.functional as F

from . import state_codec
from .noise import NoiseSampler, noise_weights
from .placement import Placement
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
    placement: Placement  # set by engine.create: where the weights live

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
        args = self.check_args(opts)
        self.window = w = opts["window"]
        self.vocab_size = v = opts["vocab_size"]
        self.dim = opts["dim"]
        self.negatives = args["negatives"]
        # Plain tensors sharing the Parameters' storage (the C++ buffer, or
        # its copy on the device): the updates are hand-written, so
        # autograd stays out of the way.
        self.embedding = params["embedding"].detach()
        self.out_vectors = params["out_vectors"].detach()
        self.device = dev = self.embedding.device
        self._numpy = dev.type == "cpu"
        # E and U lie back to back in the flat weights (param_shapes order):
        # one [2V, D] view of both lets a step gather and scatter all its
        # rows in one call each (U's row i is stacked row V + i).
        emb = self.embedding
        if self.out_vectors.data_ptr() != \
                emb.data_ptr() + emb.numel() * emb.element_size() \
                or not emb.is_contiguous():
            raise ValueError("neg: embedding and out_vectors must be "
                             "adjacent in the weight buffer")
        self.stacked = emb.as_strided((2 * v, self.dim), emb.stride())
        self.ctx_cols = torch.tensor([j for j in range(2 * w + 1) if j != w],
                                     device=dev)
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
        self._sign = torch.full((self.negatives + 1,), -1.0, device=dev)
        self._sign[0] = 1.0
        self.duplicates = args["duplicates"]
        self._workspaces = {}
        self._row_counts = torch.zeros(2 * v, device=dev)
        self._one = torch.ones((), device=dev)
        self._written = WrittenMarks(2 * v, dev)  # stacked rows steps wrote
        # On a CPU the step and the test loss run as one fused kernel over
        # the batch's rows (fedavg_kernels): the same step as the torch ops
        # below, without their passes over gathered copies of the rows.
        self._kernels = fedavg_kernels \
            if dev.type == "cpu" and emb.dtype == torch.float32 else None
        self._table = self.stacked.numpy() if self._kernels else None
        # share_host: learners that train this table at once split their
        # batches (shared_steps); only the fused step can.
        self._block, self._extra = shared_steps(
            opts, self.negatives, args["noise_power"]) if self._kernels \
            else (0, None)

    @property
    def fused(self):
        """Whether the step runs as fedavg_kernels' fused kernel."""
        return self._kernels is not None

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
            return kernel(self._table, _contiguous(ids), *args)
        except IndexError as e:  # the same error as engine.py's check
            raise ValueError(f"windows: {e}") from None

    def plan_steps(self, steps):
        """The run's length in this learner's steps, as the Dispatcher
        measured it: the linear schedule decays over it, unless
        model_args gave decay_steps."""
        if self._planned:
            self.decay_steps = max(1, int(steps))

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

    def _workspace(self, n):
        """Buffers for a batch of n windows, reused from step to step: fresh
        multi-100 KB tensors cost page faults on every step, a large share of
        the step time, so every large result goes into one of these."""
        ws = self._workspaces.pop(n, None)
        if ws is None:
            w2, k1, d = 2 * self.window, self.negatives + 1, self.dim
            ws = _Workspace()
            empty = functools.partial(torch.empty, device=self.device)
            ws.ids = empty((n, w2 + 1), dtype=torch.int64)
            # Rows of the stacked [E; U] matrix this batch touches: the
            # context words, then target and noise words (offset by V).
            ws.rows = empty(n * (w2 + k1), dtype=torch.int64)
            ws.ctx = ws.rows[:n * w2].view(n, w2)
            ws.out = ws.rows[n * w2:].view(n, k1)
            ws.gathered = empty((n * (w2 + k1), d))
            ws.ctx_rows = ws.gathered[:n * w2].view(n, w2, d)
            ws.u_rows = ws.gathered[n * w2:].view(n, k1, d)
            ws.steps = empty((n * (w2 + k1), d))
            ws.e_step = ws.steps[:n * w2].view(n, w2, d)
            ws.u_step = ws.steps[n * w2:].view(n, k1, d)
            ws.scale = empty(n * (w2 + k1))
            ws.e_scale = ws.scale[:n * w2].view(n, w2, 1)
            ws.u_scale = ws.scale[n * w2:].view(n, k1)
            ws.h = empty((n, d))
            ws.grad_h = empty((n, d))
            ws.z = empty((n, k1))
            ws.g = empty((n, k1))
            ws.keep = empty((n, k1))
            ws.neq = empty((n, k1), dtype=torch.bool)
            if self._numpy:
                # NumPy views of the same memory: on a CPU np.einsum and
                # np.matmul do the two small batched products faster than
                # torch's mul+sum/bmm.
                ws.u_rows_np, ws.h_np = ws.u_rows.numpy(), ws.h.numpy()
                ws.z_np, ws.g_np = ws.z.numpy(), ws.g.numpy()
                ws.grad_h_np = ws.grad_h.numpy()
        self._workspaces[n] = ws               # most recent last
        while len(self._workspaces) > 3:
            self._workspaces.pop(next(iter(self._workspaces)))
        return ws

    def _forward(self, ids, noise):
        """Shared part of a step; fills and returns the workspace with
        rows/ctx/out (out[:, 0] the target, then the noise words, both
        offset by V), gathered rows, h [n, D], z [n, K+1] and keep [n, K+1],
        where z = (-U[t].h, U[n_1].h, ..., U[n_K].h), so the loss of a
        window is sum_k keep_k * softplus(z_k) and its gradient factor is
        sigmoid(z_k) * (+1 for the target, -1 for noise words)."""
        n, k = ids.shape[0], self.negatives
        ws = self._workspace(n)
        ws.ids.copy_(ids)
        torch.index_select(ws.ids, 1, self.ctx_cols, out=ws.ctx)
        ws.out[:, 0] = ws.ids[:, self.window]
        ws.out[:, 1:].copy_(torch.from_numpy(noise.reshape(n, k)))
        ws.out.add_(self.vocab_size)
        # Windows cut short (edge_windows, reduced_windows): a -1 slot is no
        # word; it gathers row 0, which its mask then leaves out.
        ws.mask = (ws.ctx >= 0) if bool((ws.ctx < 0).any()) else None
        if ws.mask is not None:
            ws.ctx.clamp_(min=0)
            if not bool(ws.mask.any(1).all()):
                raise ValueError("windows: a window has no context word")
        torch.index_select(self.stacked, 0, ws.rows, out=ws.gathered)
        if ws.mask is not None:
            ws.ctx_rows.mul_(ws.mask.unsqueeze(2))
        # h = mean of the context rows (adds: faster than sum over dim 1).
        torch.add(ws.ctx_rows[:, 0], ws.ctx_rows[:, 1], out=ws.h)
        for j in range(2, 2 * self.window):
            ws.h.add_(ws.ctx_rows[:, j])
        if ws.mask is None:
            ws.h.mul_(1.0 / (2 * self.window))
        else:
            ws.h.div_(ws.mask.sum(1, keepdim=True))
        if self._numpy:
            np.einsum("nkd,nd->nk", ws.u_rows_np, ws.h_np, out=ws.z_np)
        else:
            torch.bmm(ws.u_rows, ws.h.unsqueeze(2), out=ws.z.unsqueeze(2))
        ws.z[:, 0].neg_()
        torch.ne(ws.out, ws.out[:, :1], out=ws.neq)           # noise != t
        ws.keep.copy_(ws.neq)
        ws.keep[:, 0] = 1.0
        return ws

    def train_step(self, ids):
        n, k = ids.shape[0], self.negatives
        lr = self.current_lr()
        if self._kernels is not None:
            loss = self._fused(self._kernels.neg_cbow_step, ids,
                               self._noise(n * k), self.window, lr,
                               self.duplicates, self._written.flags(),
                               self._extra, self._block) / n
            self._check_finite(loss, lr)
            self.step += 1
            return loss
        ws = self._forward(ids, self._noise(n * k))
        loss = torch.dot(F.softplus(ws.z).view(-1), ws.keep.view(-1)).item()
        loss /= n
        self._check_finite(loss, lr)
        self.step += 1
        # g = lr * (label - sigmoid(score)), 0 for skipped noise words.
        g = torch.sigmoid(ws.z, out=ws.g)
        g.mul_(ws.keep.mul_(self._sign)).mul_(lr)
        if self._numpy:
            np.matmul(ws.g_np[:, None, :], ws.u_rows_np,
                      out=ws.grad_h_np[:, None, :])
        else:
            torch.bmm(g.unsqueeze(1), ws.u_rows, out=ws.grad_h.unsqueeze(1))
        grad_h = ws.grad_h                                     # [n, D]
        if self.duplicates == "sum":
            ws.e_step.copy_(grad_h.unsqueeze(1).expand_as(ws.e_step))
        else:
            self._row_scales(ws)
            g.mul_(ws.u_scale)
            torch.mul(grad_h.unsqueeze(1), ws.e_scale, out=ws.e_step)
        if ws.mask is not None:             # an empty slot's row 0 moves not
            ws.e_step.mul_(ws.mask.unsqueeze(2))
        torch.mul(g.unsqueeze(2), ws.h.unsqueeze(1), out=ws.u_step)
        # One scatter-add of every step into the stacked [E; U] rows.
        self.stacked.index_put_((ws.rows,), ws.steps, accumulate=True)
        self._written.mark(ws.rows if ws.mask is None else
                           ws.rows[torch.cat((ws.mask.view(-1),
                                              ws.keep.new_ones(ws.out.numel(),
                                                               dtype=torch.bool)))])
        return loss

    def _check_finite(self, loss, lr):
        if not math.isfinite(loss):
            raise ValueError(f"neg: training loss is not finite ({loss}) at "
                             f"step {self.step}: the weights diverged; use "
                             f"a smaller lr (now {lr:g})")

    def _row_scales(self, ws):
        """ws.scale = 1/sqrt(c) ("sqrt") or 1/c ("mean") per touched row,
        c the number of times that row occurs in the batch.  Counting uses
        a [2V] scratch vector, reset after use: O(batch), not O(V)."""
        counts = self._row_counts
        if ws.mask is None:
            counts.index_put_((ws.rows,), self._one, accumulate=True)
        else:                               # empty slots count no row
            ones = torch.ones_like(ws.scale)
            ones[:ws.ctx.numel()] = ws.mask.view(-1)
            counts.index_put_((ws.rows,), ones, accumulate=True)
        torch.index_select(counts, 0, ws.rows, out=ws.scale)
        if ws.mask is not None:             # empty slots: a scale of 1, unused
            ws.scale[:ws.ctx.numel()].masked_fill_(~ws.mask.view(-1), 1.0)
        counts.index_fill_(0, ws.rows, 0.0)
        if self.duplicates == "sqrt":
            ws.scale.rsqrt_()
        else:
            ws.scale.reciprocal_()

    def test_loss(self, ids):
        """Mean negative-sampling loss with a fixed, seeded set of noise
        words: the same windows give the same noise words on every call."""
        rng = self.sampler.test_stream()
        total = 0.0
        for chunk in torch.split(ids, _EVAL_CHUNK):
            noise = self._draw(rng, chunk.shape[0] * self.negatives)
            if self._kernels is not None:
                total += self._fused(self._kernels.neg_cbow_loss, chunk,
                                     noise, self.window)
                continue
            ws = self._forward(chunk, noise)
            total += torch.dot(F.softplus(ws.z).view(-1),
                               ws.keep.view(-1)).item()
        return total / ids.shape[0]

    def state(self):
        return {"step": self.step, **self.sampler.state()}

    def load_state(self, state):
        self.step = state_codec.steps(state)
        self.sampler.load_state(state)

    def embeddings(self):
        return self.embedding.cpu().numpy().copy()

    def written_rows(self):
        """The rows of embedding and of out_vectors that steps wrote since
        the last call, ascending; None on the first call, which starts the
        count."""
        rows = self._written.take()
        if rows is None:
            return [None, None]
        split = int(torch.searchsorted(rows, self.vocab_size))
        return [rows[:split], rows[split:] - self.vocab_size]


def _contiguous(ids):
    """A batch of windows (torch tensor) as a C-contiguous NumPy array,
    without a copy where it already is one."""
    return np.ascontiguousarray(ids.numpy())


class _Workspace:
    """Attribute bag of preallocated tensors (see _workspace)."""
