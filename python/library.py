"""The model of fedavg_mpi: the one file users edit to change it.

C++ calls the five public functions below through src/bridge/ (details and
lifetime rules in docs/python_interface.md).  Importing this module does no
work.

    param_shapes(cfg) -> [(name, shape), ...]   layout of the flat weights
    create(cfg, weights, init) -> model         build model + optimizer
    train_step(model, windows) -> float         one optimizer step, mean loss
    test_loss(model, windows) -> float          mean test loss, no update
    embeddings(model) -> float32 [vocab_size, dim]

``cfg`` is a dict: vocab_size (required), dim (32), window (2), lr (the
model's own DEFAULT_LR: 0.1 for "neg", 0.01 for "softmax"), seed (1), model
("neg"), torch_threads (1); counts (word counts, one per vocabulary word, or
None), model_args (dict of model-specific settings).

Models: "neg" (the default: CBOW with negative sampling, word2vec-style SGD;
recommended lr 0.1, bs 1024; also reads bpe, max_rounds and rank, see
_NegSamplingCBOW) and "softmax" (the report's CBOW: full softmax,
Adam).

``windows`` are int32 [n, 2*window+1] vocabulary ids, one window of the
text per row (rows drawn at random by the Batcher unless shuffle_windows is
0); column ``window`` is the target and the others are its context.
``weights`` is a float32 1-D buffer owned by C++; every torch parameter is a
view into it, so optimizer steps write straight into it and C++ writes are
seen at once.

To add a model, write a class like ``_SoftmaxCBOW`` (``param_shapes``,
``init_``, ``train_step``, ``test_loss``, ``embeddings``) and register it in
``_MODELS``; cfg.json then selects it by name.  No rebuild is needed.
"""

import math
import numbers
import pickle
import warnings

import numpy as np
import torch
import torch.nn.functional as F

# lr has no global default: each model class names its own (DEFAULT_LR).
_DEFAULTS = {"dim": 32, "window": 2, "seed": 1, "model": "neg",
             "torch_threads": 1}
_EVAL_CHUNK = 4096  # windows per forward pass in test_loss (bounds memory)
_POOL = 1 << 16     # noise words drawn at a time by the "neg" model


# --------------------------------------------------------------------------
# Public interface (called from C++)
# --------------------------------------------------------------------------

def param_shapes(cfg: dict) -> list:
    """Names and shapes of all parameters, in flat-buffer order."""
    opts = _options(cfg)
    return [(name, tuple(shape))
            for name, shape in _model_class(opts).param_shapes(opts)]


def create(cfg: dict, weights: np.ndarray, init: bool) -> object:
    """Build the model over ``weights`` and its optimizer ("neg": plain SGD,
    "softmax": Adam).

    ``weights`` must be float32, 1-D, C-contiguous, writable and hold exactly
    the elements of param_shapes(cfg).  It must outlive the returned object.
    If ``init``, fill it in place from cfg["seed"] (same seed, same bits).
    """
    opts = _options(cfg)
    cls = _model_class(opts)
    shapes = cls.param_shapes(opts)
    _check_weights(weights, sum(math.prod(s) for _, s in shapes))
    torch.set_num_threads(opts["torch_threads"])

    arrays, offset = {}, 0
    for name, shape in shapes:
        size = math.prod(shape)
        arrays[name] = weights[offset:offset + size].reshape(shape)  # views
        offset += size
    if init:
        cls.init_(opts, arrays, np.random.default_rng(opts["seed"]))
    params = {name: torch.nn.Parameter(torch.from_numpy(a))
              for name, a in arrays.items()}
    return cls(opts, params)


def train_step(model, windows: np.ndarray) -> float:
    """One optimizer step on a batch; returns the batch's mean loss.

    ``windows`` is a view of a C++ buffer, valid only during this call.
    """
    return float(model.train_step(_windows(model, windows)))


