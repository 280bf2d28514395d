"""A model edited in library.py alone runs under mpiexec (time-limited by run_job) with --python DIR: its extra
parameter travels through every strategy, the checkpoint, --resume and the outputs; bad model code ends the job
quickly, naming the rank, its role and the model's function, and leaves no half-written file behind."""

import shutil
import subprocess
import time

import h5py
import numpy as np
import pytest

from conftest import ROOT, within

RECIPES = ROOT / "tests" / "python" / "recipes"
LIMIT = 60  # seconds a failing job may take, start-up included


@pytest.fixture
def edited_python(tmp_path):
    """edited_python(recipe) -> a copy of python/ whose library.py has tests/python/recipes/<recipe>.diff applied."""

    def make(recipe):
        d = tmp_path / f"python_{recipe}"
        shutil.copytree(ROOT / "python", d, ignore=shutil.ignore_patterns("__pycache__"))
        subprocess.run(["patch", "--quiet", "--no-backup-if-mismatch", str(d / "library.py"),
                        str(RECIPES / f"{recipe}.diff")], check=True, timeout=30)
        return d

    return make


STRATEGIES = {
    "fedavg": {"strategy": "fedavg"},
    "bsp": {"strategy": "bsp"},
    "bmuf": {"strategy": "bmuf", "block_momentum": 0.5, "block_lr": 1.0},
    "easgd": {"strategy": "easgd"},
    "hogwild": {"strategy": "hogwild"},
}


def check_outputs(job, vocab_size):
    with h5py.File(job.out / "toy.h5", "r") as f:
        assert {"embedding", "hidden", "out_vectors"} <= set(f.keys())
        assert f["hidden"].shape == (32, 32) and f["embedding"].shape == (vocab_size, 32)
        assert np.isfinite(f["hidden"][...]).all()
        assert not np.allclose(f["hidden"][...], np.eye(32))      # it trained
        exported = f["embedding"][...]
    emb = np.loadtxt(job.out / "toy_embeddings.txt", dtype=np.float32)
    np.testing.assert_allclose(emb, exported, rtol=1e-5, atol=1e-6)   # the input embedding is what is exported
    lines = (job.out / "toy.w2v.txt").read_text().splitlines()
    assert lines[0].split() == [str(vocab_size), "32"] and len(lines) == vocab_size + 1


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_every_strategy_trains_a_model_with_an_extra_parameter(name, run_job, edited_python, toy_config):
    vocab_size = len((toy_config / "config" / "vocab.txt").read_text().split("\n")) - 1
    python = edited_python("hidden_layer")
    job = run_job(6, cfg={"model": "neg_autograd", **STRATEGIES[name]}, python_dir=python)
    assert job.rc == 0, job.stderr
    # The start-up line names the model that runs and where it came from; the edited class is the selected one.
    assert f"model neg_autograd (NegCBOW in {python / 'library.py'})" in job.stdout
    assert "WARNING" not in job.stderr
    losses = [r["test_loss"] for r in job.metrics()]
    assert losses[-1] < losses[0] - 0.3, losses
    check_outputs(job, vocab_size)


def test_an_edit_of_a_model_the_run_does_not_select_is_warned_of(run_job, edited_python):
    """The recipes edit NegCBOW (neg_autograd); the default model is the fused neg."""
    python = edited_python("sum_context")
    job = run_job(5, cfg={"max_rounds": 1}, python_dir=python)
    assert job.rc == 0, job.stderr
    # The copy's own runtime/ runs it: the package of the --python folder, first on sys.path.
    assert f"model neg (FusedNegCBOW in {python / 'runtime' / 'fused_neg.py'})" in job.stdout
    warning = next(line for line in job.stderr.splitlines() if "WARNING" in line)
    assert f"{python / 'library.py'} edits NegCBOW (model neg_autograd), but this run trains model neg" in warning
    assert "--model neg_autograd" in warning


def test_an_edited_model_with_adam_resumes_from_its_checkpoint(run_job, edited_python, tmp_path):
    """Adam keeps per-row state for the tables: it goes into the checkpoint and comes back with --resume."""
    python = tmp_path / "python_both"
    shutil.copytree(edited_python("hidden_layer"), python)
    subprocess.run(["patch", "--quiet", "--no-backup-if-mismatch", str(python / "library.py"),
                    str(RECIPES / "adam.diff")], check=True, timeout=30)
    # Six rounds on resume: two learners' Adam steps on a shared copy interleave by timing, and over fewer rounds
    # the toy's test loss can stall near its floor.
    cfg = {"model": "neg_autograd", "max_rounds": 9}
    job = run_job(6, cfg=cfg, python_dir=python, extra=["--inject-fault", "0:4:exception"])
    assert job.rc != 0
    with h5py.File(job.out / "toy.h5", "r") as f:
        assert int(f.attrs["round"]) == 3 and f["hidden"].shape == (32, 32)
        assert all(len(f["learner_state"][k][...]) > 0 for k in f["learner_state"])
    job = run_job(6, cfg=cfg, python_dir=python, extra=["--resume"])
    assert job.rc == 0, job.stderr
    rows = job.metrics()
    assert [int(r["round"]) for r in rows] == list(range(10))
    assert rows[9]["test_loss"] < rows[3]["test_loss"] < rows[0]["test_loss"] - 0.3, rows


# Appended to library.py: a model "bad" that is NegCBOW with one function broken.
BAD = {
    "shape": ("Bad.params", "gave shape (3, 3), declared (32, 32)", """
class Bad(NegCBOW):
    def params(self):
        d = self.cfg["dim"]
        return {**super().params(), "hidden": Dense(d, d, init=lambda t: torch.ones(3, 3))}
"""),
    "nan": ("Bad.loss", "Bad.loss is nan at step 0", """
class Bad(NegCBOW):
    def loss(self, p, context, target, noise):
        return super().loss(p, context, target, noise) * float("nan")
"""),
    "not_scalar": ("Bad.loss", "Bad.loss must return a scalar tensor", """
class Bad(NegCBOW):
    def loss(self, p, context, target, noise):
        return p.embedding[context].sum(-1)
"""),
    "raises": ("Bad.loss", "RuntimeError: injected in the forward", """
class Bad(NegCBOW):
    def loss(self, p, context, target, noise):
        raise RuntimeError("injected in the forward")
"""),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_model_code_ends_the_job_naming_the_function(case, run_job, broken_python):
    function, message, code = BAD[case]
    t0 = time.monotonic()
    job = run_job(6, cfg={"model": "bad"}, python_dir=broken_python(code + 'MODELS["bad"] = Bad\n'),
                  timeout=LIMIT + 30)
    took = time.monotonic() - t0
    assert job.rc != 0
    first = next(line for line in job.stderr.splitlines() if line.startswith("[fedavg] rank "))
    assert " (Learner): " in first or " (Dispatcher): " in first, job.stderr
    assert function in first and message in job.stderr, job.stderr
    if case == "raises":
        assert "Traceback (most recent call last)" in job.stderr and 'raise RuntimeError("injected' in job.stderr
    assert took < within(LIMIT)
    # Nothing half-written: no temporary file; what is there is whole.
    written = list(job.out.iterdir()) if job.out.exists() else []
    assert not [p for p in written if p.name.endswith(".tmp")], written
    for p in written:
        if p.suffix == ".csv":
            rows = p.read_text().splitlines()
            assert len({len(r.split(",")) for r in rows}) == 1, rows
        elif p.suffix == ".h5":
            h5py.File(p, "r").close()
