"""The contract between the C++ program and the models of library.py.

src/bridge/ calls the public functions below (types, shapes, lifetime
rules: docs/python_interface.md).  They check what crosses the boundary,
build the model named by cfg["model"] (the built-in "neg", or a model of
library.MODELS) over the flat weight buffer that C++ owns, and run it: a
model written with autograd (modeling.Model) through
runtime.trainer.Trainer, a fused one (runtime/fused_neg.py) directly.  The
model contract, the kinds of model and their optional methods, is
runtime/contract.py.  Nothing crosses as a torch object.  Importing this
module does no work, and imports no torch: library.py and torch are
imported only for a model that needs them, so a CPU run of "neg" never
pays for them.

    param_shapes(cfg) -> [(name, shape), ...]   layout of the flat weights
    create(cfg, weights, init) -> model         build model + optimizer
    train_step(model, windows) -> float         one optimizer step, mean loss
    test_loss(model, windows) -> float          mean test loss, no update
    embeddings(model) -> float32 [vocab_size, dim]
    get_state(model) -> bytes                   optimizer, RNG, step count
    set_state(model, state: bytes)
    current_lr(model) -> float                  rate of the next step
    plan_steps(model, steps)                    the run's length, in steps
    at_step(model, steps)                       the host's steps so far
    written_rows(model) -> [rows or None, ...]  rows steps wrote, per param
    load_weights(model)                         the model takes the buffer
    store_weights(model)                        the model writes the buffer
    device(model) -> str                        where it trains: "cpu", ...
    model_origin(cfg, bundled) -> (str, str)    model, class, file; warning

On a CPU the model's parameters are views of the buffer and load_weights
and store_weights do nothing.  On a GPU (cfg "device") the model trains a copy on the device:
C++ calls load_weights after it changed the buffer and before the model
uses it, and store_weights before it reads the buffer.
"""

import contextlib
import glob
import importlib.util
import math
import numbers
import os
import re
import sys
import warnings
from typing import cast

import numpy as np

from runtime import memory, model_source, state_codec
from runtime.contract import (ChecksArgs, FollowsRunSteps, FusedModelClass, HasOptimizer, ModelClass, PlansSteps,
                              ReportsLr, ReportsWrittenRows, Runnable, Stateful, StepsOnNumpy)
from runtime.fused_neg import FusedNegCBOW
from runtime.placement import InPlace, Placement


class ConfigError(ValueError):
    """A cfg value the model refuses.  ``key`` names the cfg.json key, so
    that C++ can name the file and line that set it; ``message`` says what
    is wrong."""

    def __init__(self, key, message):
        super().__init__(f"cfg: {message}")
        self.key = key
        self.message = message


_DEFAULTS = {"dim": 100, "window": 2, "seed": 1, "model": "neg",
             "torch_threads": 1, "bs": 1024, "device": "auto"}

# The weights copy even on a CPU (tests of the GPU path on machines
# without one set this).
_COPY_ON_CPU = False

# Models that are part of the runtime, not of library.py: cfg "model" names
# one of these or a key of library.MODELS.  "neg", the default, is the
# fused step (runtime/fused_neg.py); selecting it imports no library.py.
BUILT_IN: dict[str, ModelClass] = {"neg": FusedNegCBOW}


def available_models() -> dict[str, ModelClass]:
    """{name: class} of every model cfg "model" may select: library.MODELS
    and the built-in ones, which take precedence.  Imports library.py (and
    with it torch)."""
    import library
    return {**library.MODELS, **BUILT_IN}


def param_shapes(cfg: dict) -> list:
    """Names and shapes of all parameters, in flat-buffer order.  Refuses
    (ConfigError) a model whose weights, or whose noise words of one batch
    or test-loss chunk, would need more than the machine's memory."""
    opts = _options(cfg)
    cls = _model_class(opts)
    if _is_autograd(cls):
        from runtime.trainer import declarations
        model = _instance(cls, opts)
        decl = declarations(model, opts["vocab_size"])
        shapes = [(name, d.shape) for name, d in decl.items()]
        negatives = getattr(model, "negatives", 0)
    else:
        shapes = [(name, tuple(shape)) for name, shape in _fused(cls).param_shapes(opts)]
        negatives = cls.check_args(opts).get("negatives", 0) if isinstance(cls, ChecksArgs) else 0
    _check_memory(opts, shapes, negatives)
    return shapes


