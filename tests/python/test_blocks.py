"""python/blocks.py: the building blocks give the values and gradients of the torch ops they stand for, on their
kernels (row-sparse gradients added by the SGD kernel) as on torch ops; every duplicates mode; the rows written;
other optimizers keep the general path; a bad id raises before anything is written."""

import math

import numpy as np
import pytest
import torch
from torch.nn import init

import blocks
import engine
import library
from modeling import Dense, Model, Table
from runtime import table_rows

kernels = pytest.importorskip("fedavg_kernels", reason="fedavg_kernels is not built (build/src/kernels)")

V, D, K = 40, 8, 3


def windows(n, offset=0):
    rng = np.random.default_rng(offset)
    return rng.integers(0, V, (n, 5)).astype(np.int32)


def counts():
    return [int(c) for c in np.random.default_rng(9).integers(1, 50, V)]


class Blocks(Model):
    """NegCBOW's loss on the blocks, with a Dense layer between them (so grad_h flows into a parameter) and the
    embedding also indexed directly (its rows get gradients from a block and from a gathered copy in one step)."""

    lr = 0.05
    negatives = K
    duplicates = "sqrt"
    opt = "sgd"
    fast = True

    def params(self):
        return {"embedding": Table(V, D, duplicates=self.duplicates, init=lambda t: init.normal_(t, 0, 0.5)),
                "hidden": Dense(D, D, init=lambda t: init.normal_(t, 0, 0.5)),
                "out_vectors": Table(V, D, duplicates=self.duplicates, init=lambda t: init.normal_(t, 0, 0.5))}

    def loss(self, p, context, target, noise):
        if self.fast:
            h = blocks.rows_mean(p.embedding, context)
        else:
            h = p.embedding[context].mean(1)
        h = torch.tanh(h @ p.hidden) + 0.1 * p.embedding[target]
        if self.fast:
            return blocks.negative_sampling(h, p.out_vectors, target, noise)
        return blocks._negative_sampling_ops(h, p.out_vectors, target, noise)

    def optimizer(self, params):
        if self.opt == "adam":
            return torch.optim.Adam(params.values(), lr=self.lr)
        return torch.optim.SGD(params.values(), lr=self.lr)


def make(monkeypatch, cls, **cfg):
    monkeypatch.setitem(library.MODELS, "test", cls)
    cfg = {"vocab_size": V, "dim": D, "window": 2, "seed": 1, "model": "test", "bs": 16, "device": "cpu",
           "counts": counts(), **cfg}
    weights = np.zeros(sum(math.prod(s) for _, s in engine.param_shapes(cfg)), np.float32)
    return engine.create(cfg, weights, True), weights


def train(monkeypatch, cls, steps=4, written=False, kernels=True):
    """(weights, losses, test loss, rows written per parameter) after ``steps`` steps; without ``kernels``, as
    where fedavg_kernels is not built (torch ops, scatter-added SGD steps)."""
    with monkeypatch.context() as m:
        if not kernels:
            m.setattr(table_rows, "fedavg_kernels", None)
        model, weights = make(m, cls)
    assert all((t.kernels is not None) == kernels for t in model.tables.values())
    if written:
        engine.written_rows(model)          # starts the marks
    losses = [engine.train_step(model, windows(16, i)) for i in range(steps)]
    rows = engine.written_rows(model) if written else None
    return weights.copy(), losses, engine.test_loss(model, windows(64, 99)), rows


@pytest.mark.parametrize("duplicates", ["sum", "sqrt", "mean"])
def test_blocks_train_as_the_torch_ops(monkeypatch, duplicates):
    """The same model with the blocks (kernels, row-sparse SGD kernel) and with the torch ops they stand for
    (gathered rows, SGD as torch scatter-adds): the same losses, test loss, weights (tables and the Dense layer) and
    rows written."""
    fast = train(monkeypatch, type("F", (Blocks,), {"duplicates": duplicates}), written=True)
    slow = train(monkeypatch, type("S", (Blocks,), {"duplicates": duplicates, "fast": False}), written=True,
                 kernels=False)
    np.testing.assert_allclose(fast[1], slow[1], rtol=1e-5)
    assert fast[2] == pytest.approx(slow[2], rel=1e-5)
    np.testing.assert_allclose(fast[0], slow[0], rtol=1e-4, atol=1e-6)
    assert [r is None for r in fast[3]] == [False, True, False]
    for a, b in zip(fast[3], slow[3]):
        assert (a is None and b is None) or np.array_equal(a, b)


