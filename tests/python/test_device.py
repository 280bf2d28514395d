"""Where the model trains (cfg "device"): the names, the CPU default
without a GPU, and the GPU path, in which the model trains a copy of the
buffer that load_weights/store_weights move.  The copy is checked on any
machine (engine._COPY_ON_CPU); the GPU itself where torch sees one."""

import math

import numpy as np
import pytest
import torch

import engine

MODELS = sorted(engine.available_models())
V = 40
GPU = torch.cuda.is_available()


def config(model, device, **extra):
    return {"vocab_size": V, "dim": 8, "window": 2, "seed": 3, "model": model, "bs": 32, "device": device,
            "counts": [500 - 10 * i for i in range(V)], **extra}


def make(cfg):
    weights = np.zeros(sum(math.prod(s) for _, s in engine.param_shapes(cfg)), np.float32)
    return engine.create(cfg, weights, True), weights


def windows(n, offset=0):
    starts = (np.arange(n) * 7 + offset) % V
    return ((starts[:, None] + np.arange(5)) % V).astype(np.int32)


@pytest.mark.parametrize("bad", ["gpu", "cuda:x", "CPU", "", 3])
def test_a_bad_device_name_is_a_clear_error(bad):
    with pytest.raises(ValueError, match=r"cfg: device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got"):
        engine.param_shapes(config("neg", bad))


@pytest.mark.skipif(GPU, reason="this machine has a GPU")
@pytest.mark.parametrize("device", ["cuda", "cuda:1"])
def test_a_gpu_on_a_machine_without_one_is_a_clear_error(device):
    with pytest.raises(ValueError, match=rf"cfg: device '{device}': torch sees no GPU"):
        engine.param_shapes(config("neg", device))


@pytest.mark.skipif(GPU, reason="this machine has a GPU")
def test_auto_trains_the_buffer_itself_without_a_gpu():
    model, weights = make(config("neg", "auto"))
    before = weights.copy()
    engine.train_step(model, windows(32))
    assert not np.array_equal(weights, before)      # no store_weights needed
    assert engine.device(model) == ("cpu (fused step)" if model.fused else "cpu")


def train(model, weights, steps):
    """What a learner's period does: take the buffer, step, give it back."""
    engine.load_weights(model)
    losses = [engine.train_step(model, windows(32, 3 * s)) for s in range(steps)]
    engine.store_weights(model)
    return losses


@pytest.mark.parametrize("model_name", MODELS)
def test_a_model_on_a_copy_trains_as_on_the_buffer(model_name, monkeypatch):
    direct, direct_w = make(config(model_name, "cpu"))
    engine.written_rows(direct)
    monkeypatch.setattr(engine, "_COPY_ON_CPU", True)
    copied, copied_w = make(config(model_name, "cpu"))
    engine.written_rows(copied)
    assert copied_w.tobytes() == direct_w.tobytes()     # drawn into the buffer, then copied

    # Steps change the copy only; store_weights brings the buffer level with it.
    before = copied_w.copy()
    losses = [engine.train_step(copied, windows(32, 3 * s)) for s in range(6)]
    assert copied_w.tobytes() == before.tobytes()
    engine.store_weights(copied)
    assert losses == train(direct, direct_w, 6)
    assert copied_w.tobytes() == direct_w.tobytes()
    for a, b in zip(engine.written_rows(copied), engine.written_rows(direct)):
        assert (a is None and b is None) or np.array_equal(a, b)
    assert np.array_equal(engine.embeddings(copied), engine.embeddings(direct))

    # What C++ writes into the buffer (a merge) reaches the copy at load_weights.
    for w in (copied_w, direct_w):
        w *= 0.5
    engine.load_weights(copied)
    test = windows(64, 1)
    assert engine.test_loss(copied, test) == engine.test_loss(direct, test)
    assert train(copied, copied_w, 3) == train(direct, direct_w, 3)
    assert copied_w.tobytes() == direct_w.tobytes()

    # A resumed model continues alike, whichever kind saved the state.
    state = engine.get_state(copied)
    again, again_w = make(config(model_name, "cpu"))
    again_w[:] = copied_w
    engine.load_weights(again)
    engine.set_state(again, state)
    assert train(again, again_w, 2) == train(copied, copied_w, 2)
    assert again_w.tobytes() == copied_w.tobytes()


@pytest.mark.skipif(not GPU, reason="torch sees no GPU")
@pytest.mark.parametrize("model_name", MODELS)
def test_a_model_on_the_gpu_trains_as_on_the_cpu(model_name):
    cpu, cpu_w = make(config(model_name, "cpu"))
    gpu, gpu_w = make(config(model_name, "auto"))
    assert gpu.placement.device.type == "cuda" and engine.device(gpu) == "cuda:0"
    assert gpu_w.tobytes() == cpu_w.tobytes()           # the same start on every device
    for rnd in range(3):
        cpu_losses = train(cpu, cpu_w, 10)
        gpu_losses = train(gpu, gpu_w, 10)
        assert gpu_losses == pytest.approx(cpu_losses, rel=1e-4)
        np.testing.assert_allclose(gpu_w, cpu_w, rtol=1e-3, atol=1e-5)
        # A merge: both buffers take the same weights, as from the Dispatcher.
        gpu_w[:] = cpu_w
        engine.load_weights(gpu)
    test = windows(200, 1)
    assert engine.test_loss(gpu, test) == pytest.approx(engine.test_loss(cpu, test), rel=1e-5)
    np.testing.assert_array_equal(engine.embeddings(gpu), engine.embeddings(cpu))
    rows = engine.written_rows(gpu)
    assert all(r is None or (r.dtype == np.int32 and r.ndim == 1) for r in rows)
    # A state saved on the GPU resumes on the CPU.
    engine.set_state(cpu, engine.get_state(gpu))
