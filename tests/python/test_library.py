"""The default model (python/library.py), without MPI."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import library


def make(cfg, init=True):
    size = sum(math.prod(s) for _, s in library.param_shapes(cfg))
    weights = np.zeros(size, dtype=np.float32)
    return library.create(cfg, weights, init), weights


CFG = {"vocab_size": 50, "dim": 8, "window": 2, "lr": 0.05, "seed": 3, "model": "softmax"}


def cyclic_windows(vocab_size, window, n, offset=0):
    """Windows over the sequence 0, 1, 2, ... mod V: context fixes target."""
    starts = (np.arange(n) * 7 + offset) % vocab_size
    cols = np.arange(2 * window + 1)
    return ((starts[:, None] + cols) % vocab_size).astype(np.int32)


def test_param_shapes_match_config():
    shapes = library.param_shapes({"vocab_size": 100, "dim": 16, "model": "softmax"})
    assert [name for name, _ in shapes] == ["embedding", "out_weight",
                                            "out_bias"]
    assert dict(shapes)["embedding"] == (100, 16)
    assert sum(math.prod(s) for _, s in shapes) == 100 * 16 * 2 + 100


def test_create_rejects_wrong_buffer():
    size = sum(math.prod(s) for _, s in library.param_shapes(CFG))
    for bad in (np.zeros(size - 1, np.float32), np.zeros(size, np.float64),
                np.zeros((size, 1), np.float32),
                np.zeros(2 * size, np.float32)[::2]):
        with pytest.raises(ValueError, match="weights buffer"):
            library.create(CFG, bad, True)


def test_unknown_model_name_raises():
    with pytest.raises(ValueError, match="unknown model 'nope'.*softmax"):
        library.param_shapes({**CFG, "model": "nope"})
    with pytest.raises(ValueError, match="unknown model"):
        library.create({**CFG, "model": "nope"}, np.zeros(1, np.float32),
                       True)


def test_missing_vocab_size_and_bad_values_raise():
    with pytest.raises(ValueError, match="vocab_size"):
        library.param_shapes({"dim": 8})
    with pytest.raises(ValueError, match="dim"):
        library.param_shapes({**CFG, "dim": 0})
    with pytest.raises(ValueError, match="lr"):
        make({**CFG, "lr": -1.0})


def test_same_seed_same_bits_other_seed_differs():
    _, a = make(CFG)
    _, b = make(CFG)
    _, c = make({**CFG, "seed": 4})
    assert a.tobytes() == b.tobytes()
    assert np.any(a != 0)
    assert not np.array_equal(a, c)


def test_init_false_keeps_buffer():
    size = sum(math.prod(s) for _, s in library.param_shapes(CFG))
    weights = np.arange(size, dtype=np.float32)
    model = library.create(CFG, weights, False)
    assert np.array_equal(weights, np.arange(size, dtype=np.float32))
    assert np.array_equal(library.embeddings(model),
                          weights[:50 * 8].reshape(50, 8))


def test_buffer_writes_are_seen_by_model():
    model, weights = make(CFG)
    weights[:8] = 7.0                       # row 0 of the embedding
    assert np.all(library.embeddings(model)[0] == 7.0)
    weights[:] = 0.0                        # e.g. an MPI broadcast
    windows = cyclic_windows(50, 2, 64)
    assert library.test_loss(model, windows) == pytest.approx(math.log(50),
                                                              abs=1e-6)


def test_train_step_updates_buffer_in_place():
    model, weights = make(CFG)
    before = weights.copy()
    loss = library.train_step(model, cyclic_windows(50, 2, 32))
    assert isinstance(loss, float) and math.isfinite(loss)
    assert not np.array_equal(weights, before)
    emb = library.embeddings(model)
    assert emb.dtype == np.float32 and emb.shape == (50, 8)
    assert np.array_equal(emb, weights[:400].reshape(50, 8))
    emb[:] = 0.0                            # a copy: does not touch weights
    assert np.any(weights[:400] != 0.0)


def test_initial_test_loss_is_about_log_vocab():
    cfg = {"vocab_size": 1000, "dim": 32, "window": 2, "lr": 0.01, "seed": 1, "model": "softmax"}
    model, _ = make(cfg)
    windows = cyclic_windows(1000, 2, 500)
    loss = library.test_loss(model, windows)
    assert math.isfinite(loss)
    assert loss == pytest.approx(math.log(1000), abs=0.05)


def test_loss_goes_down_on_structured_toy_corpus():
    model, _ = make(CFG)
    held_out = cyclic_windows(50, 2, 50, offset=3)
    start = library.test_loss(model, held_out)
    losses = [library.train_step(model, cyclic_windows(50, 2, 64, offset=i))
              for i in range(50)]
    end = library.test_loss(model, held_out)
    assert losses[-1] < 0.5 * losses[0]
    assert end < 0.5 * start


def test_train_step_is_deterministic():
    runs = []
    for _ in range(2):
        model, weights = make(CFG)
        for i in range(5):
            library.train_step(model, cyclic_windows(50, 2, 16, offset=i))
        runs.append(weights.copy())
    assert runs[0].tobytes() == runs[1].tobytes()


def test_other_window_size():
    cfg = {**CFG, "window": 1}
    model, _ = make(cfg)
    windows = cyclic_windows(50, 1, 16)
    assert math.isfinite(library.train_step(model, windows))
    with pytest.raises(ValueError, match=r"\[n, 3\]"):
        library.train_step(model, cyclic_windows(50, 2, 16))


def test_bad_windows_raise():
    model, _ = make(CFG)
    windows = cyclic_windows(50, 2, 8)
    windows[3, 1] = 50
    with pytest.raises(ValueError, match="word id 50"):
        library.train_step(model, windows)
    windows[3, 1] = -2
    with pytest.raises(ValueError, match="word id -2"):
        library.test_loss(model, windows)
    with pytest.raises(ValueError, match="int32"):
        library.train_step(model, np.zeros((0, 5), np.int32))


def test_read_only_windows_are_accepted():
    model, _ = make(CFG)
    windows = cyclic_windows(50, 2, 8)
    windows.flags.writeable = False
    assert math.isfinite(library.train_step(model, windows))


def test_test_loss_matches_plain_torch_and_does_not_train():
    model, weights = make({**CFG, "vocab_size": 30})
    before = weights.copy()
    windows = cyclic_windows(30, 2, 9000)   # more than one eval chunk
    got = library.test_loss(model, windows)
    assert np.array_equal(weights, before)
    emb = torch.from_numpy(weights[:240].reshape(30, 8))
    w_out = torch.from_numpy(weights[240:480].reshape(8, 30))
    bias = torch.from_numpy(weights[480:])
    ids = torch.from_numpy(windows).long()
    ctx = emb[ids[:, [0, 1, 3, 4]]].mean(1)
    want = F.cross_entropy(ctx @ w_out + bias, ids[:, 2]).item()
    assert got == pytest.approx(want, rel=1e-5)


def test_fused_loss_matches_autograd_reference():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(16, 6, generator=gen, dtype=torch.float64)
    w = torch.randn(6, 40, generator=gen, dtype=torch.float64)
    b = torch.randn(40, generator=gen, dtype=torch.float64)
    target = torch.randint(0, 40, (16,), generator=gen)
    grads = []
    for fn in (lambda x, w, b: F.cross_entropy(x @ w + b, target),
               lambda x, w, b: library._LinearSoftmaxCE.apply(x, w, b,
                                                              target)):
        leaves = [t.clone().requires_grad_() for t in (x, w, b)]
        loss = fn(*leaves)
        loss.backward()
        grads.append([loss.detach()] + [t.grad for t in leaves])
    for ref, fused in zip(*grads):
        assert torch.allclose(ref, fused, rtol=1e-10, atol=1e-12)


def test_default_model_is_negative_sampling_with_its_own_lr():
    cfg = {k: v for k, v in CFG.items() if k not in ("model", "lr")}
    names = [name for name, _ in library.param_shapes(cfg)]
    assert names == ["embedding", "out_vectors"]
    model, _ = make(cfg)
    assert model.lr == 0.1
    soft, _ = make({**cfg, "model": "softmax"})
    assert soft.optimizer.param_groups[0]["lr"] == 0.01


def _restored_model_continues_identically(name, saved_state):
    """Trains a model 3 steps, restores a copy from its weights + saved_state(model), and checks both take the
    same next step."""
    cfg = {**CFG, "model": name, "lr": 0.05 if name == "softmax" else 0.1, "counts": list(range(1, 51))}
    a, wa = make(cfg)
    windows = cyclic_windows(cfg["vocab_size"], cfg["window"], 64)
    for _ in range(3):
        library.train_step(a, windows)
    state = saved_state(a)
    assert isinstance(state, bytes) and state
    b, wb = make(cfg, init=False)
    wb[...] = wa
    library.set_state(b, state)
    library.train_step(a, windows)
    library.train_step(b, windows)
    np.testing.assert_array_equal(wa, wb)


@pytest.mark.parametrize("name", ["softmax", "neg"])
def test_state_round_trip_continues_identically(name):
    """get_state/set_state carry everything but the weights: a model restored from a checkpoint (weights +
    state) takes exactly the same next step as the original."""
    _restored_model_continues_identically(name, library.get_state)