def _check_memory(opts, shapes, negatives):
    """ConfigError naming dim or model_args.negatives where the weights
    (float32), or the noise words (int64) of a batch or of a test-loss chunk
    (memory.EVAL_WINDOWS windows at most), alone need more than the
    machine's memory."""
    params = sum(math.prod(shape) for _, shape in shapes)
    why = memory.too_big(4 * params)
    if why:
        raise ConfigError("dim", f"dim {opts['dim']} with {opts['vocab_size']} vocabulary words: the model's "
                                 f"{params} float32 weights need {why}; lower dim or the vocabulary")
    words = int(negatives) if isinstance(negatives, numbers.Integral) and not isinstance(negatives, bool) else 0
    if words > 0:
        rows = max(opts["bs"], memory.EVAL_WINDOWS)
        why = memory.too_big(8 * rows * words)
        if why:
            raise ConfigError("model_args", f"model_args.negatives {negatives}: the noise words of {rows} windows "
                                            f"(a batch of bs {opts['bs']}, or a test-loss chunk of up to "
                                            f"{memory.EVAL_WINDOWS}) need {why}; lower model_args.negatives")


def create(cfg: dict, weights: np.ndarray, init: bool) -> Runnable:
    """Build the model over ``weights`` and its optimizer.

    ``weights`` must be float32, 1-D, C-contiguous, writable and hold exactly
    the elements of param_shapes(cfg).  It must outlive the returned object.
    If ``init``, fill it in place from cfg["seed"] (same seed, same bits, on
    any device: the weights are drawn on the CPU).
    """
    opts = _options(cfg)
    cls = _model_class(opts)
    device = _device(opts)
    if _is_autograd(cls):
        import torch
        from runtime.trainer import Trainer, declarations
        torch.set_num_threads(opts["torch_threads"])
        model = _instance(cls, opts)
        decl = declarations(model, opts["vocab_size"])
        _check_weights(weights, sum(d.size for d in decl.values()))
        return Trainer(model, decl, opts,
                       Placement(weights, device, _COPY_ON_CPU), init)

    cls = _fused(cls)
    shapes = cls.param_shapes(opts)
    _check_weights(weights, sum(math.prod(s) for _, s in shapes))
    rng = np.random.default_rng(opts["seed"])
    on_numpy = isinstance(cls, StepsOnNumpy) and cls.numpy_on_cpu()
    if device == "cpu" and not _COPY_ON_CPU and on_numpy:
        placement: Placement | InPlace = InPlace(weights)
        if init:
            cls.init_(opts, placement.views(shapes), rng)
        params = placement.views(shapes)
    else:
        import torch
        torch.set_num_threads(opts["torch_threads"])
        placement = Placement(weights, device, _COPY_ON_CPU)
        if init:    # NumPy views of the buffer, before it is placed
            arrays = {name: t.numpy()
                      for name, t in placement.host_views(shapes).items()}
            cls.init_(opts, arrays, rng)
        params = {name: torch.nn.Parameter(t)
                  for name, t in placement.views(shapes).items()}
    model = cls(opts, params)
    model.placement = placement     # what load_weights and store_weights move
    return model


def train_step(model: Runnable, windows: np.ndarray) -> float:
    """One optimizer step on a batch; returns the batch's mean loss.

    ``windows`` is a view of a C++ buffer, valid only during this call.
    """
    return float(model.train_step(_windows(model, windows)))


def test_loss(model: Runnable, windows: np.ndarray) -> float:
    """Mean test loss (nats) of ``windows`` in the model's own loss; no
    update."""
    with _no_grad(model):
        return float(model.test_loss(_windows(model, windows)))


def get_state(model: Runnable) -> bytes:
    """The model's state besides its weights (optimizer state, step
    counter, RNG), as bytes for checkpoints; empty for a model that keeps
    none.  Plain arrays and JSON (state_codec): a checkpoint holds data,
    never code."""
    if not isinstance(model, Stateful):
        return b""
    return state_codec.encode(model.state())


