"""Nothing finished is lost, and the outputs stand alone, under mpiexec (time-limited by run_job): a second run
into a folder that holds a run refuses and changes no byte; --overwrite replaces it, and a kill before the new
run's first checkpoint leaves the old run whole; the HDF5 file carries the vocabulary as text, its counters as
integers; round 0 has no train loss; the binary word2vec file loads in gensim."""

import hashlib
import json
import math
import os
import shutil
import signal
import subprocess
import time

import h5py
import numpy as np
import pytest

from conftest import JOB_TIMEOUT, within


def snapshot(folder):
    """{relative path: sha256} of every file under `folder` but its lock (.lock, which names the last job that
    held the folder, whatever it did)."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != ".lock"}


def run_snapshot(folder):
    """snapshot(folder) less the token cache (cache/), which belongs to no run: --overwrite leaves it in place for
    the runs that follow."""
    return {k: v for k, v in snapshot(folder).items() if not k.startswith("cache/")}


def test_a_second_run_without_resume_refuses_and_changes_nothing(run_job, finished_copy):
    first = finished_copy  # run_job(6, cfg={"max_rounds": 2})
    before = snapshot(first.out)
    again = run_job(5, cfg={"max_rounds": 3}, out=first.out, timeout=JOB_TIMEOUT)
    assert again.rc != 0
    assert "holds an earlier run" in again.stderr
    assert "--resume" in again.stderr and "--overwrite" in again.stderr
    assert snapshot(first.out) == before
    # --resume of the finished run: it says the run is complete and how to extend it, at once, and changes nothing.
    t0 = time.monotonic()
    done = run_job(5, cfg={"max_rounds": 2}, extra=["--resume"], timeout=JOB_TIMEOUT)
    assert done.rc == 0, done.stderr
    assert f"the run in {first.out} is complete" in done.stdout
    assert "--resume --max-rounds N, with N above 2" in done.stdout and "--init-from" in done.stdout
    assert time.monotonic() - t0 < within(10)
    assert snapshot(first.out) == before


def test_overwrite_replaces_the_run_and_a_kill_before_its_checkpoint_loses_nothing(run_job, finished_copy):
    first = finished_copy  # run_job(6, cfg={"max_rounds": 2})
    finished = run_snapshot(first.out)
    # The replacing run dies in round 1, before its first checkpoint: the first run is whole in .previous.
    killed = run_job(5, cfg={"max_rounds": 3}, extra=["--overwrite", "--inject-fault", "0:1:kill"], timeout=JOB_TIMEOUT)
    assert killed.rc != 0
    assert snapshot(first.out / ".previous") == finished
    assert list((first.out / "cache").glob("*.ids"))  # the token cache stays where runs find it
    # It dies while writing its first checkpoint (after the temporary file, before the rename): still whole.
    killed = run_job(5, cfg={"max_rounds": 3}, extra=["--overwrite", "--inject-fault", "0:1:kill_in_checkpoint"],
                     timeout=JOB_TIMEOUT)
    assert killed.rc != 0
    assert snapshot(first.out / ".previous") == finished
    # A plain run still refuses: the folder holds what an interrupted --overwrite set aside.
    refused = run_job(5, cfg={"max_rounds": 3}, out=first.out, timeout=JOB_TIMEOUT)
    assert refused.rc != 0 and ".previous" in refused.stderr
    # Once a replacing run has its checkpoint, the old run goes.
    done = run_job(5, cfg={"max_rounds": 3}, extra=["--overwrite"], timeout=JOB_TIMEOUT)
    assert done.rc == 0, done.stderr
    assert not (first.out / ".previous").exists()
    assert done.stats()["rounds"] == "3"
    assert [r["round"] for r in done.metrics()] == [0, 1, 2, 3]


def test_the_hdf5_file_stands_alone(finished_run, toy_config):
    job = finished_run  # run_job(6, cfg={"max_rounds": 2})
    words = [line.split()[0] for line in (toy_config / "config" / "vocab.txt").read_text().splitlines()]
    with h5py.File(job.out / "toy.h5", "r") as f:
        vocabulary = [w.decode() if isinstance(w, bytes) else w for w in f["vocabulary"].asstr()[...]]
        assert vocabulary == words
        assert f["embedding"].shape[0] == len(words)
        assert isinstance(f.attrs["data_name"], str) and f.attrs["data_name"] == "toy"
        assert isinstance(f.attrs["strategy"], str) and f.attrs["strategy"] == "fedavg"
        for counter in ("round", "windows_per_learner", "sync_bytes"):
            assert np.issubdtype(np.asarray(f.attrs[counter]).dtype, np.integer), counter
        assert f.attrs["windows_per_learner"] == 2 * 5 * 64  # two learners share a round's 10 batches
    rows = job.metrics()
    assert math.isnan(rows[0]["train_loss"]) and not math.isnan(rows[1]["train_loss"])


def test_binary_word2vec_loads_in_gensim_like_the_text_one(finished_run):
    gensim_models = pytest.importorskip("gensim.models")
    job = finished_run
    text = gensim_models.KeyedVectors.load_word2vec_format(str(job.out / "toy.w2v.txt"), binary=False)
    binary = gensim_models.KeyedVectors.load_word2vec_format(str(job.out / "toy.w2v.bin"), binary=True)
    assert list(binary.index_to_key) == list(text.index_to_key)
    np.testing.assert_allclose(binary.vectors, text.vectors, rtol=1e-6, atol=1e-7)


def test_outputs_never_follow_a_link_planted_in_the_output_folder(run_job, tmp_path):
    """A link where a run writes its temporaries (or its write probe) is replaced, not followed: the file it
    points to is untouched, and every output is a regular file of the run."""
    victim = tmp_path / "victim.txt"
    victim.write_text("not yours\n")
    out = tmp_path / "out"
    out.mkdir()
    planted = ["toy_metrics.csv.tmp", "toy.w2v.txt.tmp", "toy.w2v.bin.tmp", "toy_embeddings.txt.tmp",
               "toy_stats.txt.tmp", ".fedavg_write_test"]
    for name in planted:
        (out / name).symlink_to(victim)
    job = run_job(6, cfg={"max_rounds": 2}, out=out)
    assert job.rc == 0, job.stderr
    assert victim.read_text() == "not yours\n"
    for name in ("toy_metrics.csv", "toy.w2v.txt", "toy.w2v.bin", "toy_embeddings.txt", "toy_stats.txt"):
        assert (out / name).is_file() and not (out / name).is_symlink(), name
    assert not any((out / name).is_symlink() for name in planted)


@pytest.mark.parametrize("name", ["toy.h5", "toy.h5.tmp"])
def test_an_output_that_is_a_link_is_refused(name, run_job, finished_copy, tmp_path):
    elsewhere = tmp_path / "elsewhere.h5"
    if name == "toy.h5":
        (finished_copy.out / name).rename(elsewhere)
    else:
        elsewhere.write_bytes(b"not a checkpoint")
    (finished_copy.out / name).symlink_to(elsewhere)
    before = elsewhere.read_bytes()
    job = run_job(6, cfg={"max_rounds": 3}, extra=["--resume"])
    assert job.rc == 2, job.stderr
    assert f"{name} is a link" in job.stderr, job.stderr
    assert elsewhere.read_bytes() == before


def test_a_second_job_on_the_same_output_folder_is_refused_naming_the_first(app, toy_config, tmp_path, run_job):
    """One job at a time in an output folder: a second one is refused at once, naming the first's process and
    host, and the first goes on to its end with every output."""
    cfg_dir = tmp_path / "config"
    shutil.copytree(toy_config / "config", cfg_dir)
    cfg = json.loads((cfg_dir / "cfg.json").read_text())
    cfg.update({"bpe": 10, "bs": 64, "target": 0.0, "max_rounds": 100000, "max_seconds": 60, "progress_seconds": 0})
    (cfg_dir / "cfg.json").write_text(json.dumps(cfg))
    out = tmp_path / "out"
    first = subprocess.Popen(["mpiexec", "-n", "6", str(app), "--config", str(cfg_dir), "--out", str(out),
                              str(toy_config / "train.txt")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env={**os.environ, "MPIEXEC_TIMEOUT": "80"})
    try:
        deadline = time.monotonic() + within(40)
        while time.monotonic() < deadline and not (out / "toy.h5").exists():  # the first job is training
            time.sleep(0.2)
        second = run_job(6, config_dir=cfg_dir, out=out, extra=["--overwrite"], timeout=60)
        first.send_signal(signal.SIGTERM)
        stdout, stderr = first.communicate(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
    assert second.rc == 2, second.stderr
    assert f"output folder {out} is in use by another job (pid " in second.stderr, second.stderr
    assert first.returncode == 128 + signal.SIGTERM, stderr
    assert "stopped=SIGTERM" in (out / "toy_stats.txt").read_text()
    rows = (out / "toy_metrics.csv").read_text().splitlines()
    assert [int(r.split(",")[0]) for r in rows[1:]] == list(range(len(rows) - 1))  # the first job's, whole