def test_the_blocks_take_the_kernel_path(monkeypatch):
    """NegCBOW's tables, trained with SGD, never gather rows: the blocks hand their gradients to the tables."""
    def no_gather(self, ids):
        raise AssertionError("gathered")
    monkeypatch.setattr(table_rows.TableRows, "gather", no_gather)
    model, weights = make(monkeypatch, library.NegCBOW)
    before = weights.copy()
    engine.train_step(model, windows(16))
    assert not np.array_equal(weights, before)


def test_without_kernels_the_blocks_are_the_torch_ops(monkeypatch):
    """Where fedavg_kernels is not built (or on a GPU) the blocks run as torch ops and SGD as scatter-adds: the
    same training."""
    fast = train(monkeypatch, Blocks)
    slow = train(monkeypatch, Blocks, kernels=False)
    np.testing.assert_allclose(fast[1], slow[1], rtol=1e-5)
    np.testing.assert_allclose(fast[0], slow[0], rtol=1e-4, atol=1e-6)


def test_other_optimizers_keep_the_general_path(monkeypatch):
    """With Adam the tables gather their rows (per-row state): the blocks run as torch ops, the same training."""
    fast = train(monkeypatch, type("F", (Blocks,), {"opt": "adam"}))
    slow = train(monkeypatch, type("S", (Blocks,), {"opt": "adam", "fast": False}))
    np.testing.assert_allclose(fast[1], slow[1], rtol=1e-5)
    np.testing.assert_allclose(fast[0], slow[0], rtol=1e-4, atol=1e-6)


def test_the_blocks_on_tensors_are_the_torch_ops():
    """Given plain tensors (a Dense parameter), the blocks are the torch ops, autograd and all."""
    torch.manual_seed(0)
    table = torch.randn(V, D, requires_grad=True)
    ids = torch.randint(0, V, (10, 4))
    target, noise = torch.randint(0, V, (10,)), torch.randint(0, V, (10, K))
    noise[0, 1] = target[0]
    h = blocks.rows_mean(table, ids)
    assert torch.equal(h, table[ids].mean(1))
    loss = blocks.negative_sampling(h, table, target, noise)
    loss.backward()
    words = torch.cat([target[:, None], noise], 1)
    scores = (table.detach()[words] * h.detach()[:, None]).sum(-1)
    ref = (torch.nn.functional.softplus(-scores[:, 0])
           + (torch.nn.functional.softplus(scores[:, 1:]) * (noise != target[:, None])).sum(1)).mean()
    assert loss.item() == pytest.approx(ref.item(), rel=1e-6)
    assert table.grad is not None