def set_state(model: Runnable, state: bytes) -> None:
    """Restores a state returned by get_state (on --resume).  Bytes in any
    other format (a pickle), or a state that does not fit the model (a
    field missing, or out of its range), raise
    state_codec.StateFormatError naming the field, and nothing in them
    runs."""
    if state and isinstance(model, Stateful):
        decoded = state_codec.decode(state)
        try:
            model.load_state(decoded)
        except state_codec.StateFormatError:
            raise
        except KeyError as e:
            raise state_codec.StateFormatError(f"it holds no field {e}") from None
        except (TypeError, ValueError, IndexError) as e:
            raise state_codec.StateFormatError(str(e)) from None


def plan_steps(model: Runnable, steps) -> None:
    """This learner's steps over the whole run, once the Dispatcher knows
    them (max_epochs passes; bpe * max_rounds): passed to the model's
    plan_steps(steps) if it has one (the fused neg's linear
    schedule)."""
    if isinstance(model, PlansSteps):
        model.plan_steps(int(steps))


def at_step(model: Runnable, steps) -> None:
    """The host's steps per learner so far, before each batch where the
    learners of a host share its batches unevenly (overlap): passed to the
    model's at_step(steps) if it has one, so that its schedule follows the
    host, not this learner's own count (the fused neg's linear schedule)."""
    if isinstance(model, FollowsRunSteps):
        model.at_step(int(steps))


def current_lr(model: Runnable) -> float:
    """The learning rate of the model's next step, for the progress line:
    the model's current_lr() if it has one (the fused neg's
    schedule; an autograd model's lr, per window for NegCBOW, not its
    optimizer's per-batch rate), else its optimizer's first parameter
    group's rate; nan when there is neither."""
    if isinstance(model, ReportsLr):
        return float(model.current_lr())
    if isinstance(model, HasOptimizer) and model.optimizer.param_groups:
        return float(model.optimizer.param_groups[0]["lr"])
    return float("nan")


def written_rows(model: Runnable) -> list | None:
    """Per parameter, in param_shapes order: the rows (ids along its first
    dimension, ascending int32) the steps wrote since the last call, or
    None where the model does not say, so any row may have changed (a Dense
    parameter, a model without written_rows, and every parameter on the
    first call, which starts the count: a run that never asks pays nothing).
    The sparse exchange reads only these rows for changes.  Forgets them."""
    if not isinstance(model, ReportsWrittenRows):
        return None
    return [None if rows is None
            else np.ascontiguousarray(rows if isinstance(rows, np.ndarray)
                                      else rows.cpu().numpy(), dtype=np.int32)
            for rows in model.written_rows()]


def load_weights(model: Runnable) -> None:
    """The model takes the weights in the buffer (C++ changed them).  A
    copy to the device; nothing on a CPU."""
    model.placement.load()


def store_weights(model: Runnable) -> None:
    """The model writes its weights into the buffer (C++ reads them next).
    A copy from the device; nothing on a CPU."""
    model.placement.store()


def device(model: Runnable) -> str:
    """Where the model trains, as torch names it: "cpu", "cuda:0", ...;
    followed by " (fused step)" when its step runs as one of
    fedavg_kernels' fused kernels (``model.fused``)."""
    return model.placement.where + (" (fused step)" if model.fused else "")


def model_origin(cfg: dict, bundled_dir: str) -> tuple:
    """(what, warning): what the run trains, "neg_autograd (NegCBOW in
    /path/library.py)", for the start-up line; and a warning, or "", when
    this library.py edits model classes of the bundled python/ folder's
    (``bundled_dir``) but not the one cfg["model"] selects."""
    name = str(cfg.get("model") or _DEFAULTS["model"])
    mine = os.path.abspath(_library_file())
    bundled = os.path.join(bundled_dir, "library.py")
    if name in BUILT_IN and not model_source.differs(mine, bundled):
        return model_source.describe(BUILT_IN, name), ""   # nothing to import
    models = available_models()
    warning = model_source.edit_warning(models, name, mine, bundled)
    import library
    shadowed = library.MODELS.get(name)
    if name in BUILT_IN and shadowed is not None and shadowed is not BUILT_IN[name]:
        warning = (f"{mine} maps MODELS[{name!r}] to {getattr(shadowed, '__qualname__', shadowed)}, which this run "
                   f"does not train: {name!r} is the built-in model; give yours a name of its own and select it "
                   f"with --model NAME")
    return model_source.describe(models, name), warning


def embeddings(model: Runnable) -> np.ndarray:
    """Copy of the input embedding matrix (the parameter "embedding"),
    float32 [vocab_size, dim]."""
    with _no_grad(model):
        return np.ascontiguousarray(model.embeddings(), dtype=np.float32)


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------

