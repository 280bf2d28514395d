"""The fused "neg" model (python/runtime/fused_neg.py: CBOW with negative sampling), through engine.py."""

import math

import numpy as np
import pytest
import torch

import engine
from runtime import fused_neg

V, D, W = 50, 8, 2
CFG = {"vocab_size": V, "dim": D, "window": W, "lr": 0.05, "seed": 3,
       "model": "neg", "counts": [1000 - 10 * i for i in range(V)]}


def make(cfg=CFG, init=True):
    cfg = {"device": "cpu", **cfg}  # the buffer is the model's own weights
    size = sum(math.prod(s) for _, s in engine.param_shapes(cfg))
    weights = np.zeros(size, dtype=np.float32)
    return engine.create(cfg, weights, init), weights


def cyclic_windows(n, window=W, offset=0, vocab=V):
    starts = (np.arange(n) * 7 + offset) % vocab
    return ((starts[:, None] + np.arange(2 * window + 1)) % vocab) \
        .astype(np.int32)


def test_param_shapes():
    assert engine.param_shapes(CFG) == [("embedding", (V, D)),
                                        ("out_vectors", (V, D))]


def test_init_like_word2vec_and_seeded():
    _, a = make()
    _, b = make()
    _, c = make({**CFG, "seed": 4})
    assert a.tobytes() == b.tobytes()
    assert not np.array_equal(a, c)
    emb, out = a[:V * D], a[V * D:]
    assert np.all(np.abs(emb) <= 0.5 / D) and np.any(emb != 0)
    assert np.all(out == 0)


def test_init_of_a_large_table_draws_what_one_draw_would():
    # 30000 x 300 spans three blocks of the row-wise draw: the same seed still gives the same bits as one draw
    v, d = 30000, 300
    cfg = {**CFG, "vocab_size": v, "dim": d, "counts": None}
    _, w = make(cfg)
    one = np.random.default_rng(CFG["seed"]).uniform(-0.5 / d, 0.5 / d, (v, d))
    assert w[:v * d].tobytes() == one.astype(np.float32).tobytes()
    assert np.all(w[v * d:] == 0)


def test_weights_are_views_of_the_buffer():
    model, weights = make()
    weights[:D] = 7.0
    assert np.all(engine.embeddings(model)[0] == 7.0)
    before = weights.copy()
    engine.train_step(model, cyclic_windows(32))
    assert not np.array_equal(weights, before)
    assert np.array_equal(engine.embeddings(model),
                          weights[:V * D].reshape(V, D))
    # C++ overwriting the buffer (a broadcast) is what the model uses next.
    weights[V * D:] = 0.0
    k = 5
    assert engine.test_loss(model, cyclic_windows(64)) <= \
        (k + 1) * math.log(2) + 1e-6


def test_initial_test_loss_is_k_plus_one_log_two():
    # Output vectors start at zero: every score is 0, each term is log 2
    # (a noise word equal to the target is skipped, hence <=).
    model, _ = make({**CFG, "counts": None})
    loss = engine.test_loss(model, cyclic_windows(500))
    assert 5.5 * math.log(2) < loss <= 6 * math.log(2) + 1e-6


def test_test_loss_is_deterministic_and_falls_with_training():
    model, _ = make({**CFG, "lr": 0.2})
    held_out = cyclic_windows(200, offset=3)
    start = engine.test_loss(model, held_out)
    assert engine.test_loss(model, held_out) == start
    losses = [engine.train_step(model, cyclic_windows(256, offset=i))
              for i in range(60)]
    end = engine.test_loss(model, held_out)
    assert engine.test_loss(model, held_out) == end
    assert losses[-1] < 0.5 * losses[0]
    assert end < 0.5 * start


def test_train_step_deterministic_and_rank_changes_noise():
    runs = []
    for rank in (0, 0, 1):
        model, weights = make({**CFG, "rank": rank})
        for i in range(5):
            engine.train_step(model, cyclic_windows(64, offset=i))
        runs.append(weights.copy())
    assert runs[0].tobytes() == runs[1].tobytes()
    assert runs[0].tobytes() != runs[2].tobytes()


