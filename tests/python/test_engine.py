"""The contract C++ calls (python/engine.py) with the models of python/library.py, without MPI."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import engine
import library
from runtime import memory

MODELS = sorted(engine.available_models())
V = 50


def make(cfg, init=True):
    size = sum(math.prod(s) for _, s in engine.param_shapes(cfg))
    weights = np.zeros(size, dtype=np.float32)
    return engine.create(cfg, weights, init), weights


def config(model, **extra):
    # On the CPU, whatever the machine has: these tests read the buffer as the model's own weights.
    return {"vocab_size": V, "dim": 8, "window": 2, "seed": 3, "model": model, "bs": 64, "device": "cpu",
            "counts": [1000 - 10 * i for i in range(V)], **extra}


CFG = config("softmax", lr=0.05)


def cyclic_windows(vocab_size, window, n, offset=0):
    """Windows over the sequence 0, 1, 2, ... mod V: context fixes target."""
    starts = (np.arange(n) * 7 + offset) % vocab_size
    cols = np.arange(2 * window + 1)
    return ((starts[:, None] + cols) % vocab_size).astype(np.int32)


def test_param_shapes_match_config():
    shapes = engine.param_shapes({"vocab_size": 100, "dim": 16, "model": "softmax"})
    assert [name for name, _ in shapes] == ["embedding", "out_weight", "out_bias"]
    assert dict(shapes)["embedding"] == (100, 16)
    assert sum(math.prod(s) for _, s in shapes) == 100 * 16 * 2 + 100
    for name in ("neg", "neg_autograd"):
        assert engine.param_shapes(config(name)) == [("embedding", (V, 8)), ("out_vectors", (V, 8))]


@pytest.mark.parametrize("model", MODELS)
def test_create_rejects_wrong_buffer(model):
    size = sum(math.prod(s) for _, s in engine.param_shapes(config(model)))
    for bad in (np.zeros(size - 1, np.float32), np.zeros(size, np.float64), np.zeros((size, 1), np.float32),
                np.zeros(2 * size, np.float32)[::2]):
        with pytest.raises(ValueError, match="weights buffer"):
            engine.create(config(model), bad, True)


def test_unknown_model_name_raises():
    with pytest.raises(ValueError, match="unknown model 'nope'; valid models: neg, neg_autograd, softmax"):
        engine.param_shapes({**CFG, "model": "nope"})
    with pytest.raises(ValueError, match="unknown model"):
        engine.create({**CFG, "model": "nope"}, np.zeros(1, np.float32), True)


def test_missing_vocab_size_and_bad_values_raise():
    with pytest.raises(ValueError, match="vocab_size"):
        engine.param_shapes({"dim": 8})
    with pytest.raises(ValueError, match="dim"):
        engine.param_shapes({**CFG, "dim": 0})
    with pytest.raises(ValueError, match="bs"):
        engine.param_shapes({**CFG, "bs": 0})
    with pytest.raises(ValueError, match="lr"):
        make({**CFG, "lr": -1.0})


@pytest.mark.parametrize("change,key", [
    ({"model": "nope"}, "model"),
    ({"dim": 0}, "dim"),
    ({"lr": -1.0}, "lr"),
    ({"device": "gpu"}, "device"),
    ({"model_args": [1]}, "model_args"),
    ({"model": "neg", "model_args": {"negatives": -3}}, "model_args"),       # a fused model's check_args
    ({"model": "neg_autograd", "model_args": {"negative": 3}}, "model_args"),
])
def test_a_refused_cfg_value_names_its_key(change, key):
    """C++ names where cfg.json set the key (docs/python_interface.md#errors)."""
    with pytest.raises(engine.ConfigError) as e:
        engine.param_shapes({**CFG, **change})
    assert e.value.key == key and str(e.value) == "cfg: " + e.value.message
    assert not e.value.message.startswith("cfg:")


@pytest.mark.parametrize("model", MODELS)
def test_sizes_beyond_the_machines_memory_are_refused_naming_their_key(model, monkeypatch):
    """On a machine of 1 GiB: weights of a million words x 4096 (32 GiB) name dim; the noise words of a test-loss
    chunk (4096 windows) x 10^5 negatives (3.1 GiB) name model_args; the defaults fit."""
    monkeypatch.setattr(memory, "physical_memory", lambda: 1 << 30)
    engine.param_shapes(config(model))
    with pytest.raises(engine.ConfigError) as e:
        engine.param_shapes(config(model, vocab_size=1_000_000, dim=4096, counts=None))
    assert e.value.key == "dim" and "more than this machine has (1.0 GiB); lower dim" in e.value.message
    if model == "softmax":
        return  # no noise words
    with pytest.raises(engine.ConfigError) as e:
        engine.param_shapes(config(model, model_args={"negatives": 100_000}))
    assert e.value.key == "model_args"
    assert e.value.message == ("model_args.negatives 100000: the noise words of 4096 windows (a batch of bs 64, or a "
                               "test-loss chunk of up to 4096) need 3.1 GiB of memory, more than this machine has "
                               "(1.0 GiB); lower model_args.negatives")


@pytest.mark.parametrize("model", MODELS)
def test_same_seed_same_bits_other_seed_differs(model):
    _, a = make(config(model))
    _, b = make(config(model))
    _, c = make(config(model, seed=4))
    assert a.tobytes() == b.tobytes()
    assert np.any(a != 0)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("model", MODELS)
def test_init_false_keeps_buffer(model):
    size = sum(math.prod(s) for _, s in engine.param_shapes(config(model)))
    weights = np.arange(size, dtype=np.float32)
    m = engine.create(config(model), weights, False)
    assert np.array_equal(weights, np.arange(size, dtype=np.float32))
    assert np.array_equal(engine.embeddings(m), weights[:V * 8].reshape(V, 8))


@pytest.mark.parametrize("model", MODELS)
def test_buffer_writes_are_seen_by_model(model):
    m, weights = make(config(model))
    weights[:8] = 7.0                       # row 0 of the embedding
    assert np.all(engine.embeddings(m)[0] == 7.0)
    weights[:] = 0.0                        # e.g. an MPI broadcast
    loss = engine.test_loss(m, cyclic_windows(V, 2, 64))
    # All-zero weights: a uniform softmax (ln V), or every score 0: ln 2 per term, 1 + K terms (fewer where a
    # noise word equals the target and is skipped).
    if model == "softmax":
        assert loss == pytest.approx(math.log(V), abs=1e-5)
    else:
        assert 5.5 * math.log(2) < loss <= 6 * math.log(2) + 1e-6


@pytest.mark.parametrize("model", MODELS)
def test_train_step_updates_buffer_in_place(model):
    m, weights = make(config(model))
    before = weights.copy()
    loss = engine.train_step(m, cyclic_windows(V, 2, 32))
    assert type(loss) is float and math.isfinite(loss)
    assert not np.array_equal(weights, before)
    emb = engine.embeddings(m)
    assert emb.dtype == np.float32 and emb.shape == (V, 8)
    assert not isinstance(emb, torch.Tensor)
    assert np.array_equal(emb, weights[:V * 8].reshape(V, 8))
    emb[:] = 0.0                            # a copy: does not touch weights
    assert np.any(weights[:V * 8] != 0.0)


def test_initial_test_loss_is_about_log_vocab():
    cfg = {"vocab_size": 1000, "dim": 32, "window": 2, "lr": 0.01, "seed": 1, "model": "softmax", "device": "cpu"}
    m, _ = make(cfg)
    loss = engine.test_loss(m, cyclic_windows(1000, 2, 500))
    assert math.isfinite(loss)
    assert loss == pytest.approx(math.log(1000), abs=0.05)


@pytest.mark.parametrize("model", MODELS)
def test_loss_goes_down_on_structured_toy_corpus(model):
    m, _ = make(config(model, lr={"softmax": 0.05}.get(model, 0.2)))
    held_out = cyclic_windows(V, 2, 50, offset=3)
    start = engine.test_loss(m, held_out)
    assert engine.test_loss(m, held_out) == start    # no update, same noise words
    losses = [engine.train_step(m, cyclic_windows(V, 2, 64, offset=i)) for i in range(60)]
    end = engine.test_loss(m, held_out)
    assert losses[-1] < 0.5 * losses[0]
    assert end < 0.5 * start


@pytest.mark.parametrize("model", MODELS)
def test_train_step_is_deterministic_and_rank_changes_noise(model):
    runs = []
    for rank in (0, 0, 1):
        m, weights = make(config(model, rank=rank))
        for i in range(5):
            engine.train_step(m, cyclic_windows(V, 2, 16, offset=i))
        runs.append(weights.copy())
    assert runs[0].tobytes() == runs[1].tobytes()
    if model != "softmax":                  # no noise words: the rank changes nothing
        assert runs[0].tobytes() != runs[2].tobytes()


@pytest.mark.parametrize("model", MODELS)
def test_other_window_size(model):
    m, _ = make(config(model, window=1))
    assert math.isfinite(engine.train_step(m, cyclic_windows(V, 1, 16)))
    with pytest.raises(ValueError, match=r"\[n, 3\]"):
        engine.train_step(m, cyclic_windows(V, 2, 16))


def test_bad_windows_raise():
    m, _ = make(CFG)
    windows = cyclic_windows(V, 2, 8)
    windows[3, 1] = V
    with pytest.raises(ValueError, match=f"word id {V}"):
        engine.train_step(m, windows)
    windows[3, 1] = -2
    with pytest.raises(ValueError, match="word id -2"):
        engine.test_loss(m, windows)
    with pytest.raises(ValueError, match="int32"):
        engine.train_step(m, np.zeros((0, 5), np.int32))


@pytest.mark.parametrize("model", MODELS)
def test_read_only_and_int64_windows_are_accepted(model):
    m, _ = make(config(model))
    windows = cyclic_windows(V, 2, 8)
    windows.flags.writeable = False
    assert math.isfinite(engine.train_step(m, windows))
    assert math.isfinite(engine.train_step(m, cyclic_windows(V, 2, 8).astype(np.int64)))
    assert type(engine.test_loss(m, windows)) is float


def test_softmax_test_loss_matches_plain_torch_and_does_not_train():
    m, weights = make({**CFG, "vocab_size": 30})
    before = weights.copy()
    windows = cyclic_windows(30, 2, 9000)   # more than one eval chunk
    got = engine.test_loss(m, windows)
    assert np.array_equal(weights, before)
    emb = torch.from_numpy(weights[:240].reshape(30, 8))
    w_out = torch.from_numpy(weights[240:480].reshape(8, 30))
    bias = torch.from_numpy(weights[480:])
    ids = torch.from_numpy(windows).long()
    ctx = emb[ids[:, [0, 1, 3, 4]]].mean(1)
    want = F.cross_entropy(ctx @ w_out + bias, ids[:, 2]).item()
    assert got == pytest.approx(want, rel=1e-5)


def test_autograd_neg_test_loss_equals_the_hand_written_one():
    """Same weights, same noise words: the two "neg" models compute the same test loss."""
    hand, wh = make(config("neg"))
    auto, wa = make(config("neg_autograd"))
    wa[:] = wh + np.random.default_rng(0).normal(0, 0.3, wh.size).astype(np.float32)
    wh[:] = wa
    windows = cyclic_windows(V, 2, 5000)
    assert engine.test_loss(auto, windows) == pytest.approx(engine.test_loss(hand, windows), rel=1e-5)


def test_default_model_is_the_hand_written_neg_with_its_own_lr():
    cfg = {k: v for k, v in CFG.items() if k not in ("model", "lr")}
    assert [name for name, _ in engine.param_shapes(cfg)] == ["embedding", "out_vectors"]
    m, _ = make(cfg)
    assert type(m).__name__ == "FusedNegCBOW" and m.lr == 0.1
    auto, _ = make({**cfg, "model": "neg_autograd"})
    assert auto.model.lr == 0.1
    soft, _ = make({**cfg, "model": "softmax"})
    assert soft.optimizer.param_groups[0]["lr"] == 0.01


def test_model_args_set_class_attributes_of_an_autograd_model():
    m, _ = make(config("neg_autograd", model_args={"negatives": 3, "noise_power": 1}))
    assert m.model.negatives == 3 and m.negatives == 3 and m.model.noise_power == 1
    assert library.NegCBOW.negatives == 5            # for this run only
    with pytest.raises(ValueError, match="unknown key 'negative' for model 'neg_autograd'; valid keys: "
                                         "negatives, noise_power"):
        engine.param_shapes(config("neg_autograd", model_args={"negative": 3}))
    with pytest.raises(ValueError, match="model_args.negatives must be like 5"):
        engine.param_shapes(config("neg_autograd", model_args={"negatives": 2.5}))


@pytest.mark.parametrize("model", MODELS)
def test_state_round_trip_continues_identically(model):
    """get_state/set_state carry everything but the weights: a model restored from a checkpoint (weights +
    state) takes exactly the same next steps as the original."""
    cfg = config(model)
    a, wa = make(cfg)
    windows = cyclic_windows(V, 2, 64)
    for i in range(3):
        engine.train_step(a, cyclic_windows(V, 2, 64, offset=i))
    state = engine.get_state(a)
    assert isinstance(state, bytes) and state
    b, wb = make(cfg, init=False)
    wb[...] = wa
    engine.set_state(b, state)
    for i in range(2):
        assert engine.train_step(a, windows) == engine.train_step(b, windows)
    np.testing.assert_array_equal(wa, wb)


class _RunsCode:
    """Unpickling this runs code: it touches the file it names."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (str(self.path), "w"))


@pytest.mark.parametrize("model", MODELS)
def test_a_pickled_state_is_refused_and_runs_nothing(model, tmp_path):
    """A checkpoint is data: a learner state that is a pickle (here one that creates a file when unpickled) is
    refused by set_state, and nothing in it runs."""
    import pickle

    from runtime import state_codec

    marker = tmp_path / "ran"
    m, _ = make(config(model))
    for bad in (pickle.dumps({"step": _RunsCode(marker)}), b"\x00" * 7, state_codec.encode({"step": 1})[:-1] + b"{"):
        with pytest.raises(state_codec.StateFormatError):
            engine.set_state(m, bad)
    assert not marker.exists()


def test_the_state_format_keeps_tensors_arrays_and_python_values():
    from runtime import state_codec

    state = {"step": 7, 3: (0.5, None, "x"), "t": torch.arange(6, dtype=torch.float64).reshape(2, 3),
             "b": torch.ones(2, dtype=torch.bfloat16), "a": np.arange(4, dtype=np.uint8), "big": 2**100,
             "l": [True, float("inf")]}
    back = state_codec.decode(state_codec.encode(state))
    assert back["step"] == 7 and back[3] == (0.5, None, "x") and back["big"] == 2**100 and back["l"] == [True, math.inf]
    assert torch.equal(back["t"], state["t"]) and back["t"].dtype == torch.float64
    assert torch.equal(back["b"], state["b"]) and back["b"].dtype == torch.bfloat16
    assert isinstance(back["a"], np.ndarray) and back["a"].tolist() == [0, 1, 2, 3]
    with pytest.raises(TypeError, match="only tensors, arrays"):
        state_codec.encode({"f": len})


@pytest.mark.parametrize("model", MODELS)
def test_written_rows_name_every_row_the_steps_changed(model):
    """The sparse exchange reads only the rows written_rows names: it must
    cover every row a step changed (a Dense parameter: None, read whole),
    and a second call names nothing new."""
    m, weights = make(config(model))
    shapes = engine.param_shapes(config(model))
    # The first call starts the count: it cannot say yet.
    assert engine.written_rows(m) == [None] * len(shapes)
    before = weights.copy()
    for offset in (0, 3):
        engine.train_step(m, cyclic_windows(V, 2, 8, offset) % 20)
    written = engine.written_rows(m)
    assert len(written) == len(shapes)
    offset = 0
    for (name, shape), rows in zip(shapes, written):
        size = math.prod(shape)
        moved = (weights[offset:offset + size] != before[offset:offset + size])
        offset += size
        if rows is None:
            assert model == "softmax", name
            continue
        assert rows.dtype == np.int32 and np.all(np.diff(rows) > 0), name
        changed = np.flatnonzero(moved.reshape(shape[0], -1).any(1))
        assert len(changed) > 0 and set(changed) <= set(rows), name
        if name == "embedding":              # context words: 0..19 only
            assert rows.max() < 20
    assert all(r is None or len(r) == 0 for r in engine.written_rows(m))


def test_written_rows_of_a_table_stepped_by_adam():
    """A Table whose optimizer keeps state (Adam: the unique-row path) names
    the rows it stepped too."""
    class AdamNeg(library.NegCBOW):
        def optimizer(self, params):
            return torch.optim.Adam(params.values(), lr=0.01)

    library.MODELS["adam_neg_test"] = AdamNeg
    try:
        m, weights = make(config("adam_neg_test"))
        engine.written_rows(m)
        before = weights.copy()
        engine.train_step(m, cyclic_windows(V, 2, 8) % 10)
        emb, out = engine.written_rows(m)
        moved = (weights != before)[:V * 8].reshape(V, 8).any(1)
        assert set(np.flatnonzero(moved)) <= set(emb) and len(emb) <= 10
        assert len(out) > 0
    finally:
        del library.MODELS["adam_neg_test"]


@pytest.mark.parametrize("model, lr", [("neg", 0.1), ("neg_autograd", 0.1), ("neg_autograd", 0.3), ("softmax", 0.05)])
def test_current_lr_is_the_rate_per_window_not_the_optimizers_per_batch_rate(model, lr):
    """The progress line's lr: neg_autograd's SGD steps at lr * bs * 2w a batch (51.2 here), its rate per
    window is lr."""
    m, _ = make(config(model, lr=lr))
    assert engine.current_lr(m) == pytest.approx(lr)
    engine.train_step(m, cyclic_windows(V, 2, 64))
    assert engine.current_lr(m) == pytest.approx(lr)