def _library_file():
    """The path of the library.py that ``import library`` gives, without
    running it where it is not imported yet."""
    module = sys.modules.get("library")
    if module is not None:
        return module.__file__
    spec = importlib.util.find_spec("library")
    return spec.origin if spec is not None and spec.origin else "library.py"


def _no_grad(model):
    """torch.no_grad() for a model on torch; nothing for one on NumPy."""
    if getattr(model, "takes_numpy", False):
        return contextlib.nullcontext()
    import torch
    return torch.no_grad()


def _may_have_gpu():
    """Whether the machine has a GPU driver that torch could use (NVIDIA's
    or AMD's device files): without one, "auto" is the CPU, and torch need
    not be imported to tell."""
    return bool(glob.glob("/dev/nvidia[0-9]*") or glob.glob("/proc/driver/nvidia/gpus/*")
                or os.path.exists("/dev/kfd"))


def _device(opts):
    """The torch device cfg["device"] names, as a name: "cpu", "cuda",
    "cuda:N", or "auto" (the default): a GPU where torch sees one, the
    rank's cfg["local_rank"] picking among several, else the CPU.
    ValueError for a name that is not one of these or a GPU that torch
    does not see."""
    name = opts["device"]
    if not isinstance(name, str) or \
            not re.fullmatch(r"auto|cpu|cuda(:[0-9]+)?", name):
        raise ConfigError("device", f"device must be 'auto', 'cpu', 'cuda' "
                                    f"or 'cuda:N', got {name!r}")
    if name == "cpu" or (name == "auto" and not _may_have_gpu()):
        return "cpu"
    import torch
    if name == "auto" and not torch.cuda.is_available():
        return "cpu"
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if name == "auto":
        return str(torch.device("cuda", int(opts.get("local_rank", 0)) % count))
    device = torch.device(name)
    if count == 0:
        raise ConfigError("device", f"device {name!r}: torch sees no GPU "
                                    f"(torch.cuda.is_available() is False); "
                                    f"use 'auto' or 'cpu'")
    if device.index is not None and device.index >= count:
        raise ConfigError("device",
                          f"device {name!r}: torch sees {count} GPU(s)")
    return str(device)


def _is_autograd(cls: ModelClass) -> bool:
    """A model written with autograd (contract.AutogradModel: a subclass of
    modeling.Model), as opposed to a fused one (contract.FusedModelClass).
    Such a class exists only once modeling.py is imported."""
    modeling = sys.modules.get("modeling")
    return modeling is not None and isinstance(cls, type) and issubclass(cls, modeling.Model)


def _fused(cls: ModelClass) -> FusedModelClass:
    """``cls``, a model class that is not a modeling.Model, as the fused
    model class it must then be; ModelError if it is not one."""
    if not isinstance(cls, FusedModelClass):
        from runtime.trainer import ModelError
        raise ModelError(f"{getattr(cls, '__name__', repr(cls))} is "
                         f"neither a modeling.Model nor a fused model class "
                         f"(lr, param_shapes, init_: runtime/contract.py)")
    return cls


def _options(cfg):
    """cfg with defaults filled in and types checked (ValueError if bad)."""
    if "vocab_size" not in cfg:
        raise ValueError("cfg: missing key 'vocab_size'")
    opts = {**_DEFAULTS, **{k: v for k, v in cfg.items() if v is not None}}
    if "lr" not in opts:
        opts["lr"] = _model_class(opts).lr
    for key in ("vocab_size", "dim", "window", "torch_threads", "seed", "bs"):
        value = opts[key]
        low = 0 if key == "seed" else 1
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) \
                or int(value) < low:
            raise ConfigError(key, f"{key} must be an integer >= {low}, "
                                   f"got {value!r}")
        opts[key] = int(value)
    lr = opts["lr"]
    if isinstance(lr, bool) or not isinstance(lr, numbers.Real) \
            or not cast(float, lr) > 0:  # numbers.Real declares no comparisons to mypy
        raise ConfigError("lr", f"lr must be a number > 0, got {lr!r}")
    opts["lr"] = float(lr)
    _device(opts)
    if not isinstance(opts.get("model_args", {}), dict):
        raise ConfigError("model_args", f"model_args must be a dict (JSON "
                                        f"object), got {opts['model_args']!r}")
    return opts


