"""End to end under mpiexec: every failure ends the whole job quickly, naming the rank, its role and why."""

import re
import time

import h5py
import pytest

from conftest import within

LIMIT = 60  # seconds a failing job may take, start-up included


def timed(run_job, *args, **kwargs):
    t0 = time.monotonic()
    job = run_job(*args, timeout=LIMIT + 30, **kwargs)
    return job, time.monotonic() - t0


def test_too_few_ranks_names_the_smallest_count(run_job, toy_config, tmp_path):
    job, took = timed(run_job, 8, corpora=[toy_config / "train.txt", toy_config / "train.txt"])
    assert job.rc != 0
    assert "at least -n 9" in job.stderr
    assert job.stderr.count("at least -n 9") == 1
    assert took < within(LIMIT)
    # The other way out it names works.
    assert "(--pipelines 1 fits -n 8)" in job.stderr
    job = run_job(8, corpora=[toy_config / "train.txt", toy_config / "train.txt"], extra=["--pipelines", "1"])
    assert job.rc == 0, job.stderr


@pytest.mark.smoke
@pytest.mark.parametrize("where,code,role", [
    ("learner", "def train_step(model, windows):\n    raise RuntimeError('injected in train_step')",
     "Learner"),
    ("dispatcher", "def test_loss(model, windows):\n    raise RuntimeError('injected in test_loss')",
     "Dispatcher"),
])
def test_python_exception_ends_the_job_with_traceback(run_job, broken_python, where, code, role):
    job, took = timed(run_job, 6, python_dir=broken_python(code, module="engine.py"))
    assert job.rc != 0
    assert f"({role}): engine." in job.stderr
    assert "RuntimeError: injected in" in job.stderr
    assert "Traceback (most recent call last)" in job.stderr
    assert took < within(LIMIT)


def test_tokenizer_exception_names_the_tokenizer(run_job, broken_python):
    code = ("def _boom(self, data):\n    raise UnicodeError('injected in tokenize')\n"
            "Tokenizer.tokenize = _boom")
    job, took = timed(run_job, 5, python_dir=broken_python(code, module="textpipe.py"))
    assert job.rc != 0
    assert "rank 1 (Tokenizer)" in job.stderr
    assert "UnicodeError: injected in tokenize" in job.stderr
    assert took < within(LIMIT)


@pytest.mark.parametrize("code,expected", [
    ("import no_such_module_xyz", "engine.param_shapes: ModuleNotFoundError: No module named 'no_such_module_xyz'"),
    ("class Bad(NegCBOW):\n    def optimizer(self, params):\n        return torch.optim.Adam(params, lr=0.1)\n"
     "MODELS['neg_autograd'] = Bad", "engine.create: runtime.trainer.ModelError: Bad.optimizer: TypeError"),
])
def test_model_code_that_fails_at_start_up_is_reported_once(run_job, broken_python, code, expected):
    """Every rank that runs the model fails alike: rank 0 reports it, with the traceback into library.py."""
    job, took = timed(run_job, 6, cfg={"model": "neg_autograd"}, python_dir=broken_python(code))
    assert job.rc != 0
    lines = [ln for ln in job.stderr.splitlines() if ln.startswith("[fedavg] rank ")]
    assert len(lines) == 1 and lines[0].startswith(f"[fedavg] rank 0 (Dispatcher): {expected}"), job.stderr
    assert "library.py" in job.stderr  # the traceback
    assert took < within(LIMIT)


def test_killed_learner_ends_the_job(run_job, broken_python):
    code = "import os, signal\ndef train_step(model, windows):\n    os.kill(os.getpid(), signal.SIGKILL)"
    job, took = timed(run_job, 6, python_dir=broken_python(code, module="engine.py"))
    assert job.rc != 0
    assert re.search(r"\[fedavg\] rank [45] \(Learner\): killed by signal 9", job.stderr), job.stderr
    assert took < within(LIMIT)


@pytest.mark.parametrize("how", ["raise", "kill"])
def test_hogwild_learner_failure_ends_the_job(run_job, broken_python, how):
    """A hogwild learner fails in a step while it shares the weights with the others: the job still ends at once
    (the shared window is not freed collectively while an error unwinds)."""
    code = {"raise": "def train_step(model, windows):\n    raise RuntimeError('injected in train_step')",
            "kill": "import os, signal\ndef train_step(model, windows):\n    os.kill(os.getpid(), signal.SIGKILL)"}
    job, took = timed(run_job, 7, cfg={"strategy": "hogwild", "max_rounds": 100},
                      python_dir=broken_python(code[how], module="engine.py"))
    assert job.rc != 0
    if how == "raise":
        assert "(Learner): engine.train_step" in job.stderr and "injected in train_step" in job.stderr
    else:
        assert re.search(r"\[fedavg\] rank [456] \(Learner\): killed by signal 9", job.stderr), job.stderr
    assert took < within(LIMIT)


def test_missing_corpus_names_the_file(run_job, tmp_path):
    job, took = timed(run_job, 5, corpora=[tmp_path / "nope.txt"])
    assert job.rc != 0
    assert "rank 1 (Tokenizer): corpus" in job.stderr and "nope.txt: cannot open" in job.stderr
    assert took < within(LIMIT)


def test_corpus_without_vocabulary_words_fails_instead_of_spinning(run_job, tmp_path):
    corpus = tmp_path / "foreign.txt"
    corpus.write_text("lorem ipsum dolor sit amet\n" * 100)
    job, took = timed(run_job, 5, corpora=[corpus])
    assert job.rc != 0
    assert "not one word of the file is in the vocabulary" in job.stderr
    assert took < within(LIMIT)


def test_unwritable_output_folder(app, toy_config, tmp_path):
    import os
    import subprocess
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    proc = subprocess.run(["mpiexec", "-n", "5", str(app), "--config", str(toy_config / "config"),
                           "--out", str(blocker / "out"), str(toy_config / "train.txt")],
                          capture_output=True, text=True, timeout=LIMIT, env={**os.environ, "MPIEXEC_TIMEOUT": "50"})
    assert proc.returncode != 0
    assert "rank 0 (Dispatcher): output folder" in proc.stderr


def test_diverging_weights_end_the_job_and_keep_the_last_checkpoint(run_job):
    # bmuf's outer step 10 x (x - average) with momentum 0.9 blows the weights up within a few rounds; the
    # learners' own steps stay finite, so it is the Dispatcher's test loss that must catch it.
    job, took = timed(run_job, 6, cfg={"strategy": "bmuf", "block_lr": 10, "block_momentum": 0.9,
                                       "max_rounds": 200})
    assert job.rc != 0
    line = next(ln for ln in job.stderr.splitlines() if "the weights diverged" in ln)
    assert "rank 0 (Dispatcher): test loss" in line
    assert "(lower lr, block_lr or block_momentum)" in line
    rows = job.metrics()
    last = rows[-1]
    assert last["test_loss"] > 10 * rows[0]["test_loss"] or last["test_loss"] != last["test_loss"]
    kept = int(line.rsplit("the checkpoint of round ", 1)[1].split()[0])
    assert kept == int(last["round"]) - 1
    with h5py.File(job.out / "toy.h5", "r") as f:
        assert f.attrs["round"] == kept
        assert f.attrs["test_loss"] < 10 * rows[0]["test_loss"]
    assert took < within(LIMIT)
