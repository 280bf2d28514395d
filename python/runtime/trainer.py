"""Runs a library.py model (a modeling.Model) over the flat weight buffer:
one optimizer step per batch, the test loss, the state for checkpoints.
Importing this module does no work.

A step touches few rows of each Table, so it never differentiates a whole
table: the rows the batch indexes are gathered into small leaf tensors, the
model's loss runs with autograd on them, the optimizer steps them and they
go back into the buffer (table_rows.py).  The building blocks of blocks.py
read a Table's rows in place instead, and with plain SGD hand it their rows'
gradients (IndexedTable.kernel_rows, TableRows.add_grad).  Dense parameters are ordinary
leaf tensors viewing the buffer.

Errors in the model's code raise ModelError naming the model's function,
with the original exception chained (its traceback is printed).
"""

import math
from typing import cast

import numpy as np
import torch

from modeling import Dense, IndexedTable, Table

from . import state_codec
from .noise import NoiseSampler
from .table_rows import TableRows

# Test-loss chunks: at most this many windows, and few enough that an
# [n, vocab_size] temporary (a full softmax's logits) stays under 16 MB:
# bigger temporaries are mapped and unmapped by malloc on every chunk.
_EVAL_WINDOWS = 4096
_EVAL_FLOATS = 1 << 22


class ModelError(RuntimeError):
    """Bad model code; the message starts with the model function's name."""


def declarations(model, vocab_size):
    """model.params(), checked: {name: Table | Dense} with an "embedding"
    of vocab_size rows.  ModelError naming <Model>.params otherwise."""
    where = f"{type(model).__name__}.params"
    decl = _call(where, model.params)
    if not isinstance(decl, dict) or not decl:
        raise ModelError(f"{where} must return a non-empty dict "
                         f"{{name: Table | Dense}}, got {decl!r}")
    for name, d in decl.items():
        if not isinstance(name, str) or not name.isidentifier() \
                or name.startswith("_"):
            raise ModelError(f"{where}: parameter name {name!r} must be an "
                             f"identifier not starting with '_'")
        if not isinstance(d, (Table, Dense)):
            raise ModelError(f"{where}: {name!r} must be a Table or Dense, "
                             f"got {type(d).__name__}")
    emb = decl.get("embedding")
    if emb is None or len(emb.shape) != 2 or emb.shape[0] != vocab_size:
        raise ModelError(f"{where} must declare 'embedding' with "
                         f"{vocab_size} rows (vocab_size), the matrix that "
                         f"is exported; got "
                         f"{emb.shape if emb else 'none'}")
    return decl