def _model_class(opts):
    name = opts["model"]
    cls: ModelClass | None = BUILT_IN.get(name) if isinstance(name, str) else None
    if cls is None:
        models = available_models()
        try:
            cls = models[name]
        except (KeyError, TypeError):
            raise ConfigError("model", f"unknown model {name!r}; valid "
                                       f"models: "
                                       f"{', '.join(sorted(models))}") \
                from None
    if _is_autograd(cls):
        _model_args(cls, opts)
    elif isinstance(cls, ChecksArgs):
        try:
            cls.check_args(opts)    # bad model_args fail at param_shapes
        except ValueError as e:
            message = str(e)
            raise ConfigError("model_args", message[5:] if
                              message.startswith("cfg: ") else message) \
                from None
    return cls


def _settings(cls):
    """The class attributes model_args may set: public, not methods, not
    lr (cfg.json has its own key for it)."""
    return {k: getattr(cls, k) for k in dir(cls)
            if not k.startswith("_") and k not in ("lr", "cfg")
            and not callable(getattr(cls, k))}


def _model_args(cls, opts):
    """cfg model_args checked against the model's settings: {key: value}."""
    given = {k: v for k, v in (opts.get("model_args") or {}).items()
             if v is not None}
    settings = _settings(cls)
    for key, value in given.items():
        if key not in settings:
            raise ConfigError("model_args", f"model_args: unknown key "
                                            f"{key!r} for model "
                                            f"{opts['model']!r}; valid keys: "
                                            f"{', '.join(sorted(settings))}")
        default = settings[key]
        if isinstance(default, bool) or isinstance(value, bool):
            ok = isinstance(value, bool) == isinstance(default, bool)
        elif isinstance(default, numbers.Integral):
            ok = isinstance(value, numbers.Integral)
        elif isinstance(default, numbers.Real):
            ok = isinstance(value, numbers.Real)
        else:
            ok = default is None or isinstance(value, type(default))
        if not ok:
            raise ConfigError("model_args", f"model_args.{key} must be like "
                                            f"{default!r} "
                                            f"({type(default).__name__}), "
                                            f"got {value!r}")
    return given


def _instance(cls, opts):
    """The model object: cfg in .cfg, cfg lr and model_args applied."""
    from runtime.trainer import ModelError
    try:
        model = cls(opts)
    except (ConfigError, ModelError):
        raise
    except Exception as e:  # reported, not swallowed
        raise ModelError(f"{cls.__name__}.__init__: {type(e).__name__}: "
                         f"{e}") from e
    model.lr = opts["lr"]
    for key, value in _model_args(cls, opts).items():
        setattr(model, key, value)
    return model


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
    """Check a batch and wrap it as a tensor without copying (a model on
    NumPy takes it as it is)."""
    width = 2 * model.window + 1
    if not isinstance(windows, np.ndarray) or windows.ndim != 2 \
            or windows.shape[1] != width or windows.shape[0] == 0 \
            or windows.dtype not in (np.int32, np.int64):
        raise ValueError(f"windows must be a non-empty int32 array of shape "
                         f"[n, {width}], got "
                         f"{getattr(windows, 'dtype', type(windows))} "
                         f"{getattr(windows, 'shape', '')}")
    # A model whose step checks every id itself (checks_ids: a fused kernel
    # does, in the same pass) is spared two more passes over the batch.
    cut = getattr(model, "takes_cut_windows", False)
    if model.checks_ids:
        low, high = 0, 0
    else:
        low, high = int(windows.min()), int(windows.max())
        if cut and low == -1:  # empty context slots: never the target
            low = min(0, int(windows[:, model.window].min()))
    if low == -1 and not cut:
        raise ValueError("windows: a window cut short (an empty context "
                         "slot, -1): reduced_windows and edge_windows are "
                         "for the neg model; this model's step takes whole "
                         "windows only (set both false)")
    if low < 0 or high >= model.vocab_size:
        bad = low if low < 0 else high
        raise ValueError(f"windows: word id {bad} outside "
                         f"[0, {model.vocab_size})")
    if getattr(model, "takes_numpy", False):
        return windows
    import torch
    if windows.flags.writeable:
        return torch.from_numpy(windows)
    with warnings.catch_warnings():  # read-only is fine: we never write
        warnings.simplefilter("ignore")
        return torch.from_numpy(windows)