def test_noise_follows_counts_to_the_power_075():
    counts = [0, 100, 1000, 10000, 0, 5]
    model, _ = make({**CFG, "vocab_size": 6, "counts": counts})
    draws = model._draw(np.random.default_rng(0), 200_000)
    freq = np.bincount(draws, minlength=6) / draws.size
    expect = np.array(counts, float) ** 0.75
    expect /= expect.sum()
    assert freq[0] == 0 and freq[4] == 0          # count 0: never drawn
    assert np.allclose(freq, expect, atol=0.005)
    # counts None: uniform.
    model, _ = make({**CFG, "vocab_size": 6, "counts": None})
    freq = np.bincount(model._draw(np.random.default_rng(0), 60_000),
                       minlength=6) / 60_000
    assert np.allclose(freq, 1 / 6, atol=0.01)


def test_one_window_step_matches_word2vec():
    """A batch of one window, fixed noise words: word2vec's update."""
    cfg = {**CFG, "model_args": {"negatives": 3, "duplicates": "sum",
                                 "lr_schedule": "constant"}}
    model, weights = make(cfg)
    rng = np.random.default_rng(0)
    weights[:] = rng.normal(0, 0.3, weights.size)
    E0 = weights[:V * D].reshape(V, D).copy()
    U0 = weights[V * D:].reshape(V, D).copy()
    noise = np.array([7, 2, 9])                    # 2 == the target: skipped
    model._noise = lambda count: noise[:count]
    window = np.array([[4, 5, 2, 11, 12]], np.int32)
    loss = engine.train_step(model, window)

    sig = lambda x: 1 / (1 + np.exp(-x))          # noqa: E731
    h = E0[[4, 5, 11, 12]].mean(0)
    e, u = E0.copy(), U0.copy()
    neu1e = np.zeros(D)
    ref_loss = 0.0
    for word, label in ((2, 1), (7, 0), (2, None), (9, 0)):
        if label is None:
            continue
        f = U0[word] @ h
        ref_loss -= np.log(sig(f) if label else sig(-f))
        g = 0.05 * (label - sig(f))
        neu1e += g * U0[word]
        u[word] += g * h
    for c in (4, 5, 11, 12):
        e[c] += neu1e
    assert loss == pytest.approx(ref_loss, rel=1e-5)
    assert np.allclose(weights[:V * D].reshape(V, D), e, atol=1e-6)
    assert np.allclose(weights[V * D:].reshape(V, D), u, atol=1e-6)


@pytest.mark.parametrize("mode,factor", [("sum", 1.0),
                                         ("sqrt", 1 / math.sqrt(2)),
                                         ("mean", 0.5)])
