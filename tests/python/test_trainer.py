"""How python/runtime/trainer.py runs a model written with autograd: the rows a batch touches are gathered, stepped and
scattered back exactly as torch.optim would step whole tables; per-row optimizer state; declared parameters of
any kind; bad model code is named."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch.nn import init

import engine
import library
from modeling import Dense, Model, Table
from runtime.trainer import ModelError

V, D = 30, 6


def windows(n, offset=0, vocab=V):
    rng = np.random.default_rng(offset)
    return rng.integers(0, vocab, (n, 5)).astype(np.int32)


def make(monkeypatch, cls, init_=True, **cfg):
    monkeypatch.setitem(library.MODELS, "test", cls)
    cfg = {"vocab_size": V, "dim": D, "window": 2, "seed": 1, "model": "test", "bs": 16, "device": "cpu",
           **cfg}
    size = sum(math.prod(s) for _, s in engine.param_shapes(cfg))
    weights = np.zeros(size, np.float32)
    return engine.create(cfg, weights, init_), weights


class TwoTables(Model):
    """Indexes "embedding" twice (context and target) and "out" once, so rows repeat within and across indexings."""

    duplicates = "sum"
    opt = "sgd"

    def params(self):
        return {"embedding": Table(V, D, duplicates=self.duplicates, init=lambda t: init.normal_(t, 0, 0.5)),
                "out": Table(V, D, duplicates=self.duplicates, init=lambda t: init.normal_(t, 0, 0.5)),
                "bias": Dense(D, init=lambda t: init.normal_(t, 0, 0.1))}

    def loss(self, p, context, target, noise):
        h = p.embedding[context].mean(1) + p.bias
        return ((h - p.out[target]) ** 2).sum(1).mean() + 0.1 * (p.embedding[target] ** 2).sum(1).mean()

    def optimizer(self, params):
        if self.opt == "sgd":
            return torch.optim.SGD(params.values(), lr=self.lr)
        if self.opt == "adagrad":  # its state is made with it, not at the first step
            return torch.optim.Adagrad(params.values(), lr=self.lr, initial_accumulator_value=0.1)
        return torch.optim.Adam(params.values(), lr=self.lr, eps=EPS)


# SparseAdam adds eps before the bias correction, Adam after it: a tiny eps makes the two agree to rounding.
EPS = 1e-14


def reference(weights, batches, opt, lr):
    """The same model trained the plain way: nn.Embedding tables with dense gradients and torch.optim.SGD, or
    sparse gradients and torch.optim.SparseAdam (lazy Adam) plus Adam for the dense bias."""
    w = torch.from_numpy(weights.copy())
    emb = torch.nn.Embedding(V, D, sparse=opt != "sgd", _weight=w[:V * D].view(V, D).clone())
    out = torch.nn.Embedding(V, D, sparse=opt != "sgd", _weight=w[V * D:2 * V * D].view(V, D).clone())
    bias = torch.nn.Parameter(w[2 * V * D:].clone())
    if opt == "sgd":
        opts = [torch.optim.SGD([emb.weight, out.weight, bias], lr=lr)]
    elif opt == "adagrad":
        opts = [torch.optim.Adagrad([emb.weight, out.weight], lr=lr, initial_accumulator_value=0.1),
                torch.optim.Adagrad([bias], lr=lr, initial_accumulator_value=0.1)]
    else:
        opts = [torch.optim.SparseAdam([emb.weight, out.weight], lr=lr, eps=EPS),
                torch.optim.Adam([bias], lr=lr, eps=EPS)]
    for b in batches:
        ids = torch.from_numpy(b).long()
        context, target = ids[:, [0, 1, 3, 4]], ids[:, 2]
        h = emb(context).mean(1) + bias
        loss = ((h - out(target)) ** 2).sum(1).mean() + 0.1 * (emb(target) ** 2).sum(1).mean()
        for o in opts:
            o.zero_grad()
        loss.backward()
        for o in opts:
            o.step()
    return torch.cat([emb.weight.detach().view(-1), out.weight.detach().view(-1), bias.detach()]).numpy()


@pytest.mark.parametrize("opt", ["sgd", "adam", "adagrad"])
def test_row_steps_equal_torch_optim_on_whole_tables(monkeypatch, opt):
    """SGD (scatter-added per occurrence), Adam and Adagrad (unique rows, per-row state) give the weights
    torch.optim gives on the whole tables: SGD with dense gradients, SparseAdam and Adagrad with sparse ones (only
    touched rows move)."""
    cls = type("T", (TwoTables,), {"opt": opt})
    model, weights = make(monkeypatch, cls, lr=0.05)
    assert all(t.plain_sgd == (opt == "sgd") for t in model.tables.values())
    start = weights.copy()
    batches = [windows(16, i) for i in range(4)]
    for b in batches:
        engine.train_step(model, b)
    np.testing.assert_allclose(weights, reference(start, batches, opt, 0.05), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("duplicates", ["sum", "sqrt", "mean"])
def test_sgd_scatter_add_equals_stepping_unique_rows(monkeypatch, duplicates):
    """The SGD shortcut (one scatter-add per occurrence) and the general path (unique rows, optimizer.step)
    agree, for each way of scaling repeated rows."""
    cls = type("T", (TwoTables,), {"duplicates": duplicates})
    runs = []
    for fast in (True, False):
        model, weights = make(monkeypatch, cls, lr=0.05)
        for t in model.tables.values():
            t.plain_sgd = fast
        for i in range(3):
            engine.train_step(model, windows(16, i))
        runs.append(weights.copy())
    np.testing.assert_allclose(runs[0], runs[1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("duplicates,factor", [("sum", 1.0), ("sqrt", 1 / math.sqrt(2)), ("mean", 0.5)])
def test_repeated_rows_are_scaled(monkeypatch, duplicates, factor):
    """The same window twice (the mean loss, hence the summed gradient, unchanged): each row's step is the step
    of one window times 1 ("sum"), 1/sqrt(2) ("sqrt") or 1/2 ("mean")."""
    cls = type("T", (TwoTables,), {"duplicates": duplicates})
    steps = {}
    for copies in (1, 2):
        model, weights = make(monkeypatch, cls, lr=0.05)
        before = weights.copy()
        engine.train_step(model, np.repeat([[4, 5, 2, 11, 12]], copies, 0).astype(np.int32))
        steps[copies] = (weights - before)[:2 * V * D]       # the tables; the dense bias is not scaled
    np.testing.assert_allclose(steps[2], factor * steps[1], rtol=1e-5, atol=1e-7)


def test_adam_state_is_per_row_and_round_trips(monkeypatch):
    cls = type("T", (TwoTables,), {"opt": "adam"})
    a, wa = make(monkeypatch, cls, lr=0.05)
    first = windows(16, 0)
    engine.train_step(a, first)
    state = a.tables["embedding"].row_state
    assert set(state) == {"exp_avg", "exp_avg_sq"} and state["exp_avg"].shape == (V, D)
    touched = np.unique(np.concatenate([first[:, [0, 1, 3, 4]].ravel(), first[:, 2]]))
    untouched = np.setdiff1d(np.arange(V), touched)
    assert np.all(state["exp_avg"][touched].abs().sum(1).numpy() > 0)
    assert np.all(state["exp_avg"][untouched].numpy() == 0)
    assert not a.optimizer.state.get(a.tables["embedding"].param)   # only the dense bias's state lives there
    b, wb = make(monkeypatch, cls, init_=False, lr=0.05)
    wb[:] = wa
    engine.set_state(b, engine.get_state(a))
    for i in range(1, 3):
        assert engine.train_step(a, windows(16, i)) == engine.train_step(b, windows(16, i))
    np.testing.assert_array_equal(wa, wb)


def test_any_declared_parameter_is_a_view_of_the_buffer(monkeypatch):
    class Hidden(TwoTables):
        def params(self):
            return {**super().params(), "hidden": Dense(D, D, init=init.eye_)}

        def loss(self, p, context, target, noise):
            h = torch.tanh(p.embedding[context].mean(1) @ p.hidden + p.bias)
            return ((h - p.out[target]) ** 2).sum(1).mean()

    model, weights = make(monkeypatch, Hidden, lr=0.05)
    assert [n for n, _ in engine.param_shapes({"vocab_size": V, "dim": D, "model": "test"})] == \
        ["embedding", "out", "bias", "hidden"]
    hidden = weights[2 * V * D + D:].reshape(D, D)
    np.testing.assert_array_equal(hidden, np.eye(D))
    engine.train_step(model, windows(16))
    assert not np.array_equal(hidden, np.eye(D))            # the optimizer stepped the buffer in place
    hidden[:] = 0.0                                          # C++ writes (a broadcast) are what the model uses
    assert torch.all(model.dense["hidden"] == 0)


def test_dropout_is_seeded_by_seed_and_rank(monkeypatch):
    class Dropout(TwoTables):
        def loss(self, p, context, target, noise):
            h = F.dropout(p.embedding[context].mean(1), 0.5) + p.bias
            return ((h - p.out[target]) ** 2).sum(1).mean()

    runs = []
    for rank in (0, 0, 1):
        model, weights = make(monkeypatch, Dropout, lr=0.05, rank=rank)
        engine.train_step(model, windows(16))
        runs.append(weights.copy())
    assert runs[0].tobytes() == runs[1].tobytes() != runs[2].tobytes()


def test_the_test_loss_turns_dropout_off(monkeypatch):
    """p.training is False in the test loss, and a dropout module the model holds is in eval mode there: the same
    weights give the same test loss on every call, while training still drops."""
    class Dropout(TwoTables):
        def __init__(self, cfg):
            super().__init__(cfg)
            self.drop = torch.nn.Dropout(0.5)

        def loss(self, p, context, target, noise):
            h = self.drop(F.dropout(p.embedding[context].mean(1), 0.5, p.training)) + p.bias
            return ((h - p.out[target]) ** 2).sum(1).mean()

    model, _ = make(monkeypatch, Dropout, lr=0.05)
    test = windows(64, offset=9)
    assert engine.test_loss(model, test) == engine.test_loss(model, test)
    engine.train_step(model, windows(16))
    assert model.model.drop.training  # back in training mode
    assert engine.test_loss(model, test) == engine.test_loss(model, test)


# --------------------------------------------------------------------------- bad model code

def _bad(**methods):
    return type("Bad", (TwoTables,), methods)


BAD = {
    "params not a dict": (_bad(params=lambda self: [1]), "Bad.params must return a non-empty dict"),
    "no embedding": (_bad(params=lambda self: {"emb": Table(V, D, init=init.zeros_)}),
                     "Bad.params must declare 'embedding' with 30 rows"),
    "bad shape": (_bad(params=lambda self: {"embedding": Table(V, 0, init=init.zeros_)}),
                  r"Bad.params: ValueError: shape must be integers >= 1, got \(30, 0\)"),
    "init shape": (_bad(params=lambda self: {"embedding": Table(V, D, init=lambda t: torch.zeros(3, 3))}),
                   r"Bad.params: init of 'embedding' gave shape \(3, 3\), declared \(30, 6\)"),
    "init raises": (_bad(params=lambda self: {"embedding": Table(V, D, init=lambda t: 1 / 0)}),
                    "Bad.params: init of 'embedding': ZeroDivisionError"),
    "optimizer misses one": (_bad(optimizer=lambda self, params: torch.optim.SGD([params["embedding"]], lr=0.1)),
                             "Bad.optimizer: parameter.s. out, bias not given to the optimizer"),
    "not an optimizer": (_bad(optimizer=lambda self, params: None), "Bad.optimizer must return a torch.optim"),
    "optimizer holds more": (_bad(optimizer=lambda self, params: torch.optim.SGD(
        list(params.values()) + [torch.nn.Parameter(torch.zeros(D, 2))], lr=0.1)),
        r"Bad.optimizer: the optimizer holds 1 tensor\(s\) that params\(\) does not declare \(shapes \(6, 2\)\): only "
        r"declared parameters are averaged, checkpointed and evaluated"),
    "weights of its own": (_bad(__init__=lambda self, cfg: (TwoTables.__init__(self, cfg),
                                                            setattr(self, "proj", torch.nn.Linear(D, D)))[0]),
                           r"Bad.proj holds weights of its own \(Linear\): only what params\(\) declares is "
                           r"averaged, checkpointed and evaluated"),
    "__init__ raises": (_bad(__init__=lambda self, cfg: cfg["hidden_size"]),
                        "Bad.__init__: KeyError: 'hidden_size'"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_declarations_name_the_function(monkeypatch, case):
    cls, message = BAD[case]
    with pytest.raises(ModelError, match=message):
        make(monkeypatch, cls)


def _forward_that_raises(h):
    raise RuntimeError("boom in the forward")


LOSSES = {
    "raises": (lambda self, p, c, t, n: _forward_that_raises(p.embedding[c]),
               "Bad.loss: RuntimeError: boom in the forward"),
    "nan": (lambda self, p, c, t, n: p.embedding[c].sum() * float("nan"), "Bad.loss is nan at step 0"),
    "not a scalar": (lambda self, p, c, t, n: p.embedding[c].sum(1).sum(1),
                     r"Bad.loss must return a scalar tensor \(the batch's mean loss\), got a tensor of shape \(16,\)"),
    "a number": (lambda self, p, c, t, n: 1.0, "Bad.loss must return a scalar tensor .* got float"),
    "no parameter": (lambda self, p, c, t, n: torch.ones((), requires_grad=False),
                     "Bad.loss does not depend on any parameter"),
    "table used whole": (lambda self, p, c, t, n: (p.embedding @ torch.ones(D)).sum(),
                         "Bad.loss: TypeError: 'embedding' is a Table: index its rows"),
    "a parameter unused": (lambda self, p, c, t, n: ((p.embedding[c].mean(1) - p.out[t]) ** 2).sum(1).mean(),
                           r"Bad.loss does not use parameter\(s\) bias \(they would never train\)"),
    "table called": (lambda self, p, c, t, n: p.embedding(c).sum(),
                     "Bad.loss: TypeError: 'embedding' is a Table: index its rows"),
    "unknown parameter": (lambda self, p, c, t, n: p.embeding[c].sum(),
                          "Bad.loss: AttributeError: the model has no parameter 'embeding'; declared: embedding, "
                          "out, bias"),
    "word id out of range": (lambda self, p, c, t, n: p.embedding[c + V].sum(), "Bad.loss: IndexError"),
}


@pytest.mark.parametrize("case", sorted(LOSSES))
def test_bad_losses_name_the_function_and_keep_the_cause(monkeypatch, case):
    loss, message = LOSSES[case]
    model, weights = make(monkeypatch, _bad(loss=loss))
    before = weights.copy()
    with pytest.raises(ModelError, match=message) as err:
        engine.train_step(model, windows(16))
    if case == "raises":
        assert isinstance(err.value.__cause__, RuntimeError)   # its traceback is printed with the error
    np.testing.assert_array_equal(weights, before)             # nothing half-applied
