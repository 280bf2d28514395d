"""The recipes of docs/models.md, "Change the model": each diff in tests/python/recipes/ applies to
python/library.py, is shown verbatim in the docs, and the edited model trains on a toy corpus."""

import importlib.util
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import engine
import library
import toy_corpus
from blocks import negative_sampling
from modeling import Dense

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
RECIPES = sorted(p.stem for p in (HERE / "recipes").glob("*.diff"))


def patched_library(tmp_path, recipe):
    """python/library.py with the recipe applied by patch(1), imported as a module of its own."""
    lib = tmp_path / "library.py"
    lib.write_text((ROOT / "python" / "library.py").read_text())
    subprocess.run(["patch", "--quiet", "--no-backup-if-mismatch", str(lib), str(HERE / "recipes" / f"{recipe}.diff")],
                   check=True, timeout=30)
    spec = importlib.util.spec_from_file_location(f"library_{recipe}", lib)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_four_recipes_are_there():
    assert RECIPES == ["adam", "full_softmax", "hidden_layer", "sum_context"]


@pytest.mark.parametrize("recipe", RECIPES)
def test_docs_show_the_recipe_verbatim(recipe):
    diff = (HERE / "recipes" / f"{recipe}.diff").read_text()
    assert diff in (ROOT / "docs" / "models.md").read_text()
    changed = [ln for ln in diff.splitlines()[2:] if ln[:1] in "+-"]
    assert len(changed) <= 13, changed          # a few lines of PyTorch, not a rewrite


TRAIN, TEST = toy_corpus.windows(3000, 0), toy_corpus.windows(200, 1)
CFG = {"vocab_size": len(toy_corpus.WORDS), "dim": 32, "window": 2, "seed": 1, "model": "neg_autograd", "bs": 64,
       "counts": toy_corpus.counts(TRAIN), "device": "cpu"}
STEPS, EVERY = 200, 20


def train_passes(model, bs=64):
    """The losses of STEPS steps of `bs` windows over TRAIN, and the test loss before the first and after every
    EVERY steps."""
    steps, tests = [], [engine.test_loss(model, TEST)]
    batches = len(TRAIN) // bs
    for k in range(STEPS):
        i = k % batches * bs
        steps.append(engine.train_step(model, TRAIN[i:i + bs]))
        if (k + 1) % EVERY == 0:
            tests.append(engine.test_loss(model, TEST))
    return steps, tests


def size(cfg):
    """The weight buffer's length for `cfg`'s model."""
    return sum(math.prod(s) for _, s in engine.param_shapes(cfg))


@pytest.fixture(scope="module")
def unedited_test_losses():
    weights = np.zeros(size(CFG), np.float32)
    return train_passes(engine.create(CFG, weights, True))[1]


@pytest.mark.parametrize("recipe", RECIPES)
def test_the_edited_model_trains(recipe, tmp_path, monkeypatch, unedited_test_losses):
    monkeypatch.setitem(sys.modules, "library", patched_library(tmp_path, recipe))
    train, cfg = TRAIN, CFG
    shapes = engine.param_shapes(cfg)
    if recipe == "hidden_layer":
        assert ("hidden", (32, 32)) in shapes
    weights = np.zeros(sum(math.prod(s) for _, s in shapes), np.float32)
    model = engine.create(cfg, weights, True)
    losses, tests = train_passes(model)
    assert np.mean(losses[-20:]) < 0.6 * np.mean(losses[:5]), losses
    assert tests[-1] < 0.6 * tests[0], tests
    # It keeps learning: the last pass leaves the test loss at its lowest (a rate too high for the edit climbs).
    assert tests[-1] <= 1.05 * min(tests), tests
    # And it learns about as well as the model it edits (the full softmax's loss is another measure).
    if recipe != "full_softmax":
        assert tests[-1] < 1.2 * unedited_test_losses[-1], (tests, unedited_test_losses)
    # The edited model resumes from a checkpoint like any other.
    again = engine.create(cfg, weights.copy(), False)
    engine.set_state(again, engine.get_state(model))
    assert engine.train_step(again, train[:64]) == engine.train_step(model, train[:64])


class WeightPerPosition(library.NegCBOW):
    """NegCBOW with a learned weight per context position: a Dense parameter that every window uses."""

    def params(self):
        return {**super().params(), "position": Dense(2 * self.cfg["window"], init=torch.nn.init.ones_)}

    def loss(self, p, context, target, noise):
        h = (p.embedding[context] * p.position[:, None]).mean(1)
        return negative_sampling(h, p.out_vectors, target, noise)


def test_sgd_groups_give_a_parameter_every_window_uses_the_rate_lr():
    model = WeightPerPosition({**CFG, "bs": 1024})
    params = {name: torch.zeros(kind.shape) for name, kind in model.params().items()}
    rate = {name: g["lr"] for g in model.sgd_groups(params) for name, t in params.items()
            if any(t is q for q in g["params"])}
    assert rate == {"embedding": 0.1 * 1024 * 4, "out_vectors": 0.1 * 1024, "position": 0.1}, rate


@pytest.mark.parametrize("edit", ["weight per position", "hidden_layer"])
def test_a_parameter_every_window_uses_trains_at_a_large_batch(edit, tmp_path, monkeypatch):
    """At bs 1024 such a parameter at lr * bs (102.4) saturated and the loss diverged or stalled near 3.4; at lr
    both edits learn about as well as the model they edit."""
    unedited = train_passes(engine.create({**CFG, "bs": 1024}, np.zeros(size(CFG), np.float32), True), 1024)[1]
    if edit == "hidden_layer":
        monkeypatch.setitem(sys.modules, "library", patched_library(tmp_path, edit))
        cfg = {**CFG, "bs": 1024}
    else:
        monkeypatch.setattr(library, "MODELS", {**library.MODELS, "position": WeightPerPosition})
        cfg = {**CFG, "bs": 1024, "model": "position"}
    tests = train_passes(engine.create(cfg, np.zeros(size(cfg), np.float32), True), 1024)[1]
    assert tests[-1] < 1.2 * unedited[-1], (tests, unedited)
    assert max(tests[1:]) < tests[0], tests  # it never climbs above the untrained model's loss
