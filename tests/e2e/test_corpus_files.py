"""Several corpus files, under mpiexec (time-limited: every job has a timeout and MPIEXEC_TIMEOUT): each file counts
by its share of the text whatever the counts of learners and pipelines, so `max_epochs` N trains N passes over
each file; pipeline_per_file keeps a pipeline per file, which reads it whole."""

import json
import random
import subprocess

import h5py
import numpy as np
import pytest

from conftest import PYTHON, ROOT, job_config, launch

# Counts, in each learner, the windows it trains by their centre word, and saves the counts as the rank ends.
COUNTING_STEP = '''
import atexit as _atexit
import os as _os

_trained_centres = np.zeros(0, dtype=np.int64)
_untouched_train_step = train_step


def train_step(model, windows):
    global _trained_centres
    found = np.bincount(windows[:, windows.shape[1] // 2])
    if len(found) > len(_trained_centres):
        _trained_centres = np.pad(_trained_centres, (0, len(found) - len(_trained_centres)))
    _trained_centres[:len(found)] += found
    return _untouched_train_step(model, windows)


@_atexit.register
def _save_trained_centres():
    if len(_trained_centres):
        np.save(f"trained_centres_{_os.getpid()}.npy", _trained_centres)
'''


def write_file(path, index, megabytes, seed):
    """About `megabytes` of lines whose 60 words belong to this file alone (they start with its letter: "a", "b",
    ...), Zipf-like."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = [letters[index] + letters[k // 26] + letters[k % 26] for k in range(60)]
    weights = [1.0 / (k + 1) for k in range(60)]
    lines, size = [], 0
    while size < megabytes * 1_000_000:
        line = " ".join(rng.choices(words, weights, k=rng.randint(8, 24)))
        lines.append(line)
        size += len(line) + 1
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def three_files(app, toy_config, tmp_path_factory):
    """Files of 0.4, 0.8 and 1.2 MB with words of their own, and a config prepared from all their text."""
    d = tmp_path_factory.mktemp("files")
    files = [write_file(d / f"part_{i}.txt", i, mb, seed=i) for i, mb in enumerate([0.4, 0.8, 1.2])]
    whole = d / "whole.txt"
    whole.write_text("".join(f.read_text() for f in files))
    subprocess.run([PYTHON, str(ROOT / "python" / "prepare.py"), str(whole), "--out", str(d / "config"),
                    "--train-out", str(d / "train.txt"), "--data-name", "parts", "--min-count", "1",
                    "--test-windows", "200", "--seed", "3", "--dim", "32"],
                   check=True, capture_output=True, text=True, timeout=60)
    return files, d / "config"


def passes_per_file(job, config_dir, cwd, files=3, learners=4):
    """Passes trained over each file: the windows the learners trained with a centre word of that file, over the
    windows of one pass over it (the checkpoint's shards, or one pipeline per file's pass)."""
    vocab = [line.split()[0] for line in (config_dir / "vocab.txt").read_text().splitlines() if line.strip()]
    file_of = np.array(["abc".find(w[0]) for w in vocab])
    counts = [np.load(p) for p in cwd.glob("trained_centres_*.npy")]
    assert len(counts) == learners, sorted(cwd.iterdir())
    trained = np.zeros(len(vocab), dtype=np.int64)
    for c in counts:
        trained[:len(c)] += c
    with h5py.File(job.out / "parts.h5", "r") as f:
        if "shards" in f:
            shards = f["shards"][:]
            per_pass = [shards[shards[:, 0] == i, 4].sum() for i in range(files)]
        else:
            per_pass = list(f["pipeline_progress"][:, 1])
    return [trained[file_of == i].sum() / per_pass[i] for i in range(files)]


@pytest.mark.parametrize("pipelines", [1, 2, 3])
def test_each_file_is_trained_max_epochs_passes_whatever_the_pipelines(pipelines, app, toy_config, three_files,
                                                                       broken_python, tmp_path):
    files, prepared = three_files
    # A shuffle pool as the default's share of a large corpus (each Batcher holds about 20 % of an epoch's
    # windows), no subsampling (every pass has the same windows).
    cfg = {"max_epochs": 2, "max_rounds": 0, "sample": 0, "bs": 256, "bpe": 20, "data_name": "parts",
           "shuffle_windows": 100000}
    config_dir = job_config(tmp_path / "config", toy_config, cfg)
    for name in ("vocab.txt", "test.txt"):
        (config_dir / name).write_text((prepared / name).read_text())
    python_dir = broken_python(COUNTING_STEP, module="engine.py")
    job = launch(app, 1 + 3 * pipelines + 4, config_dir, tmp_path / "out", files, tmp_path, python_dir,
                 extra=["--pipelines", str(pipelines)], timeout=180)
    assert job.rc == 0, job.stderr
    assert job.stats()["stopped"] == "max_epochs"
    passes = passes_per_file(job, config_dir, tmp_path)
    # 4 learners over 1, 2 or 3 pipelines: each file 2 passes, whatever its size and whichever pipelines read it.
    print(f"passes over each file, {pipelines} pipeline(s): " + ", ".join(f"{p:.3f}" for p in passes))
    assert passes == pytest.approx([2.0, 2.0, 2.0], abs=0.05), passes


def test_a_pipeline_per_file_reads_each_file_whole(app, toy_config, three_files, broken_python, tmp_path):
    files, prepared = three_files
    cfg = {"max_epochs": 1, "max_rounds": 0, "sample": 0, "bs": 256, "bpe": 20, "data_name": "parts",
           "shuffle_windows": 100000, "pipeline_per_file": True}
    config_dir = job_config(tmp_path / "config", toy_config, cfg)
    for name in ("vocab.txt", "test.txt"):
        (config_dir / name).write_text((prepared / name).read_text())
    python_dir = broken_python(COUNTING_STEP, module="engine.py")
    # The files of 0.4 and 0.8 MB, 3 learners.
    job = launch(app, 1 + 3 * 2 + 3, config_dir, tmp_path / "out", files[:2], tmp_path, python_dir, timeout=180)
    assert job.rc == 0, job.stderr
    with h5py.File(job.out / "parts.h5", "r") as f:
        assert "shards" not in f
    passes = passes_per_file(job, config_dir, tmp_path, files=2, learners=3)
    print("passes over each file, pipeline_per_file: " + ", ".join(f"{p:.3f}" for p in passes))
    # Learner l reads pipeline l mod 2: the first file's pipeline feeds two learners, and the run stops once the
    # slowest pipeline has made its pass.
    assert min(passes) == pytest.approx(1.0, abs=0.05), passes
    assert passes[0] > 3 * passes[1], passes


def test_pipeline_per_file_with_shards_is_refused(app, toy_config, three_files, tmp_path):
    files, _ = three_files
    config_dir = job_config(tmp_path / "config", toy_config, {"pipeline_per_file": True, "shard_mb": 1})
    job = launch(app, 9, config_dir, tmp_path / "out", files[:2], tmp_path, timeout=60)
    assert job.rc == 2, job.stderr
    assert ("pipeline_per_file gives each of the 2 corpus file(s) a pipeline of its own, but shard_mb cuts them into "
            "shards; set one or the other") in job.stderr
    assert json.loads((config_dir / "cfg.json").read_text())["pipeline_per_file"] is True
