"""The recipes of docs/models.md, "Change the model": each diff in tests/python/recipes/ applies to
python/library.py, is shown verbatim in the docs, and the edited model trains on a toy corpus."""

import importlib.util
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest

import engine
import toy_corpus

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


@pytest.mark.parametrize("recipe", RECIPES)
def test_the_edited_model_trains(recipe, tmp_path, monkeypatch):
    monkeypatch.setattr(engine, "library", patched_library(tmp_path, recipe))
    train, test = toy_corpus.windows(3000, 0), toy_corpus.windows(200, 1)
    cfg = {"vocab_size": len(toy_corpus.WORDS), "dim": 32, "window": 2, "seed": 1, "model": "neg_autograd",
           "bs": 64, "counts": toy_corpus.counts(train), "device": "cpu"}
    shapes = engine.param_shapes(cfg)
    if recipe == "hidden_layer":
        assert ("hidden", (32, 32)) in shapes
    weights = np.zeros(sum(math.prod(s) for _, s in shapes), np.float32)
    model = engine.create(cfg, weights, True)
    start = engine.test_loss(model, test)
    losses = [engine.train_step(model, train[i * 64:(i + 1) * 64]) for i in range(200)]
    assert np.mean(losses[-20:]) < 0.6 * np.mean(losses[:5]), losses
    assert engine.test_loss(model, test) < 0.6 * start
    # The edited model resumes from a checkpoint like any other.
    again = engine.create(cfg, weights.copy(), False)
    engine.set_state(again, engine.get_state(model))
    assert engine.train_step(again, train[:64]) == engine.train_step(model, train[:64])
