"""The model of fedavg_mpi: the one file users edit to change it.

C++ calls the five public functions below through src/bridge/ (details and
lifetime rules in docs/python_interface.md).  Importing this module does no
work.

    param_shapes(cfg) -> [(name, shape), ...]   layout of the flat weights
    create(cfg, weights, init) -> model         build model + optimizer
    train_step(model, windows) -> float         one optimizer step, mean loss
    test_loss(model, windows) -> float          mean cross-entropy, no grad
    embeddings(model) -> float32 [vocab_size, dim]

``cfg`` is a dict: vocab_size (required), dim (32), window (2), lr (0.01),
seed (1), model ("softmax"), torch_threads (1); counts (ignored for now).

``windows`` are int32 [n, 2*window+1] vocabulary ids in text order; column
``window`` is the target and the others are its context.  ``weights`` is a
float32 1-D buffer owned by C++; every torch parameter is a view into it, so
optimizer steps write straight into it and C++ writes are seen at once.

To add a model, write a class like ``_SoftmaxCBOW`` (``param_shapes``,
``init_``, ``train_step``, ``test_loss``, ``embeddings``) and register it in
``_MODELS``; cfg.json then selects it by name.  No rebuild is needed.
"""

import math
import numbers
import warnings

import numpy as np
import torch
import torch.nn.functional as F

_DEFAULTS = {"dim": 32, "window": 2, "lr": 0.01, "seed": 1,
             "model": "softmax", "torch_threads": 1}
_EVAL_CHUNK = 4096  # windows per forward pass in test_loss (bounds memory)


# --------------------------------------------------------------------------
# Public interface (called from C++)
# --------------------------------------------------------------------------

def param_shapes(cfg: dict) -> list:
    """Names and shapes of all parameters, in flat-buffer order."""
    opts = _options(cfg)
    return [(name, tuple(shape))
            for name, shape in _model_class(opts).param_shapes(opts)]


def create(cfg: dict, weights: np.ndarray, init: bool) -> object:
    """Build the model over ``weights`` and its Adam optimizer.

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
    """Mean cross-entropy (nats) of the targets of ``windows``; no update."""
    with torch.no_grad():
        return float(model.test_loss(_windows(model, windows)))


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
    Speed on the 2-core dev machine, 1 thread, V=10k, D=32, batch 256:
    about 13 k windows/s (plain autograd with F.cross_entropy: about 7 k).
    """

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
        for chunk in torch.split(ids, _EVAL_CHUNK):
            logits = torch.addmm(self.out_bias, self._context_mean(chunk),
                                 self.out_weight)
            total += F.cross_entropy(logits, chunk[:, self.window].long(),
                                     reduction="sum").item()
        return total / ids.shape[0]

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


_MODELS = {"softmax": _SoftmaxCBOW}


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------

def _options(cfg):
    """cfg with defaults filled in and types checked (ValueError if bad)."""
    if "vocab_size" not in cfg:
        raise ValueError("cfg: missing key 'vocab_size'")
    opts = {**_DEFAULTS, **{k: v for k, v in cfg.items() if v is not None}}
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
    return opts


def _model_class(opts):
    try:
        return _MODELS[opts["model"]]
    except (KeyError, TypeError):
        raise ValueError(f"cfg: unknown model {opts['model']!r}; valid "
                         f"models: {', '.join(sorted(_MODELS))}") from None


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
