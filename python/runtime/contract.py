"""The model contract: what engine.py calls on a model class of library.MODELS and on the model it builds, stated as
Protocols.  mypy checks the bundled models against them (library.MODELS is declared with them; pyproject.toml's
[tool.mypy]), and engine.py tells the kinds apart and finds the optional methods with these same definitions.
Importing this module does no work.

A model class (engine's built-in "neg", or one of library.MODELS) is one of two kinds:

    AutogradModel     a subclass of modeling.Model: its parameters (params), its loss written with autograd (loss),
                      its optimizer (optimizer), its settings as class attributes.  engine runs it through
                      runtime.trainer.Trainer.  This is the kind to write (docs/models.md).
    FusedModelClass   any other class: it lays out (param_shapes), fills (init_) and steps its parameters itself,
                      its step fused into one kernel where it can: runtime.fused_neg.FusedNegCBOW, the model "neg".

What engine.create builds from either is a Runnable (a Trainer, or the FusedModelClass's instance): the object
that C++ holds, opaque, and passes back to engine's other calls.  Its optional methods are Protocols of their own,
which engine tests with isinstance: Stateful, ReportsLr, HasOptimizer, PlansSteps, FollowsRunSteps,
ReportsWrittenRows.  A
FusedModelClass may step on NumPy (StepsOnNumpy): then a CPU run never imports torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:  # annotations only: importing the contract imports no torch
    import torch

    from modeling import Dense, Table

    from .placement import InPlace, Placement

# cfg as engine hands it to a model: cfg.json's keys with defaults filled in (docs/python_interface.md, engine.py).
Options = dict[str, Any]
# param_shapes: (name, shape) per parameter, in flat-buffer order.
Shapes = list[tuple[str, tuple[int, ...]]]


class AutogradModel(Protocol):
    """A model written with autograd: modeling.Model and its subclasses (library.py's NegCBOW, SoftmaxCBOW).
    engine tells it apart by its base class, modeling.Model."""

    cfg: Options        # the whole cfg, set by modeling.Model.__init__
    lr: float           # cfg.json "lr" overrides it; model_args may set any other public class attribute
    negatives: int      # noise words per window handed to loss (0: none)
    noise_power: float  # noise distribution: word count ** noise_power

    def __init__(self, cfg: Options) -> None:
        """Keeps ``cfg`` in self.cfg (modeling.Model); engine then sets lr and model_args' settings."""

    def params(self) -> dict[str, Table | Dense]:
        """{name: Table | Dense} in flat-buffer order, with "embedding" [vocab_size, *]."""

    def loss(self, p: Any, context: torch.Tensor, target: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
        """The batch's mean loss, a scalar tensor with autograd (p.<name>: a parameter)."""

    def optimizer(self, params: dict[str, torch.Tensor]) -> torch.optim.Optimizer:
        """A torch.optim optimizer over every tensor of ``params`` and nothing else."""


class Runnable(Protocol):
    """What engine.create builds and C++ holds: steps, test loss and embeddings over the weights of
    ``placement``."""

    window: int             # context half-width: a batch is int [n, 2 * window + 1]
    vocab_size: int         # word ids are in [0, vocab_size)
    placement: Placement | InPlace  # where the weights live: the C++ buffer, or its copy on a GPU (set by engine)

    @property
    def fused(self) -> bool:
        """Whether its step runs as one of fedavg_kernels' fused kernels (engine.device says so)."""

    @property
    def checks_ids(self) -> bool:
        """Whether its step checks every word id itself (engine then does not)."""

    @property
    def takes_cut_windows(self) -> bool:
        """Whether its step takes windows with empty context slots (-1: edge_windows, reduced_windows)."""

    def train_step(self, ids: torch.Tensor | np.ndarray) -> float:
        """One optimizer step on a batch of windows (NumPy where the model takes_numpy, else a tensor); the batch's
        mean loss before it."""

    def test_loss(self, ids: torch.Tensor | np.ndarray) -> float:
        """The mean loss of the windows, in nats, without an update; the same on every call."""

    def embeddings(self) -> np.ndarray:
        """A copy of the parameter "embedding", float32 [vocab_size, dim]."""

    # Optional: a property takes_numpy, true where its steps take NumPy batches (a StepsOnNumpy class on a CPU).


@runtime_checkable
class FusedModelClass(Protocol):
    """A model class that is not a modeling.Model: the class itself lays out and fills its parameters, and its
    instance, built over them, is the Runnable.  Optional: a static or class method check_args(opts) that raises
    ValueError for bad model_args (ChecksArgs), called before param_shapes."""

    lr: float   # the default rate, where cfg.json sets no "lr"

    def param_shapes(self, opts: Options) -> Shapes:
        """(name, shape) of each parameter, in flat-buffer order; "embedding" [vocab_size, dim] among them."""

    def init_(self, opts: Options, arrays: dict[str, np.ndarray], rng: np.random.Generator) -> None:
        """Fill the parameters (NumPy views of the buffer, by name) in place, drawing from ``rng`` only."""

    def __call__(self, opts: Options, params: dict[str, torch.nn.Parameter] | dict[str, np.ndarray]) -> Runnable:
        """The model over ``params`` (views of the placed weights, by name: NumPy arrays where the class steps on
        NumPy on a CPU, else tensors): its constructor."""


@runtime_checkable
class StepsOnNumpy(Protocol):
    """Optional on a FusedModelClass: whether, on a CPU, its constructor takes NumPy views of the C++ buffer and its
    instance's steps NumPy batches (its Runnable then says takes_numpy).  engine then imports no torch."""

    def numpy_on_cpu(self) -> bool:
        """Whether it steps on NumPy on a CPU (a kernel that may not be built decides)."""


# cfg.json's "model" names a class of either kind: "neg" (engine's built-in) or a key of library.MODELS.
ModelClass = type[AutogradModel] | FusedModelClass


@runtime_checkable
class ChecksArgs(Protocol):
    """Optional on a FusedModelClass: checks opts["model_args"] (ValueError naming the bad key)."""

    def check_args(self, opts: Options) -> dict[str, Any]:
        """opts["model_args"] with the defaults filled in; ValueError naming a bad key."""


@runtime_checkable
class Stateful(Protocol):
    """Optional on a Runnable: its state besides the weights (step count, optimizer, RNGs), for checkpoints.
    Tensors, NumPy arrays, dicts, lists, tuples, numbers, strings and None only (runtime/state_codec.py)."""

    def state(self) -> dict[str, Any]:
        """The state as it is now."""

    def load_state(self, state: dict[str, Any]) -> None:
        """Continues from a state that state() returned (on --resume)."""


@runtime_checkable
class ReportsLr(Protocol):
    """Optional on a Runnable: the learning rate of its next step, for the progress line."""

    def current_lr(self) -> float:
        """The rate of the next step."""


@runtime_checkable
class HasOptimizer(Protocol):
    """Optional on a Runnable without current_lr: its optimizer, whose first group's rate the progress line
    shows."""

    optimizer: torch.optim.Optimizer


@runtime_checkable
class PlansSteps(Protocol):
    """Optional on a Runnable: told the learner's steps over the whole run (a schedule decays over them)."""

    def plan_steps(self, steps: int) -> None:
        """The learner's steps over the run, sent again when the Dispatcher's plan changes."""


@runtime_checkable
class FollowsRunSteps(Protocol):
    """Optional on a Runnable: told the host's steps per learner so far, where the learners of a host share its
    batches unevenly; a schedule goes on from there rather than from the learner's own count."""

    def at_step(self, steps: int) -> None:
        """The host's steps per learner so far, before a batch."""


@runtime_checkable
class ReportsWrittenRows(Protocol):
    """Optional on a Runnable: per parameter, in param_shapes order, the rows (ids along its first dimension,
    ascending, a tensor or an array) its steps wrote since the last call, or None where any row may have changed; the
    call forgets them.  Without it every parameter is read whole by the sparse exchange."""

    def written_rows(self) -> list[Any]:
        """Per parameter: its rows written since the last call, or None."""