def test_the_kernels_equal_the_torch_ops():
    """rows_sum, negative_sampling (loss, derivatives by the scores and by h) and sgd_rows against torch."""
    rng = np.random.default_rng(3)
    table = rng.normal(0, 0.5, (V, D)).astype(np.float32)
    ids = rng.integers(0, V, (12, 4))
    out = np.empty((12, D), np.float32)
    kernels.rows_sum(table, ids, 0.25, out)
    np.testing.assert_allclose(out, table[ids].mean(1), rtol=1e-6, atol=1e-7)

    h = torch.from_numpy(out.copy()).requires_grad_()
    u = torch.from_numpy(table.copy()).requires_grad_()
    target, noise = rng.integers(0, V, 12), rng.integers(0, V, (12, K))
    noise[3, 0] = target[3]                      # skipped
    g_t, g_n, grad_h = np.empty(12, np.float32), np.empty((12, K), np.float32), np.empty((12, D), np.float32)
    loss = kernels.negative_sampling(table, out, target, noise, 1 / 12, g_t, g_n, grad_h)
    ref = blocks._negative_sampling_ops(h, u, torch.from_numpy(target), torch.from_numpy(noise))
    ref.backward()
    assert loss / 12 == pytest.approx(ref.item(), rel=1e-5)
    np.testing.assert_allclose(grad_h, h.grad.numpy(), rtol=1e-4, atol=1e-7)
    assert g_n[3, 0] == 0.0
    # The rows' gradient, g times h, added by sgd_rows with step -1: table - u.grad.
    stepped = table.copy()
    kernels.sgd_rows(stepped, [(target, g_t, out, 1.0), (noise, g_n, out, 1.0)], -1.0, "sum", None)
    np.testing.assert_allclose(stepped, table - u.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("duplicates,factor", [("sum", 1.0), ("sqrt", 1 / math.sqrt(2)), ("mean", 0.5)])
def test_sgd_rows_scales_repeated_rows_over_all_gradients(duplicates, factor):
    """A row named in two gradients (or twice in one) counts twice: its summed step is scaled by factor(2)."""
    rng = np.random.default_rng(4)
    vecs = rng.normal(0, 1, (1, D)).astype(np.float32)
    one = np.zeros((V, D), np.float32)
    kernels.sgd_rows(one, [(np.array([[5]]), None, vecs, 1.0)], 0.5, duplicates, None)
    two = np.zeros((V, D), np.float32)
    written = np.zeros(V, bool)
    both = [(np.array([[5]]), None, vecs, 1.0), (np.array([5]), np.array([1.0], np.float32), vecs, 1.0)]
    kernels.sgd_rows(two, both, 0.5, duplicates, written)
    np.testing.assert_allclose(two, 2 * factor * one, rtol=1e-6)
    assert written.nonzero()[0].tolist() == [5]


def test_a_bad_id_raises_before_anything_is_written():
    rng = np.random.default_rng(5)
    table = rng.normal(0, 1, (V, D)).astype(np.float32)
    before = table.copy()
    vecs = np.ones((2, D), np.float32)
    written = np.zeros(V, bool)
    for bad in (V, -1):
        with pytest.raises(IndexError, match=f"word id {bad} outside"):
            kernels.sgd_rows(table, [(np.array([1, 2]), None, vecs, 1.0), (np.array([3, bad]), None, vecs, 1.0)],
                             -0.1, "sqrt", written)
        with pytest.raises(IndexError):
            kernels.rows_sum(table, np.array([[1, bad]]), 0.5, np.empty((1, D), np.float32))
        with pytest.raises(IndexError):
            kernels.negative_sampling(table, vecs, np.array([1, 2]), np.array([[3], [bad]]), 1.0, None, None, None)
    assert np.array_equal(table, before) and not written.any()
    with pytest.raises(ValueError, match="duplicates"):
        kernels.sgd_rows(table, [], -0.1, "max", None)
    with pytest.raises(ValueError, match="vecs"):
        kernels.sgd_rows(table, [(np.array([1]), None, np.ones((1, D + 1), np.float32), 1.0)], -0.1, "sum", None)


def test_neg_autograd_keeps_its_maths(monkeypatch):
    """NegCBOW on the blocks trains as the loss written with torch ops (its recipes' starting point)."""
    fast = train(monkeypatch, library.NegCBOW, steps=6)
    ops = type("Ops", (library.NegCBOW,), {"loss": lambda self, p, context, target, noise: blocks
                                           ._negative_sampling_ops(p.embedding[context].mean(1), p.out_vectors,
                                                                   target, noise)})
    slow = train(monkeypatch, ops, steps=6, kernels=False)
    np.testing.assert_allclose(fast[1], slow[1], rtol=1e-5)
    np.testing.assert_allclose(fast[0], slow[0], rtol=1e-4, atol=1e-6)