def test_loss(model, windows: np.ndarray) -> float:
    """Mean test loss (nats) of ``windows`` in the model's own loss ("neg":
    negative sampling, "softmax": cross-entropy); no update."""
    with torch.no_grad():
        return float(model.test_loss(_windows(model, windows)))


def get_state(model) -> bytes:
    """The model's state besides its weights (optimizer moments, step
    counter, RNG), as opaque bytes for checkpoints.  Optional: C++ skips it
    when a model file does not define it.  Pickled rather than torch.save'd:
    the learner sends it every checkpoint round, and pickle is far
    cheaper."""
    return pickle.dumps(model.state(), protocol=pickle.HIGHEST_PROTOCOL)


def set_state(model, state: bytes) -> None:
    """Restores a state returned by get_state (on --resume)."""
    model.load_state(pickle.loads(state))


def current_lr(model) -> float:
    """The learning rate of the model's next step, for the progress line.
    Optional: without it the line shows none."""
    if hasattr(model, "current_lr"):
        return float(model.current_lr())
    optimizer = getattr(model, "optimizer", None)
    if optimizer is not None:
        return float(optimizer.param_groups[0]["lr"])
    return float("nan")


def embeddings(model) -> np.ndarray:
    """Copy of the input embedding matrix, float32 [vocab_size, dim]."""
    with torch.no_grad():
        return np.ascontiguousarray(model.embeddings(), dtype=np.float32)


# --------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------

