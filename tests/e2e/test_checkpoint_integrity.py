"""A checkpoint is checked data: a damaged dataset, or a learner state that is not plain arrays and JSON (a crafted
pickle), is refused on --resume with one line naming the file and the dataset, the checkpoint is left as it was,
and nothing in it runs. A resume measures the test loss of the weights it read, and refuses a checkpoint whose
weights do not give the loss it recorded."""

import os
import pickle
import subprocess

import h5py
import numpy as np
import pytest

from checkpoint_seal import put_dataset, seal
from conftest import PYTHON, ROOT

ABORT_SECONDS = 30  # a refused resume ends well within this


def refused(run_job, checkpoint, dataset):
    before = checkpoint.read_bytes()
    job = run_job(6, cfg={"max_rounds": 4}, extra=["--resume"], timeout=ABORT_SECONDS + 30)
    assert job.rc != 0
    lines = [line for line in job.stderr.splitlines() if line.startswith("[fedavg] rank ")]
    assert lines and lines[0].startswith(f"[fedavg] rank 0 (Dispatcher): {checkpoint}: dataset {dataset} "), job.stderr
    assert checkpoint.read_bytes() == before
    return lines[0]


def test_a_byte_flipped_weight_dataset_is_refused(run_job, finished_copy):
    checkpoint = finished_copy.out / "toy.h5"
    with h5py.File(checkpoint, "r") as f:
        offset = f["embedding"].id.get_offset()
        size = f["embedding"].id.get_storage_size()
    assert offset is not None and size > 200
    data = bytearray(checkpoint.read_bytes())
    for i in range(offset + 100, offset + 116):
        data[i] ^= 0x5A
    checkpoint.write_bytes(bytes(data))
    line = refused(run_job, checkpoint, "embedding")
    assert line.endswith("is damaged: its values do not match their checksum")


class _RunsCode:
    """Unpickling this creates the file it names."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (str(self.path), "w"))


def test_a_crafted_pickle_as_learner_state_runs_nothing(run_job, finished_copy, tmp_path):
    checkpoint = finished_copy.out / "toy.h5"
    marker = tmp_path / "pickle_ran"
    crafted = np.frombuffer(pickle.dumps({"step": _RunsCode(marker)}), dtype=np.uint8)
    # With checksums that match, as someone crafting the file would write them: the format itself is refused.
    with h5py.File(checkpoint, "r+") as f:
        put_dataset(f, "learner_state/0", crafted)
    seal(checkpoint)
    line = refused(run_job, checkpoint, "learner_state/0")
    assert "is not a learner state in this version's format" in line
    assert not marker.exists()


@pytest.mark.parametrize("strategy", ["hogwild", "easgd", "bmuf"])
def test_a_resume_measures_the_test_loss_its_checkpoint_recorded(strategy, run_job):
    """The weights read back give the loss the checkpoint recorded, also where learners train while the
    Dispatcher checkpoints (hogwild's shared weights, easgd's rounds without a barrier)."""
    job = run_job(6, cfg={"max_rounds": 2, "strategy": strategy})
    assert job.rc == 0, job.stderr
    job = run_job(6, cfg={"max_rounds": 3, "strategy": strategy}, extra=["--resume"])
    assert job.rc == 0, job.stderr
    assert "measured, as recorded" in job.stdout


def test_a_resume_whose_weights_do_not_give_the_recorded_loss_is_refused(run_job, finished_copy, tmp_path):
    checkpoint = finished_copy.out / "toy.h5"
    test = tmp_path / "config" / "test.txt"
    lines = test.read_text().splitlines(keepends=True)
    test.write_text("".join(lines[:10]))  # another test set: another loss for the same weights
    before = checkpoint.read_bytes()
    job = run_job(6, cfg={"max_rounds": 4}, extra=["--resume"], timeout=ABORT_SECONDS + 30)
    assert job.rc != 0
    lines = [line for line in job.stderr.splitlines() if line.startswith("[fedavg] rank ")]
    expected = f"[fedavg] rank 0 (Dispatcher): {checkpoint}: the test loss of its weights is "
    assert lines and lines[0].startswith(expected), job.stderr
    assert f"the file, or the test set {test}, has changed since" in lines[0]
    assert checkpoint.read_bytes() == before


def test_a_resume_whose_metrics_file_is_gone_says_so(run_job, finished_copy):
    checkpoint = finished_copy.out / "toy.h5"
    (checkpoint.parent / "toy_metrics.csv").unlink()
    job = run_job(6, cfg={"max_rounds": 3}, extra=["--resume"])
    assert job.rc == 0, job.stderr
    metrics = checkpoint.parent / "toy_metrics.csv"
    assert f"WARNING: {metrics} is missing: its rows before round 2 are lost" in job.stderr
    assert [r["round"] for r in job.metrics()] == [2, 3]


def test_the_supervisor_does_not_restart_a_resume_of_a_damaged_checkpoint(finished_copy, app, toy_config, tmp_path):
    checkpoint = finished_copy.out / "toy.h5"
    with h5py.File(checkpoint, "r+") as f:
        f["strategy_state"].attrs["xxh3"] = np.uint64(1)  # the values no longer match their checksum
    cmd = [PYTHON, str(ROOT / "scripts" / "supervise.py"), "--restarts", "3", "--", "mpiexec", "-n", "6", str(app),
           "--config", str(tmp_path / "config"), "--out", str(checkpoint.parent), "--resume",
           str(toy_config / "train.txt")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          env={**os.environ, "MPIEXEC_TIMEOUT": "50"})
    assert proc.returncode != 0
    assert "dataset strategy_state is damaged" in proc.stderr
    assert "supervise: not restarting: the job would fail the same way again" in proc.stderr
    assert "restart 1" not in proc.stderr