class Trainer:
    """A model of library.py made trainable over the weights of
    ``placement`` (placement.py: the C++ buffer, laid out as ``decl``, or
    its copy on a GPU): the contract.Runnable engine.py runs, with the
    optional state, load_state, current_lr and written_rows."""

    fused = False       # its steps run as torch ops and blocks.py's kernels
    checks_ids = False  # engine.py checks a batch's word ids
    takes_cut_windows = False  # whole windows only

    def __init__(self, model, decl, opts, placement, init):
        self.model = model
        self.name = type(model).__name__
        self.window = opts["window"]
        self.vocab_size = opts["vocab_size"]
        self.step = 0
        self.placement = placement      # engine.load_weights, store_weights
        self.device = placement.device
        layout = [(name, d.shape) for name, d in decl.items()]
        # Drawn into the buffer before it is placed: the same bits anywhere.
        if init:
            self._init(decl, placement.host_views(layout), opts["seed"])
        self.tensors = placement.views(layout)
        # Randomness inside the loss (dropout) differs between learners.
        torch.manual_seed(int(np.random.SeedSequence(
            [opts["seed"], opts.get("rank", 0), 3]).generate_state(1)[0]))

        self.tables, handles = {}, {}
        for name, d in decl.items():
            if isinstance(d, Table):
                self.tables[name] = TableRows(self.tensors[name], d)
                handles[name] = self.tables[name].param
            else:
                handles[name] = torch.nn.Parameter(self.tensors[name])
        self.dense = {n: h for n, h in handles.items() if n not in self.tables}
        self._check_modules(model)
        self.optimizer = _call(f"{self.name}.optimizer", model.optimizer,
                               dict(handles))
        self._check_optimizer(handles)
        self._first_lr = self.optimizer.param_groups[0]["lr"]
        for table in self.tables.values():
            table.adopt_state(self.optimizer)
        self._train_p = _Params(self, training=True)
        self._eval_p = _Params(self, training=False)

        self.negatives = model.negatives
        if not isinstance(self.negatives, int) or self.negatives < 0:
            raise ModelError(f"{self.name}.negatives must be an integer "
                             f">= 0, got {self.negatives!r}")
        self.noise = None
        if self.negatives:
            self.noise = NoiseSampler(opts.get("counts"), self.vocab_size,
                                      float(model.noise_power), opts["seed"],
                                      opts.get("rank", 0))
        w = self.window
        cols = [j for j in range(2 * w + 1) if j != w]
        self._ctx_cols = torch.tensor(cols, device=self.device)
        self._ctx_np = np.array(cols)

    def _init(self, decl, tensors, seed):
        # Seeded apart from torch's global generator: every rank gets the
        # same bits, and the caller's random state is left alone.
        with torch.random.fork_rng(devices=[]), torch.no_grad():
            torch.manual_seed(seed)
            for name, d in decl.items():
                t = tensors[name]
                where = f"{self.name}.params: init of {name!r}"
                out = _call(where, d.init, t)
                if torch.is_tensor(out) and out.data_ptr() != t.data_ptr():
                    if tuple(out.shape) != d.shape:
                        raise ModelError(f"{where} gave shape "
                                         f"{tuple(out.shape)}, declared "
                                         f"{d.shape}")
                    t.copy_(out)
                if not torch.isfinite(t).all():
                    raise ModelError(f"{where} left values that are not "
                                     f"finite")

    def _check_modules(self, model):
        """Weights the model holds outside params() would train on each
        learner alone: never averaged, checkpointed, or seen by the test
        loss.  Parameterless modules (dropout) are kept, switched to eval
        mode for the test loss."""
        self._modules = []
        for attr, value in vars(model).items():
            if isinstance(value, torch.nn.Parameter) or (
                    isinstance(value, torch.nn.Module)
                    and any(True for _ in value.parameters())):
                raise ModelError(
                    f"{self.name}.{attr} holds weights of its own "
                    f"({type(value).__name__}): only what params() declares "
                    f"is averaged, checkpointed and evaluated; declare them "
                    f"there (Dense) and use them in loss")
            if isinstance(value, torch.nn.Module):
                self._modules.append(value)

    def _check_optimizer(self, handles):
        opt = self.optimizer
        where = f"{self.name}.optimizer"
        if not isinstance(opt, torch.optim.Optimizer):
            raise ModelError(f"{where} must return a torch.optim optimizer, "
                             f"got {type(opt).__name__}")
        group_of = {id(p): g for g in opt.param_groups for p in g["params"]}
        missing = [n for n, h in handles.items() if id(h) not in group_of]
        if missing:
            raise ModelError(f"{where}: parameter(s) {', '.join(missing)} "
                             f"not given to the optimizer (they would never "
                             f"train)")
        declared = {id(h) for h in handles.values()}
        extra = [p for g in opt.param_groups for p in g["params"]
                 if id(p) not in declared]
        if extra:
            raise ModelError(f"{where}: the optimizer holds "
                             f"{len(extra)} tensor(s) that params() does "
                             f"not declare (shapes "
                             f"{', '.join(str(tuple(p.shape)) for p in extra)}"
                             f"): only declared parameters are averaged, "
                             f"checkpointed and evaluated")
        for table in self.tables.values():
            group = group_of[id(table.param)]
            table.plain_sgd = type(opt) is torch.optim.SGD \
                and group["momentum"] == 0 and group["weight_decay"] == 0
            table.group = group
        # Plain SGD tables are stepped by the trainer: with no other
        # parameter the optimizer has nothing to do (and its call overhead
        # is a visible share of a step).
        self._optimizer_steps = bool(self.dense) or not all(
            t.plain_sgd for t in self.tables.values())

    # ---------------------------------------------------------------- steps

    def _split(self, ids):
        if self.device.type == "cpu" and ids.device.type == "cpu":
            # NumPy's widening and column pick: a third of torch's time,
            # which is a visible share of a step.
            a = ids.numpy().astype(np.int64)
            return (torch.from_numpy(a.take(self._ctx_np, 1)),
                    torch.from_numpy(a[:, self.window].copy()))
        ids = ids.to(self.device).long()
        return (ids.index_select(1, self._ctx_cols),
                ids[:, self.window].contiguous())

    def _noise_words(self, n, rng=None):
        if not self.negatives:
            return torch.empty((n, 0), dtype=torch.int64, device=self.device)
        k = self.negatives
        noise = cast(NoiseSampler, self.noise)  # negatives: a sampler
        words = noise.next(n * k) if rng is None else noise.draw(rng, n * k)
        return torch.from_numpy(words).view(n, k).to(self.device)

    def _loss(self, p, context, target, noise):
        loss = _call(f"{self.name}.loss", self.model.loss, p, context,
                     target, noise)
        if not torch.is_tensor(loss) or loss.dim() != 0 \
                or not loss.is_floating_point():
            got = (f"a tensor of shape {tuple(loss.shape)}"
                   if torch.is_tensor(loss) else type(loss).__name__)
            raise ModelError(f"{self.name}.loss must return a scalar "
                             f"tensor (the batch's mean loss), got {got}")
        return loss

    def train_step(self, ids):
        n = ids.shape[0]
        context, target = self._split(ids)
        noise = self._noise_words(n)
        if self._optimizer_steps:
            self.optimizer.zero_grad(set_to_none=True)
        for table in self.tables.values():
            table.clear()
        loss = self._loss(self._train_p, context, target, noise)
        value = loss.item()
        if not math.isfinite(value):
            raise ModelError(f"{self.name}.loss is {value} at step "
                             f"{self.step}: the weights diverged (use a "
                             f"smaller lr, now {self.model.lr:g}) or the loss "
                             f"is undefined for these inputs")
        if not loss.requires_grad:
            raise ModelError(f"{self.name}.loss does not depend on any "
                             f"parameter: nothing to train")
        _call(f"{self.name}.loss (backward)", loss.backward)
        if self.step == 0:
            self._check_all_used()
        for table in self.tables.values():
            table.prepare(self.optimizer)
        if self._optimizer_steps:
            _call(f"{self.name}.optimizer (step)", self.optimizer.step)
        for table in self.tables.values():
            table.finish(self.optimizer)
        self.step += 1
        return value

    def _check_all_used(self):
        """After the first backward: a declared parameter the loss does not
        use would be averaged and checkpointed but never train."""
        unused = [n for n, t in self.tables.items() if not t.used()]
        unused += [n for n, h in self.dense.items() if h.grad is None]
        if unused:
            raise ModelError(f"{self.name}.loss does not use parameter(s) "
                             f"{', '.join(unused)} (they would never train): "
                             f"use them, or leave them out of params")

    def test_loss(self, ids):
        rows = max(64, min(_EVAL_WINDOWS, _EVAL_FLOATS // self.vocab_size))
        rng = self.noise.test_stream() if self.noise else None
        total = 0.0
        for m in self._modules:
            m.eval()
        try:
            with torch.no_grad():
                for chunk in torch.split(ids, rows):
                    n = chunk.shape[0]
                    context, target = self._split(chunk)
                    loss = self._loss(self._eval_p, context, target,
                                      self._noise_words(n, rng))
                    total += loss.item() * n
        finally:
            for m in self._modules:
                m.train()
        return total / ids.shape[0]

    def embeddings(self):
        return self.tensors["embedding"].detach().cpu().numpy().copy()

    def current_lr(self):
        """The model's own rate (its lr: per window for NegCBOW, whose
        optimizer steps at lr * bs * ...), times the change of the
        optimizer's first rate since it was built (a schedule's)."""
        lr = self.optimizer.param_groups[0]["lr"]
        if not self._first_lr:
            return float(lr)
        return float(self.model.lr) * float(lr) / float(self._first_lr)

    def written_rows(self):
        """Per parameter: the rows steps wrote since the last call (a
        Table's), or None (a Dense parameter: any of it may have moved)."""
        return [self.tables[name].written.take() if name in self.tables
                else None for name in self.tensors]

    # ---------------------------------------------------------------- state

    def state(self):
        return {"step": self.step,
                "optimizer": self.optimizer.state_dict(),
                "tables": {n: t.state() for n, t in self.tables.items()},
                "noise": self.noise.state() if self.noise else None,
                "torch_rng": torch.get_rng_state()}

    def load_state(self, state):
        self.step = state_codec.steps(state)
        self.optimizer.load_state_dict(state["optimizer"])
        for name, table in self.tables.items():
            table.load_state(state["tables"][name])
        if self.noise:
            self.noise.load_state(state["noise"])
        torch.set_rng_state(state["torch_rng"])


class _Params:
    """The ``p`` a model's loss gets: p.<name> is a Table's row indexer or
    a Dense parameter; p.training is False while the test loss is computed
    (pass it to dropout)."""

    def __init__(self, trainer, training):
        object.__setattr__(self, "training", training)
        self._names = list(trainer.tensors)
        for name, tensor in trainer.tensors.items():
            if name in trainer.tables:
                value = _Indexer(name, trainer.tables[name], tensor, training)
            else:
                value = trainer.dense[name]
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        raise AttributeError(f"the model has no parameter {name!r}; "
                             f"declared: {', '.join(self._names)}")


class _Indexer(IndexedTable):
    """p.<table>: ``p.<table>[ids]`` gives the rows of word ids ``ids``."""

    def __init__(self, name, table, tensor, training):
        self._name, self._table = name, table
        self._tensor, self._training = tensor, training

    def __getitem__(self, ids):
        if not torch.is_tensor(ids) or ids.dtype not in (torch.int64,
                                                         torch.int32):
            raise TypeError(f"index the Table {self._name!r} with a tensor "
                            f"of word ids (p.{self._name}[ids])")
        if not self._training:
            return self._tensor[ids]
        return self._table.gather(ids.long())

    def kernel_rows(self):
        """(rows, training), rows this table's TableRows, where the
        kernels are built and the weights float32 on a CPU, and while
        training (``training`` True: the block hands rows.add_grad its
        gradient) the table is stepped by plain SGD; else (None, False)."""
        rows = self._table
        if rows.kernels is None or (self._training and not rows.plain_sgd):
            return None, False
        return rows, self._training

    def _whole(self, *args, **kwargs):
        raise TypeError(f"{self._name!r} is a Table: index its rows "
                        f"(p.{self._name}[ids]); declare it Dense to use it "
                        f"whole")

    __getattr__ = __call__ = __matmul__ = __rmatmul__ = __mul__ = _whole
    __rmul__ = _whole
    __add__ = __radd__ = __sub__ = __rsub__ = __truediv__ = __neg__ = _whole

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        for a in list(args) + list((kwargs or {}).values()):
            if isinstance(a, _Indexer):
                a._whole()
        raise TypeError(f"{func.__name__}: a Table is not a tensor: index "
                        f"its rows (p.<name>[ids])")


def _call(where, fn, *args):
    """fn(*args); any exception becomes ModelError naming ``where``, with
    the original chained (its traceback is printed)."""
    try:
        return fn(*args)
    except ModelError:
        raise
    except Exception as e:  # reported, not swallowed
        raise ModelError(f"{where}: {type(e).__name__}: {e}") from e