class _SoftmaxCBOW:
    """The report's CBOW: mean of the 2*window context embeddings -> dense
    layer -> softmax over the whole vocabulary; cross-entropy; Adam.

    Parameters: embedding [V, D], out_weight [D, V] (stored input-major so
    the gradient matmul writes it contiguously), out_bias [V].
    Its speed is in docs/performance.md; the fused loss below
    (_LinearSoftmaxCE) is what makes it fast.
    """

    DEFAULT_LR = 0.01  # Adam

    @staticmethod
    def param_shapes(opts):
        v, d = opts["vocab_size"], opts["dim"]
        return [("embedding", (v, d)), ("out_weight", (d, v)),
                ("out_bias", (v,))]

    @staticmethod
    def init_(opts, arrays, rng):
        """Keras defaults, as in the report: uniform(+-0.05) embeddings,
        Glorot-uniform dense weights, zero bias."""
        v, d = opts["vocab_size"], opts["dim"]
        glorot = math.sqrt(6.0 / (v + d))
        arrays["embedding"][...] = rng.uniform(-0.05, 0.05, (v, d))
        arrays["out_weight"][...] = rng.uniform(-glorot, glorot, (d, v))
        arrays["out_bias"][...] = 0.0

    def __init__(self, opts, params):
        self.window = opts["window"]
        self.vocab_size = opts["vocab_size"]
        self.embedding = params["embedding"]
        self.out_weight = params["out_weight"]
        self.out_bias = params["out_bias"]
        self.optimizer = torch.optim.Adam(list(params.values()),
                                          lr=opts["lr"])

    def _context_mean(self, ids):
        """Mean context embedding [n, D]: (sum of all - target) / (2w)."""
        e = F.embedding(ids, self.embedding)
        return (e.sum(1) - e[:, self.window]) / (2 * self.window)

    def train_step(self, ids):
        x = self._context_mean(ids)
        target = ids[:, self.window].long()
        loss = _LinearSoftmaxCE.apply(x, self.out_weight, self.out_bias,
                                      target)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def test_loss(self, ids):
        total = 0.0
        # Chunks whose logits stay under 16 MB: bigger temporaries are
        # mapped and unmapped by malloc each time (the Dispatcher's page
        # faults were a tenth of its CPU with 4096-window chunks).
        rows = max(64, min(_EVAL_CHUNK, (1 << 22) // self.out_weight.shape[1]))
        # Cross-entropy summed in place on the logits (log-sum-exp minus
        # the target's logit): F.cross_entropy builds a second [n, V]
        # tensor of log-probabilities and takes much longer.
        for chunk in torch.split(ids, rows):
            logits = torch.addmm(self.out_bias, self._context_mean(chunk),
                                 self.out_weight)
            picked = logits.gather(1, chunk[:, self.window].long()[:, None])
            top = logits.amax(1, keepdim=True)
            log_total = logits.sub_(top).exp_().sum(1).log_()
            total += (top.sum() + log_total.sum() - picked.sum()).item()
        return total / ids.shape[0]

    def state(self):
        return {"optimizer": self.optimizer.state_dict()}

    def load_state(self, state):
        self.optimizer.load_state_dict(state["optimizer"])

    def embeddings(self):
        return self.embedding.detach().numpy().copy()


class _LinearSoftmaxCE(torch.autograd.Function):
    """mean(cross_entropy(x @ weight + bias, target)), fused.

    Same value and gradients as F.linear + F.cross_entropy, but it reuses
    the [n, V] logits buffer for the softmax and its gradient, which halves
    the time of a step for a large vocabulary.
    """

    @staticmethod
    def forward(ctx, x, weight, bias, target):
        logits = torch.addmm(bias, x, weight)          # [n, V]
        picked = logits.gather(1, target[:, None])
        top = logits.amax(1, keepdim=True)
        exp = logits.sub_(top).exp_()                  # in place
        total = exp.sum(1, keepdim=True)
        ctx.save_for_backward(x, weight, target, exp, total)
        return (top + total.log() - picked).mean()

    @staticmethod
    def backward(ctx, grad_out):
        x, weight, target, exp, total = ctx.saved_tensors
        n = x.shape[0]
        grad = exp.mul_(grad_out / n / total)         # softmax * g / n
        grad[torch.arange(n), target] -= grad_out / n
        return grad.mm(weight.t()), x.t().mm(grad), grad.sum(0), None


class _NegSamplingCBOW:
    """CBOW with negative sampling, trained like word2vec (cbow_mean=1).

    Parameters: embedding [V, D] (input vectors, the embeddings we keep),
    out_vectors [V, D] (output vectors, word2vec's syn1neg).  For a window
    with context ids c_1..c_2w, target t and K noise words n_1..n_K:

        h    = (1 / 2w) * sum_j E[c_j]
        loss = -log sigmoid(U[t] . h) - sum_k log sigmoid(-U[n_k] . h)

    Hand-written SGD, as word2vec does it: with g_0 = 1 - sigmoid(U[t].h),
    g_k = -sigmoid(U[n_k].h) (g_k = 0 where n_k == t, word2vec's skip), the
    step adds lr*g_k*h to each U[o_k] and lr*sum_k g_k*U[o_k] to every
    context row E[c_j] (not divided by 2w, as in word2vec).  The rate is
    per window, not per batch (lr is not divided by the batch size).  A
    batch is one step: every window's gradient is computed from the same
    weights and the steps are scattered into the touched rows only
    (index_put_ with accumulate, the fastest scatter-add of torch 1.13 on
    CPU).  A row that occurs c times in the batch has each of its steps
    scaled by 1/sqrt(c) (model_args "duplicates": "sqrt", the default;
    "mean": 1/c; "sum": 1): a batch repeats frequent words, and a batch in
    text order (shuffle_windows 0) its topic words, and summing their many
    stale steps diverges at useful rates.

    Noise: unigram^noise_power (0.75) of cfg["counts"], drawn exactly with
    Walker's alias method from a NumPy generator seeded by (seed, rank);
    counts None means uniform; a count of 0 is never drawn.

    Learning rate: constant by default (a run that stops at its target does
    not know its length), or word2vec's linear decay over decay_steps
    (model_args) or bpe * max_rounds steps of this learner (cfg); a resumed
    run continues from the step count in the learner's checkpointed state.
    For a run of known length linear gives better embeddings
    (docs/python_interface.md).
    Recommended: lr 0.1, bs 1024.  model_args keys: see _ARGS and docs/python_interface.md.

    GPU: not used even if torch.cuda.is_available().  The step is plain
    tensor ops, so a GPU learner would keep ``stacked`` and the workspace
    on the device and copy the weights to and from the C++ buffer once per
    round (untested here: no GPU).
    """

    _ARGS = {"negatives": 5, "noise_power": 0.75, "lr_schedule": "constant",
             "decay_steps": None, "min_lr_ratio": 1e-4, "duplicates": "sqrt"}

    DEFAULT_LR = 0.1  # plain SGD, constant (see docs/python_interface.md)

    @staticmethod
    def param_shapes(opts):
        v, d = opts["vocab_size"], opts["dim"]
        return [("embedding", (v, d)), ("out_vectors", (v, d))]

    @staticmethod
    def init_(opts, arrays, rng):
        """word2vec: embeddings uniform(+-0.5/D), output vectors zero."""
        v, d = opts["vocab_size"], opts["dim"]
        arrays["embedding"][...] = rng.uniform(-0.5 / d, 0.5 / d, (v, d))
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
        args["negatives"] = _int_arg("model_args.negatives",
                                     args["negatives"], 1)
        if args["decay_steps"] is not None:
            args["decay_steps"] = _int_arg("model_args.decay_steps",
                                           args["decay_steps"], 1)
        for key, low in (("noise_power", 0.0), ("min_lr_ratio", 0.0)):
            value = args[key]
            if isinstance(value, bool) or not isinstance(value, numbers.Real) \
                    or not value >= low:
                raise ValueError(f"cfg: model_args.{key} must be a number "
                                 f">= {low}, got {value!r}")
            args[key] = float(value)
        for key, valid in (("lr_schedule", ("linear", "constant")),
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
        # Plain tensors sharing the Parameters' storage (= the C++ buffer):
        # the updates are hand-written, so autograd stays out of the way.
        self.embedding = params["embedding"].detach()
        self.out_vectors = params["out_vectors"].detach()
        # E and U lie back to back in the flat buffer (param_shapes order):
        # one [2V, D] view of both lets a step gather and scatter all its
        # rows in one call each (U's row i is stacked row V + i).
        emb = self.embedding.numpy()
        if self.out_vectors.data_ptr() != \
                self.embedding.data_ptr() + emb.nbytes:
            raise ValueError("neg: embedding and out_vectors must be "
                             "adjacent in the weight buffer")
        self.stacked = torch.from_numpy(np.lib.stride_tricks.as_strided(
            emb, shape=(2 * v, self.dim), strides=emb.strides))
        self.ctx_cols = torch.tensor([j for j in range(2 * w + 1) if j != w])
        self.noise_prob, self.noise_alias = _alias_table(
            _noise_weights(opts.get("counts"), v, args["noise_power"]))
        seed = opts["seed"]
        rank = _int_arg("rank", opts.get("rank", 0), 0)
        self.rng = np.random.default_rng([seed, rank, 1])
        self.test_seed = [seed, 2]
        # Learning rate: "constant" (the default, for runs that stop at a
        # target) or "linear", word2vec's schedule,
        # lr_t = lr * max(min_lr_ratio, 1 - t / decay_steps), t counting
        # this learner's steps, decay_steps defaulting to bpe * max_rounds.
        self.lr = opts["lr"]
        self.min_lr = opts["lr"] * args["min_lr_ratio"]
        bpe = _int_arg("bpe", opts.get("bpe", 1), 1)
        self.decay_steps = None
        if args["lr_schedule"] == "linear":
            self.decay_steps = args["decay_steps"]
            if self.decay_steps is None:
                if "max_rounds" not in opts:
                    raise ValueError("cfg: model_args.lr_schedule 'linear' "
                                     "needs model_args.decay_steps or "
                                     "max_rounds (with bpe)")
                self.decay_steps = bpe * _int_arg("max_rounds",
                                                  opts["max_rounds"], 1)
        self.step = 0  # this learner's steps so far (restored by load_state)
        self._sign = torch.full((self.negatives + 1,), -1.0)
        self._sign[0] = 1.0
        self._pool, self._pool_pos = np.empty(0, np.int64), 0
        self.duplicates = args["duplicates"]
        self._workspaces = {}
        self._row_counts = torch.zeros(2 * v)
        self._one = torch.ones(())

    def current_lr(self):
        if self.decay_steps is None:
            return self.lr
        return max(self.min_lr, self.lr * (1.0 - self.step / self.decay_steps))

    def _draw(self, rng, count):
        """``count`` noise words (int64 NumPy) by the alias method: a
        uniform column c and a uniform float32 coin u; c if u < prob[c],
        else alias[c]."""
        col = rng.integers(0, self.vocab_size, count)
        coin = rng.random(count, dtype=np.float32)
        return np.where(coin < self.noise_prob[col], col,
                        self.noise_alias[col])

    def _noise(self, count):
        """The next ``count`` noise words of the training stream, drawn in
        bulk (_POOL at a time) so the per-call overhead is paid rarely."""
        if self._pool_pos + count > self._pool.shape[0]:
            rest = self._pool[self._pool_pos:]
            fresh = self._draw(self.rng, max(_POOL, count))
            self._pool = np.concatenate((rest, fresh))
            self._pool_pos = 0
        out = self._pool[self._pool_pos:self._pool_pos + count]
        self._pool_pos += count
        return out

    def _workspace(self, n):
        """Buffers for a batch of n windows, reused from step to step: fresh
        multi-100 KB tensors cost page faults on every step, a large share of
        the step time, so every large result goes into one of these."""
        ws = self._workspaces.pop(n, None)
        if ws is None:
            w2, k1, d = 2 * self.window, self.negatives + 1, self.dim
            ws = _Workspace()
            ws.ids = torch.empty((n, w2 + 1), dtype=torch.int64)
            # Rows of the stacked [E; U] matrix this batch touches: the
            # context words, then target and noise words (offset by V).
            ws.rows = torch.empty(n * (w2 + k1), dtype=torch.int64)
            ws.ctx = ws.rows[:n * w2].view(n, w2)
            ws.out = ws.rows[n * w2:].view(n, k1)
            ws.gathered = torch.empty((n * (w2 + k1), d))
            ws.ctx_rows = ws.gathered[:n * w2].view(n, w2, d)
            ws.u_rows = ws.gathered[n * w2:].view(n, k1, d)
            ws.steps = torch.empty((n * (w2 + k1), d))
            ws.e_step = ws.steps[:n * w2].view(n, w2, d)
            ws.u_step = ws.steps[n * w2:].view(n, k1, d)
            ws.scale = torch.empty(n * (w2 + k1))
            ws.e_scale = ws.scale[:n * w2].view(n, w2, 1)
            ws.u_scale = ws.scale[n * w2:].view(n, k1)
            ws.h = torch.empty((n, d))
            ws.grad_h = torch.empty((n, d))
            ws.z = torch.empty((n, k1))
            ws.g = torch.empty((n, k1))
            ws.keep = torch.empty((n, k1))
            ws.neq = torch.empty((n, k1), dtype=torch.bool)
            # NumPy views of the same memory: np.einsum/np.matmul do the two
            # small batched products faster than torch's mul+sum/bmm.
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
        ws.out[:, 1:] = torch.from_numpy(noise.reshape(n, k))
        ws.out.add_(self.vocab_size)
        torch.index_select(self.stacked, 0, ws.rows, out=ws.gathered)
        # h = mean of the context rows (adds: faster than sum over dim 1).
        torch.add(ws.ctx_rows[:, 0], ws.ctx_rows[:, 1], out=ws.h)
        for j in range(2, 2 * self.window):
            ws.h.add_(ws.ctx_rows[:, j])
        ws.h.mul_(1.0 / (2 * self.window))
        np.einsum("nkd,nd->nk", ws.u_rows_np, ws.h_np, out=ws.z_np)
        ws.z[:, 0].neg_()
        torch.ne(ws.out, ws.out[:, :1], out=ws.neq)           # noise != t
        ws.keep.copy_(ws.neq)
        ws.keep[:, 0] = 1.0
        return ws

    def train_step(self, ids):
        n, k = ids.shape[0], self.negatives
        ws = self._forward(ids, self._noise(n * k))
        loss = torch.dot(F.softplus(ws.z).view(-1), ws.keep.view(-1)).item()
        loss /= n
        lr = self.current_lr()
        if not math.isfinite(loss):
            raise ValueError(f"neg: training loss is not finite ({loss}) at "
                             f"step {self.step}: the weights diverged; use "
                             f"a smaller lr (now {lr:g})")
        self.step += 1
        # g = lr * (label - sigmoid(score)), 0 for skipped noise words.
        g = torch.sigmoid(ws.z, out=ws.g)
        g.mul_(ws.keep.mul_(self._sign)).mul_(lr)
        np.matmul(ws.g_np[:, None, :], ws.u_rows_np,
                  out=ws.grad_h_np[:, None, :])
        grad_h = ws.grad_h                                     # [n, D]
        if self.duplicates == "sum":
            ws.e_step.copy_(grad_h.unsqueeze(1).expand_as(ws.e_step))
        else:
            self._row_scales(ws)
            g.mul_(ws.u_scale)
            torch.mul(grad_h.unsqueeze(1), ws.e_scale, out=ws.e_step)
        torch.mul(g.unsqueeze(2), ws.h.unsqueeze(1), out=ws.u_step)
        # One scatter-add of every step into the stacked [E; U] rows.
        self.stacked.index_put_((ws.rows,), ws.steps, accumulate=True)
        return loss

    def _row_scales(self, ws):
        """ws.scale = 1/sqrt(c) ("sqrt") or 1/c ("mean") per touched row,
        c the number of times that row occurs in the batch.  Counting uses
        a [2V] scratch vector, reset after use: O(batch), not O(V)."""
        counts = self._row_counts
        counts.index_put_((ws.rows,), self._one, accumulate=True)
        torch.index_select(counts, 0, ws.rows, out=ws.scale)
        counts.index_fill_(0, ws.rows, 0.0)
        if self.duplicates == "sqrt":
            ws.scale.rsqrt_()
        else:
            ws.scale.reciprocal_()

    def test_loss(self, ids):
        """Mean negative-sampling loss with a fixed, seeded set of noise
        words: the same windows give the same noise words on every call."""
        rng = np.random.default_rng(self.test_seed)
        total = 0.0
        for chunk in torch.split(ids, _EVAL_CHUNK):
            noise = self._draw(rng, chunk.shape[0] * self.negatives)
            ws = self._forward(chunk, noise)
            total += torch.dot(F.softplus(ws.z).view(-1),
                               ws.keep.view(-1)).item()
        return total / ids.shape[0]

    def state(self):
        return {"step": self.step, "rng": self.rng.bit_generator.state,
                "pool": self._pool[self._pool_pos:].copy()}

    def load_state(self, state):
        self.step = state["step"]
        self.rng.bit_generator.state = state["rng"]
        self._pool, self._pool_pos = state["pool"], 0

    def embeddings(self):
        return self.embedding.numpy().copy()


class _Workspace:
    """Attribute bag of preallocated tensors (see _workspace)."""


def _int_arg(name, value, low):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) \
            or value < low:
        raise ValueError(f"cfg: {name} must be an integer >= {low}, "
                         f"got {value!r}")
    return int(value)


def _noise_weights(counts, vocab_size, power):
    """Unnormalised noise weights count**power (float64 [V]); uniform when
    ``counts`` is None."""
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


def _alias_table(weights):
    """Walker/Vose alias table for drawing index i with probability
    weights[i] / sum(weights): returns (prob float32 [V], alias int64 [V]).
    Draw a column c uniformly and a coin u in [0, 1): take c if
    u < prob[c], else alias[c].  Exact up to float32 rounding of prob."""
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


_MODELS = {"softmax": _SoftmaxCBOW, "neg": _NegSamplingCBOW}


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------

def _options(cfg):
    """cfg with defaults filled in and types checked (ValueError if bad)."""
    if "vocab_size" not in cfg:
        raise ValueError("cfg: missing key 'vocab_size'")
    opts = {**_DEFAULTS, **{k: v for k, v in cfg.items() if v is not None}}
    if "lr" not in opts:
        opts["lr"] = _model_class(opts).DEFAULT_LR
    for key in ("vocab_size", "dim", "window", "torch_threads", "seed"):
        value = opts[key]
        low = 0 if key == "seed" else 1
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) \
                or value < low:
            raise ValueError(f"cfg: {key} must be an integer >= {low}, "
                             f"got {value!r}")
        opts[key] = int(value)
    lr = opts["lr"]
    if isinstance(lr, bool) or not isinstance(lr, numbers.Real) \
            or not lr > 0:
        raise ValueError(f"cfg: lr must be a number > 0, got {lr!r}")
    opts["lr"] = float(lr)
    if not isinstance(opts.get("model_args", {}), dict):
        raise ValueError(f"cfg: model_args must be a dict (JSON object), "
                         f"got {opts['model_args']!r}")
    return opts


def _model_class(opts):
    try:
        cls = _MODELS[opts["model"]]
    except (KeyError, TypeError):
        raise ValueError(f"cfg: unknown model {opts['model']!r}; valid "
                         f"models: {', '.join(sorted(_MODELS))}") from None
    if hasattr(cls, "check_args"):
        cls.check_args(opts)        # bad model_args fail at param_shapes
    return cls


def _check_weights(weights, size):
    if not isinstance(weights, np.ndarray):
        raise ValueError(f"weights must be a numpy array, got "
                         f"{type(weights).__name__}")
    problems = []
    if weights.dtype != np.float32:
        problems.append(f"dtype {weights.dtype} (need float32)")
    if weights.ndim != 1:
        problems.append(f"{weights.ndim} dimensions (need 1)")
    elif weights.size != size:
        problems.append(f"{weights.size} elements (need {size})")
    if not weights.flags.c_contiguous:
        problems.append("not C-contiguous")
    if not weights.flags.writeable:
        problems.append("read-only")
    if problems:
        raise ValueError("weights buffer: " + ", ".join(problems))


def _windows(model, windows):
    """Check a batch and wrap it as a tensor without copying."""
    width = 2 * model.window + 1
    if not isinstance(windows, np.ndarray) or windows.ndim != 2 \
            or windows.shape[1] != width or windows.shape[0] == 0 \
            or windows.dtype not in (np.int32, np.int64):
        raise ValueError(f"windows must be a non-empty int32 array of shape "
                         f"[n, {width}], got "
                         f"{getattr(windows, 'dtype', type(windows))} "
                         f"{getattr(windows, 'shape', '')}")
    low, high = int(windows.min()), int(windows.max())
    if low < 0 or high >= model.vocab_size:
        bad = low if low < 0 else high
        raise ValueError(f"windows: word id {bad} outside "
                         f"[0, {model.vocab_size})")
    if windows.flags.writeable:
        return torch.from_numpy(windows)
    with warnings.catch_warnings():  # read-only is fine: we never write
        warnings.simplefilter("ignore")
        return torch.from_numpy(windows)