def test_duplicate_rows_scaled(mode, factor):
    """The same window twice: each row's summed step is scaled by
    1/sqrt(2) ("sqrt"), 1/2 ("mean") or 1 ("sum")."""
    steps = {}
    for batch in (1, 2):
        cfg = {**CFG, "model_args": {"negatives": 2, "duplicates": mode}}
        model, weights = make(cfg)
        weights[:] = np.random.default_rng(0).normal(0, 0.3, weights.size)
        before = weights.copy()
        model._noise = lambda count: np.array([7, 9] * (count // 2))
        engine.train_step(model, np.repeat([[4, 5, 2, 11, 12]], batch, 0)
                          .astype(np.int32))
        steps[batch] = weights - before
    assert np.allclose(steps[2], 2 * factor * steps[1], atol=1e-6)


def test_lr_schedules():
    cfg = {**CFG, "lr": 0.1, "bpe": 10, "max_rounds": 5}
    constant = {**cfg, "model_args": {"lr_schedule": "constant"}}
    model, _ = make(constant)
    for i in range(30):
        engine.train_step(model, cyclic_windows(8, offset=i))
    assert model.step == 30
    assert model.current_lr() == pytest.approx(0.1)
    linear = {**cfg, "model_args": {"lr_schedule": "linear"}}
    model, _ = make(linear)                        # over bpe*max_rounds=50
    assert model.current_lr() == pytest.approx(0.1)
    for i in range(25):
        engine.train_step(model, cyclic_windows(8, offset=i))
    assert model.current_lr() == pytest.approx(0.05)
    model.step = 1000
    assert model.current_lr() == pytest.approx(0.1 * 1e-4)
    model.step = 40
    resumed, _ = make(linear)  # a resumed learner takes its step count from its checkpointed state
    engine.set_state(resumed, engine.get_state(model))
    assert resumed.current_lr() == pytest.approx(0.1 * (1 - 40 / 50))
    model, _ = make({**cfg, "model_args": {"lr_schedule": "linear",
                                           "decay_steps": 100,
                                           "min_lr_ratio": 0.1}})
    model.step = 50
    assert model.current_lr() == pytest.approx(0.05)
    model.step = 99
    assert model.current_lr() == pytest.approx(0.01)
    with pytest.raises(ValueError, match="decay_steps, max_rounds .* or max_epochs"):
        make({**CFG, "model_args": {"lr_schedule": "linear"}})


def test_the_default_schedule_is_linear_where_the_run_has_a_known_length():
    # "auto": linear over max_rounds or max_epochs, or model_args' decay_steps; constant for a run that stops at
    # its target, or that has no limit it can plan from.
    base = {**CFG, "lr": 0.1, "bpe": 10, "sample": 0}
    for limits, schedule in [({"max_rounds": 5}, "linear"),
                             ({"max_rounds": 0, "max_epochs": 2}, "linear"),
                             ({"max_rounds": 5, "target": 2.5}, "constant"),
                             ({"max_rounds": 0, "max_epochs": 0, "max_seconds": 60}, "constant"),
                             ({"target": 2.5, "model_args": {"decay_steps": 100}}, "linear")]:
        model, _ = make({**base, **limits})
        assert model.schedule == schedule, limits
        assert (model.decay_steps is None) == (schedule == "constant"), limits


def test_linear_schedule_over_max_epochs():
    # The one-command path: max_rounds 0, max_epochs 2. Until the Dispatcher knows a pass's windows, the run's
    # length is estimated from the counts (no subsampling here: every word a window) over bs x learners.
    cfg = {**CFG, "lr": 0.1, "bpe": 10, "bs": 8, "learners": 2, "max_rounds": 0, "max_epochs": 2, "sample": 0,
           "model_args": {"lr_schedule": "linear"}}
    model, _ = make(cfg)
    assert model.decay_steps == math.ceil(2 * sum(CFG["counts"]) / (8 * 2))
    engine.plan_steps(model, 40)  # the Dispatcher's measure
    model.step = 20
    assert model.current_lr() == pytest.approx(0.05)
    fixed, _ = make({**cfg, "model_args": {"lr_schedule": "linear", "decay_steps": 100}})
    engine.plan_steps(fixed, 40)  # decay_steps given: kept
    assert fixed.decay_steps == 100


def test_the_schedule_follows_the_runs_steps_where_a_host_shares_its_batches():
    # A host's learners train uneven shares of its batches (overlap): each one's rate follows the run's steps per
    # learner, which the Dispatcher sends before every round, not its own count.
    cfg = {**CFG, "lr": 0.1, "bpe": 10, "bs": 8, "learners": 2, "max_rounds": 0, "max_epochs": 2, "sample": 0,
           "model_args": {"lr_schedule": "linear"}}
    ahead, _ = make(cfg)
    behind, _ = make(cfg)
    engine.plan_steps(ahead, 40)
    engine.plan_steps(behind, 40)
    for i in range(30):  # one learner trained 30 batches while the other, exchanging, trained 10
        engine.train_step(ahead, cyclic_windows(8, offset=i))
    for i in range(10):
        engine.train_step(behind, cyclic_windows(8, offset=i))
    assert engine.current_lr(ahead) < engine.current_lr(behind)
    for model in (ahead, behind):
        engine.at_step(model, 20)  # the run's 40 batches over its 2 learners
        assert engine.current_lr(model) == pytest.approx(0.05)
        engine.train_step(model, cyclic_windows(8))
        assert engine.current_lr(model) == pytest.approx(0.1 * (1 - 21 / 40))


def test_bad_model_args_and_counts_raise():
    with pytest.raises(ValueError, match="unknown key 'negative'"):
        engine.param_shapes({**CFG, "model_args": {"negative": 5}})
    with pytest.raises(ValueError, match="negatives"):
        engine.param_shapes({**CFG, "model_args": {"negatives": 0}})
    with pytest.raises(ValueError, match="lr_schedule"):
        engine.param_shapes({**CFG, "model_args": {"lr_schedule": "cos"}})
    with pytest.raises(ValueError, match="duplicates"):
        engine.param_shapes({**CFG, "model_args": {"duplicates": "x"}})
    with pytest.raises(ValueError, match="model_args must be a dict"):
        engine.param_shapes({**CFG, "model_args": [1]})
    with pytest.raises(ValueError, match="counts"):
        make({**CFG, "counts": [1, 2, 3]})
    with pytest.raises(ValueError, match="all zero"):
        make({**CFG, "counts": [0] * V})


def test_unknown_model_lists_all():
    with pytest.raises(ValueError, match="valid models: neg, neg_autograd, softmax"):
        engine.param_shapes({**CFG, "model": "cbow"})


def test_model_args_missing_or_none():
    for args in (None, {}):
        model, _ = make({**CFG, "model_args": args})
        assert model.negatives == 5


def test_windows_checked_and_other_window_size():
    model, _ = make({**CFG, "window": 1})
    assert math.isfinite(engine.train_step(model, cyclic_windows(16, 1)))
    with pytest.raises(ValueError, match=r"\[n, 3\]"):
        engine.train_step(model, cyclic_windows(16, 2))
    bad = cyclic_windows(4, 1)
    bad[0, 0] = V
    with pytest.raises(ValueError, match="outside"):
        engine.train_step(model, bad)


def test_no_torch_objects_leak_and_int64_accepted():
    model, _ = make()
    loss = engine.train_step(model, cyclic_windows(8).astype(np.int64))
    assert type(loss) is float
    assert type(engine.test_loss(model, cyclic_windows(8))) is float
    emb = engine.embeddings(model)
    assert isinstance(emb, np.ndarray) and not isinstance(emb, torch.Tensor)
    assert emb.dtype == np.float32 and emb.shape == (V, D)


def test_diverged_weights_raise():
    model, weights = make()
    weights[:D] = np.inf
    with pytest.raises(ValueError, match="not finite.*lr"):
        engine.train_step(model, cyclic_windows(8, offset=50 - 2))


def torch_ops_model(cfg, monkeypatch):
    """The model as a build without fedavg_kernels makes it: its step as torch ops, on tensors."""
    with monkeypatch.context() as m:
        m.setattr(fused_neg, "fedavg_kernels", None)
        return make(cfg)


fused_only = pytest.mark.skipif(
    fused_neg.fedavg_kernels is None,
    reason="fedavg_kernels is not built (build the program first)")


@fused_only
@pytest.mark.parametrize("mode", ["sqrt", "sum", "mean"])
def test_the_fused_step_is_the_torch_step(mode, monkeypatch):
    """On a CPU "neg" steps with fedavg_kernels' fused kernel; the torch
    ops that run where it cannot (a GPU) are the same step: the same loss,
    weights, written rows and test loss, to float rounding.  Small V, so
    rows repeat within a batch and noise words hit targets."""
    cfg = {**CFG, "lr": 0.3, "model_args": {"duplicates": mode}}
    fused, wf = make(cfg)
    ops, wo = torch_ops_model(cfg, monkeypatch)
    assert fused.fused and not ops.fused
    for m in (fused, ops):
        engine.written_rows(m)                     # start counting rows
    rng = np.random.default_rng(1)
    for _ in range(15):
        ids = rng.integers(0, V, (64, 2 * W + 1)).astype(np.int32)
        assert engine.train_step(fused, ids) == \
            pytest.approx(engine.train_step(ops, ids), rel=1e-5)
    assert np.allclose(wf, wo, rtol=1e-4, atol=1e-6)
    assert np.abs(wf - wo).max() < 1e-3 * np.abs(wo).max()
    for a, b in zip(engine.written_rows(fused), engine.written_rows(ops)):
        assert np.array_equal(a, b)
    test = rng.integers(0, V, (300, 2 * W + 1)).astype(np.int32)
    assert engine.test_loss(fused, test) == \
        pytest.approx(engine.test_loss(ops, test), rel=1e-5)


@fused_only
def test_the_fused_kernel_checks_before_it_writes():
    kernels = fused_neg.fedavg_kernels
    table = np.random.default_rng(0).normal(0, 0.1, (2 * V, D)) \
        .astype(np.float32)
    before = table.copy()
    ids = cyclic_windows(16)
    noise = np.arange(16 * 3, dtype=np.int64) % V
    bad = ids.copy()
    bad[-1, 0] = V                                 # the last window's id
    with pytest.raises(IndexError, match=f"word id {V} outside"):
        kernels.neg_cbow_step(table, bad, noise, W, 0.1, "sqrt", None)
    noise[-1] = -1
    with pytest.raises(IndexError, match="word id -1 outside"):
        kernels.neg_cbow_step(table, ids, noise, W, 0.1, "sqrt", None)
    assert np.array_equal(table, before)
    # A copy would take the step and drop it: arrays it cannot write in
    # place are refused.
    noise[-1] = 0
    with pytest.raises(ValueError, match="table must be"):
        kernels.neg_cbow_step(table.astype(np.float64), ids, noise, W, 0.1,
                              "sqrt", None)
    with pytest.raises(ValueError, match="table must be"):
        kernels.neg_cbow_step(table[:, ::2], ids, noise, W, 0.1, "sqrt",
                              None)
    with pytest.raises(ValueError, match="noise must be"):
        kernels.neg_cbow_step(table, ids, noise.astype(np.int32), W, 0.1,
                              "sqrt", None)
    with pytest.raises(ValueError, match="duplicates must be"):
        kernels.neg_cbow_step(table, ids, noise, W, 0.1, "twice", None)
    assert np.array_equal(table, before)
    # A loss that is not finite writes nothing.
    table[ids[0, 0]] = np.inf
    before = table.copy()
    loss = kernels.neg_cbow_step(table, ids, noise, W, 0.1, "sqrt", None)
    assert not math.isfinite(loss)
    assert np.array_equal(table, before, equal_nan=True)


@fused_only
@pytest.mark.parametrize("mode", ["sqrt", "sum"])
def test_windows_cut_short_are_the_same_step_fused_or_not(mode, monkeypatch):
    """edge_windows / reduced_windows: -1 in a context slot is no word. The
    fused kernel and the torch ops take the mean of the words there are and
    move no row for an empty slot; a step for whole windows only (the
    autograd model) refuses such a batch naming the setting."""
    cfg = {**CFG, "lr": 0.3, "model_args": {"duplicates": mode}}
    fused, wf = make(cfg)
    ops, wo = torch_ops_model(cfg, monkeypatch)
    for m in (fused, ops):
        engine.written_rows(m)
    rng = np.random.default_rng(2)
    for _ in range(10):
        ids = rng.integers(1, V, (64, 2 * W + 1)).astype(np.int32)
        empty = rng.random((64, 2 * W + 1)) < 0.4
        empty[:, W] = False                     # never the target
        empty[:, W + 1] = False                 # a context word is left
        ids[empty] = -1
        assert engine.train_step(fused, ids) == \
            pytest.approx(engine.train_step(ops, ids), rel=1e-5)
    assert np.allclose(wf, wo, rtol=1e-4, atol=1e-6)
    written = engine.written_rows(fused)
    for a, b in zip(written, engine.written_rows(ops)):
        assert np.array_equal(a, b)
    assert 0 not in written[0]                   # row 0: only empty slots
    ids[0, :W] = -1
    ids[0, W + 1:] = -1                          # no context word at all
    for m in (fused, ops):
        with pytest.raises(ValueError, match="no context word"):
            engine.train_step(m, ids)
    autograd, _ = make({**CFG, "model": "neg_autograd"})
    with pytest.raises(ValueError, match="edge_windows"):
        engine.train_step(autograd, ids)
